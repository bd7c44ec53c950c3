/**
 * The answer as Markdown, safely: react-markdown with GitHub tables and lists (remark-gfm); raw
 * HTML from the model is shown as text, never run (react-markdown turns it into text unless a raw
 * plugin is added, and none is); links go through react-markdown's URL filter (no `javascript:`)
 * and open in a new tab without the page's opener. While streaming, the unfinished tail is made
 * steady first (data/markdown.ts), so the text does not jump when a construct closes.
 */
import { memo } from "react";
import ReactMarkdown, { type Components } from "react-markdown";
import remarkGfm from "remark-gfm";
import { steadyMarkdown } from "../data/markdown";

const components: Components = {
  a: ({ href, children }) => (
    <a href={href} target="_blank" rel="noopener noreferrer nofollow">
      {children}
    </a>
  ),
  // Wide tables scroll inside the answer instead of widening the page.
  table: ({ children }) => (
    <div className="md-table">
      <table>{children}</table>
    </div>
  ),
  img: ({ alt }) => <span className="muted">[image: {alt}]</span>,
};

const plugins = [remarkGfm];

export const Markdown = memo(function Markdown({ text, streaming }: { text: string; streaming: boolean }) {
  return (
    <div className="markdown">
      <ReactMarkdown remarkPlugins={plugins} components={components}>
        {streaming ? steadyMarkdown(text) : text}
      </ReactMarkdown>
    </div>
  );
});

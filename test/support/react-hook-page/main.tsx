/**
 * A minimal chat page on LangChain's React hook (`useStream` from @langchain/react, Agent Streaming
 * Protocol v2), for test/e2e/react-hook-page.e2e.ts only — never shipped. It reads the API URL and
 * a Firebase ID token from the URL's hash (`#api=…&token=…`, which the browser never sends to a
 * server), and shows one text box, a Send button, the streamed messages (questions and answers'
 * text; tool calls and tool results left out), a "rows: N" line from Quarry's `result` event
 * (custom channel `custom:result`), and the hook's error if any.
 */
import { useStream, useExtension } from "@langchain/react";
import { useMemo, useState, type FormEvent } from "react";
import { createRoot } from "react-dom/client";
import type { QuarryEvent } from "../../../functions/src/contract";

type ResultEvent = Extract<QuarryEvent, { type: "result" }>;

const params = new URLSearchParams(location.hash.slice(1));
const apiUrl = params.get("api") ?? "";
const token = params.get("token") ?? "";

function errorText(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

function App() {
  // One headers object for the page's life: a new one each render would rebuild the hook's client.
  const defaultHeaders = useMemo(() => ({ authorization: `Bearer ${token}` }), []);
  const stream = useStream({ apiUrl, assistantId: "quarry", defaultHeaders });
  const result = useExtension<ResultEvent>(stream, "result");
  const [draft, setDraft] = useState("");

  const send = (e: FormEvent) => {
    e.preventDefault();
    const content = draft.trim();
    if (!content) return;
    setDraft("");
    void stream.submit({ messages: [{ type: "human", content }] });
  };

  return (
    <main data-thread-id={stream.threadId ?? ""} data-loading={String(stream.isLoading)}>
      <form onSubmit={send}>
        <input aria-label="Question" value={draft} onChange={(e) => setDraft(e.target.value)} />
        <button type="submit" disabled={stream.isLoading}>
          Send
        </button>
      </form>
      <ol aria-label="Messages">
        {stream.messages
          .filter((m) => (m.type === "human" || m.type === "ai") && m.text)
          .map((m, i) => (
            <li key={m.id ?? i} data-type={m.type}>
              {m.text}
            </li>
          ))}
      </ol>
      {result ? <p aria-label="Result">rows: {result.rows.length}</p> : null}
      {stream.error ? <p role="alert">{errorText(stream.error)}</p> : null}
    </main>
  );
}

createRoot(document.getElementById("root")!).render(<App />);

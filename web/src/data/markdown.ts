/**
 * Markdown that is still being written, made steady for display: while tokens stream, a construct
 * the model has opened but not yet closed would render as raw syntax and then jump into shape
 * ("**Reven" → "Reven" in bold, a table row half-typed). These helpers hold back or close such a
 * tail so each render is already the shape the finished text will have. Pure, unit-tested.
 */

/** Closes or holds back what the tail of a streaming answer has opened but not finished. */
export function steadyMarkdown(text: string): string {
  let out = text;
  // A line still being typed that starts a table row or a heading/list marker alone: wait for its end.
  const cut = out.lastIndexOf("\n") + 1;
  const tail = out.slice(cut);
  if (/^\s*\|/.test(tail) || /^\s*([-*+]|#{1,6}|\d+[.)])?\s*$/.test(tail)) out = out.slice(0, cut);
  // A table whose delimiter row has not arrived yet would show its header as "| a | b |" text.
  const blockStart = out.lastIndexOf("\n\n") + 1;
  const lines = out
    .slice(blockStart)
    .split("\n")
    .filter((l) => l.trim());
  const delimiter = (l: string | undefined) => !!l && /^\s*\|?[\s:|-]+\|?\s*$/.test(l) && l.includes("-");
  if (lines.length && lines.every((l) => /^\s*\|/.test(l)) && !delimiter(lines[1])) {
    out = out.slice(0, blockStart);
  }
  // An open code fence: close it, so the code shows as code while it arrives.
  const fences = out.match(/^\s*```/gm)?.length ?? 0;
  if (fences % 2 === 1) return `${out}\n\`\`\``;
  // A link whose target is not complete yet: show its text only once it is.
  out = out.replace(/\[[^\]\n]*(\]\([^)\s]*)?$/, "");
  // Inline markers opened in the last paragraph (outside code spans): close them.
  const para = out.slice(out.lastIndexOf("\n\n") + 1);
  const noCode = para.replace(/`[^`\n]*`/g, "");
  if ((noCode.match(/`/g)?.length ?? 0) % 2 === 1) return `${out}\``;
  let closing = "";
  const bold = noCode.match(/\*\*/g)?.length ?? 0;
  if (bold % 2 === 1) closing += "**";
  // Single stars, leaving out bold pairs and list bullets ("* item").
  const italics =
    noCode
      .replace(/\*\*/g, "")
      .replace(/^\s*\*\s/gm, "")
      .match(/\*/g)?.length ?? 0;
  if (italics % 2 === 1) closing = `*${closing}`;
  // A marker right at the end ("**") has nothing to wrap yet: drop it rather than close it empty.
  if (closing && /(^|\s)\*+$/.test(out)) return out.replace(/\s*\*+$/, "");
  return out.replace(/[ \t]+$/, "") + closing;
}

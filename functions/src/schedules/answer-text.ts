/**
 * What a scheduled answer's text says in a line or a few (pure): the summary on the schedule, the
 * notification and mail body, the webhook message. An answer is Markdown and may open with a code
 * block (the SQL), a table or a heading: the prose is what a person reads first.
 */

/** A code fence's opening or closing line. */
const FENCE = /^(```|~~~)/;

/**
 * The answer's first prose lines: code blocks, table lines, rules and blank lines dropped, heading
 * marks removed; at most `max` lines.
 */
export function proseLines(markdown: string, max: number): string[] {
  const prose: string[] = [];
  let inFence = false;
  for (const raw of markdown.split(/\r?\n/)) {
    const line = raw.trim();
    if (FENCE.test(line)) {
      inFence = !inFence;
      continue;
    }
    if (inFence || !line || line.startsWith("|") || /^[-:| ]+$/.test(line)) continue;
    prose.push(line.replace(/^#+\s*/, ""));
    if (prose.length === max) break;
  }
  return prose;
}

/** The answer's first prose line, cut at `chars` characters; "" when it has none. */
export function firstProseLine(markdown: string, chars = 500): string {
  return (proseLines(markdown, 1)[0] ?? "").slice(0, chars);
}

/**
 * Which of the generator's follow-up questions the person may be offered: a question may name a
 * table or column (`orders.channel`, `order_date`, `` `x` ``) only if the prompt that wrote it
 * showed that name — and the prompt holds only what the person's context and scope let through.
 * Plain-word questions ("Revenue by channel last year?") always pass.
 */

/** Names that look like identifiers: dotted paths, snake_case words, anything in backticks. */
const IDENTIFIER = /`([^`]+)`|\b([A-Za-z_][\w$]*(?:\.[A-Za-z_][\w$]*)+)\b|\b([A-Za-z][A-Za-z0-9]*_[\w$]*)\b/g;

/** The identifiers a question names (lower-cased). */
export function namedIdentifiers(question: string): string[] {
  const out: string[] = [];
  for (const m of question.matchAll(IDENTIFIER)) out.push((m[1] ?? m[2] ?? m[3]).toLowerCase());
  return out;
}

/** The follow-ups whose every identifier appears in `shown` (the text of the prompt that wrote them). */
export function visibleFollowUps(questions: readonly string[], shown: string): string[] {
  const seen = shown.toLowerCase();
  return questions.filter((q) => namedIdentifiers(q).every((name) => seen.includes(name)));
}

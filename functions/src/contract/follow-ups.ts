/**
 * Follow-up questions travel at the end of the generator's answer, after a marker line, so they
 * cost no extra model call: the server takes them out (and drops any naming what the person cannot
 * see), the page hides them from the answer while it streams and shows them as buttons.
 */

/** The line that starts the follow-up questions at the end of an answer. */
export const FOLLOW_UPS_MARKER = ":::follow-ups";
/** At most this many follow-up questions are offered. */
export const MAX_FOLLOW_UPS = 3;
/** A follow-up question longer than this is not a question a button can show. */
const MAX_FOLLOW_UP_CHARS = 200;

/**
 * An answer split into its text and its follow-up questions. While the answer streams, a last line
 * that is the start of the marker (":::fol") is held back too, so the marker never flashes on the page.
 */
export function splitFollowUps(text: string): { body: string; followUps: string[] } {
  const at = text.search(/(^|\n)[ \t]*:::follow-ups[ \t]*(\n|$)/);
  if (at < 0) {
    const lastLine = text.slice(text.lastIndexOf("\n") + 1).trim();
    const partial = lastLine.length > 0 && FOLLOW_UPS_MARKER.startsWith(lastLine) && lastLine.startsWith(":");
    return { body: partial ? text.slice(0, text.lastIndexOf("\n") + 1).trimEnd() : text, followUps: [] };
  }
  const body = text.slice(0, at).trimEnd();
  const rest = text.slice(at).replace(/^\n?[ \t]*:::follow-ups[ \t]*/, "");
  const seen = new Set<string>();
  const followUps: string[] = [];
  for (const line of rest.split("\n")) {
    const q = line
      .replace(/^\s*(?:[-*•]|\d+[.)])\s*/, "")
      .replace(/^["“]|["”]$/g, "")
      .trim();
    if (!q || q.length > MAX_FOLLOW_UP_CHARS || q.startsWith(":::")) continue;
    if (seen.has(q.toLowerCase())) continue;
    seen.add(q.toLowerCase());
    followUps.push(q);
    if (followUps.length === MAX_FOLLOW_UPS) break;
  }
  return { body, followUps };
}

/**
 * The message a schedule sends to a chat webhook (a Google Chat or Slack incoming webhook): both
 * take `{ "text": … }` with `*bold*` and bare links, so one format serves both. It carries the
 * schedule's name, the alert's one-line summary when one fired, the answer's first lines and a
 * link to the thread; never rows. The answer's tables and code blocks are dropped, because a
 * Markdown table in an answer is rows.
 */
import { proseLines } from "./answer-text";
import { threadUrl } from "../runs/page-links";

/** At most this many lines of the answer go into a message. */
const MESSAGE_ANSWER_LINES = 3;
/** At most this many characters of the answer go into a message. */
export const MESSAGE_ANSWER_CHARS = 500;
const MAX_NAME_CHARS = 100;
const MAX_SUMMARY_CHARS = 300;

/** What a message is made of. There is deliberately no place for rows. */
export interface WebhookMessageInput {
  /** The schedule's name (or its question when it has none). */
  name: string;
  /** The thread the scheduled answers are written to. */
  threadId: string;
  /** The page's address (`https://quarry.example.com`), without a trailing path. */
  appUrl: string;
  /** The generator's answer for this run, as Markdown. */
  answer?: string;
  /** The fired alert's summary (from `evaluate`); absent for a plain scheduled answer. */
  alert?: string;
}

/** The webhook body: `{ text }`, bounded (name, summary and answer are each cut to a limit). */
export function webhookMessage(input: WebhookMessageInput): { text: string } {
  const title = `*${clip(oneLine(input.name), MAX_NAME_CHARS) || "Scheduled question"}*`;
  const lines = [input.alert ? `${title} — alert: ${clip(oneLine(input.alert), MAX_SUMMARY_CHARS)}` : title];
  const answer = firstLines(input.answer ?? "");
  if (answer) lines.push(answer);
  lines.push(`Open in Quarry: ${threadUrl(input.appUrl, input.threadId)}`);
  return { text: lines.join("\n") };
}

/**
 * The answer's first prose lines (answer-text.ts), at most {@link MESSAGE_ANSWER_LINES} lines and
 * {@link MESSAGE_ANSWER_CHARS} characters, neutralised for the chats.
 */
function firstLines(markdown: string): string {
  return clip(proseLines(markdown, MESSAGE_ANSWER_LINES).map(neutralise).join("\n"), MESSAGE_ANSWER_CHARS);
}

function oneLine(text: string): string {
  return neutralise(text.replace(/\s+/g, " ").trim());
}

/**
 * Angle brackets are control syntax in both chats (Slack's `<!channel>` and `<url|label>`, Google
 * Chat's `<users/all>`): replaced by look-alikes, so a name or an answer cannot ping a room or
 * disguise a link.
 */
function neutralise(text: string): string {
  return text.replace(/</g, "‹").replace(/>/g, "›");
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1).trimEnd()}…`;
}

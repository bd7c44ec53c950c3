/**
 * Which Slack events are questions: a direct message to the app (`message` in an `im`) or an
 * @mention in a channel (`app_mention`), from a person. Everything else — a bot's message (Quarry's
 * own included), an edit or deletion (`message_changed`, any subtype), a channel message that does
 * not mention the app, an event type the app did not ask for — is ignored, with the reason. Pure.
 */

/** A question asked in Slack, as the task that answers it needs it. */
export interface SlackQuestion {
  eventId: string;
  team: string;
  channel: string;
  /** `im` for a direct message; `channel`, `group`, `mpim` for shared rooms. */
  channelType: string;
  user: string;
  text: string;
  /** The message's own ts. */
  ts: string;
  /** The thread it belongs to: its parent's ts, or its own when it starts one. */
  threadTs: string;
}

export type Classified = { question: SlackQuestion } | { ignored: string };

interface SlackEvent {
  type?: unknown;
  subtype?: unknown;
  user?: unknown;
  bot_id?: unknown;
  bot_profile?: unknown;
  text?: unknown;
  ts?: unknown;
  thread_ts?: unknown;
  channel?: unknown;
  channel_type?: unknown;
}

/** `<@U123>` mentions, dropped from the question. */
const MENTION = /<@[A-Z0-9]+(\|[^>]*)?>/g;

const str = (v: unknown) => (typeof v === "string" && v ? v : undefined);

/** Why a well-formed event from a person is not a question, or undefined when it is one. */
function notAQuestion(event: SlackEvent, botUsers: string[]): string | undefined {
  if (event.bot_id || event.bot_profile || event.subtype === "bot_message") return "a bot's message";
  if (botUsers.includes(String(event.user))) return "the app's own message";
  if (event.subtype === "message_changed" || event.subtype === "message_deleted") return "an edit";
  if (event.subtype !== undefined) return `a message of subtype ${String(event.subtype)}`;
  if (event.type === "message" && event.channel_type !== "im") return "a channel message without a mention";
  if (event.type !== "message" && event.type !== "app_mention") return `event type ${String(event.type)}`;
  return undefined;
}

/** Classifies an `event_callback` body. */
export function classifySlackEvent(body: Record<string, unknown>): Classified {
  const event = (body.event ?? {}) as SlackEvent;
  const botUsers = ((body.authorizations ?? []) as { user_id?: unknown; is_bot?: unknown }[])
    .filter((a) => a.is_bot)
    .map((a) => String(a.user_id));
  const why = notAQuestion(event, botUsers);
  if (why) return { ignored: why };
  const [eventId, team, channel, user, ts] = [
    body.event_id,
    body.team_id,
    event.channel,
    event.user,
    event.ts,
  ].map(str);
  const text = typeof event.text === "string" ? event.text.replace(MENTION, "").trim() : "";
  if (!eventId || !team || !channel || !user || !ts) return { ignored: "an event without its ids" };
  if (!text) return { ignored: "an empty message" };
  return {
    question: {
      eventId,
      team,
      channel,
      channelType: str(event.channel_type) ?? (event.type === "app_mention" ? "channel" : "im"),
      user,
      text,
      ts,
      threadTs: str(event.thread_ts) ?? ts,
    },
  };
}

/**
 * Which Google Chat events are questions (pure): a MESSAGE from a person with text, in a direct
 * message or a space; everything else (added to or removed from a space, a bot's message, an
 * empty one) is not, with the reason.
 */

/** A question asked in Google Chat, as the task answers it. */
export interface GoogleChatQuestion {
  /** `spaces/…/messages/…`: the event's id for recording once. */
  message: string;
  space: string;
  /** Whether the space is a direct message with the app. */
  direct: boolean;
  /** `spaces/…/threads/…`. */
  thread: string;
  /** `users/…`. */
  user: string;
  text: string;
}

export interface ChatEvent {
  type?: string;
  space?: { name?: string; type?: string; spaceType?: string };
  /** `email`: the sender's Workspace email, as Chat gives it. */
  user?: { name?: string; type?: string; email?: string };
  message?: { name?: string; text?: string; argumentText?: string; thread?: { name?: string } };
}

/** The question in a MESSAGE event, or why it is not one. */
export function questionOf(e: ChatEvent): GoogleChatQuestion | string {
  if (e.type !== "MESSAGE") return `event type ${String(e.type)}`;
  if (e.user?.type !== "HUMAN") return "a bot's message";
  const text = (e.message?.argumentText ?? e.message?.text ?? "").trim();
  const [message, space, thread, user] = [
    e.message?.name,
    e.space?.name,
    e.message?.thread?.name,
    e.user?.name,
  ];
  if (!message || !space || !thread || !user) return "an event without its names";
  if (!text) return "an empty message";
  const direct = e.space?.spaceType === "DIRECT_MESSAGE" || e.space?.type === "DM";
  return { message, space, direct, thread, user, text };
}

export const userKeyOf = (user: string) => `google_chat:${user}`;

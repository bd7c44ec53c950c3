/**
 * Share to thread: in a shared room an answer goes only to its asker (computed under their scope);
 * the asker — nobody else — may post it for the room with this button.
 */
import type { WebClient } from "@slack/web-api";
import type { ChatAnswer } from "../store";

/** The button's action id. */
export const SHARE_ACTION = "quarry_share";

/** The Share to thread button under a private answer. */
export function shareButton(answerId: string): Record<string, unknown> {
  return {
    type: "actions",
    block_id: `quarry_share_${answerId}`,
    elements: [
      {
        type: "button",
        action_id: SHARE_ACTION,
        value: answerId,
        text: { type: "plain_text", text: "Share to thread" },
      },
    ],
  };
}

/** Posts a private answer for the room; false when it is not the clicker's or was not private. */
export async function shareAnswer(
  slack: WebClient,
  answer: ChatAnswer,
  clickerUid: string | undefined,
): Promise<boolean> {
  if (!answer.room || clickerUid !== answer.uid) return false;
  const { text, blocks } = JSON.parse(answer.room.message) as { text: string; blocks: unknown[] };
  await slack.chat.postMessage({
    channel: answer.room.channel,
    thread_ts: answer.room.threadTs,
    text,
    blocks: blocks as never,
  });
  return true;
}

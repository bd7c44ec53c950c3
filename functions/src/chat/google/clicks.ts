/**
 * An answer card's buttons in Google Chat (CARD_CLICKED events on `/chat/events`, verified like
 * every Chat request): 👍 is recorded as Quarry feedback on that answer's turn; 👎 opens a dialog
 * asking why, and its submission is recorded with the reason (`via: "google_chat"`). The clicker
 * must be a linked (or trusted), current member; what a button acts on is looked up by the
 * answer's id, never taken from the event. The reply is synchronous, private in a space.
 */
import { toErrorBody } from "../../errors";
import { recordFeedback } from "../../runs/feedback";
import { chatCaller } from "../ask";
import { answerOf, linkOf } from "../store";
import { CARD_ACTIONS, reasonDialog } from "./cards";
import { userKeyOf, type ChatEvent } from "./question";
import { trustedLink } from "./trusted";

/** A CARD_CLICKED event's own fields (beside ChatEvent's). */
export interface CardClick extends ChatEvent {
  common?: {
    invokedFunction?: string;
    parameters?: Record<string, string>;
    formInputs?: Record<string, { stringInputs?: { value?: string[] } }>;
  };
  action?: { actionMethodName?: string; parameters?: { key?: string; value?: string }[] };
  isDialogEvent?: boolean;
  dialogEventType?: string;
}

const DM = (e: ChatEvent) => e.space?.spaceType === "DIRECT_MESSAGE" || e.space?.type === "DM";

/** A reply to the clicker: a new message, private in a space; in a dialog, its status line. */
function reply(e: CardClick, text: string) {
  if (e.isDialogEvent) {
    return {
      actionResponse: {
        type: "DIALOG",
        dialogAction: { actionStatus: { statusCode: "OK", userFacingMessage: text } },
      },
    };
  }
  return {
    actionResponse: { type: "NEW_MESSAGE" },
    text,
    ...(DM(e) || !e.user?.name ? {} : { privateMessageViewer: { name: e.user.name } }),
  };
}

function invoked(e: CardClick): { fn?: string; answerId: string } {
  const fn = e.common?.invokedFunction ?? e.action?.actionMethodName;
  const answerId =
    e.common?.parameters?.answer ?? e.action?.parameters?.find((p) => p.key === "answer")?.value ?? "";
  return { fn, answerId };
}

/** Answers a card click; the body Chat shows. */
export async function cardClicked(e: CardClick): Promise<Record<string, unknown>> {
  const { fn, answerId } = invoked(e);
  if (!fn || !Object.values(CARD_ACTIONS).includes(fn as never)) return {};
  const answer = await answerOf(answerId);
  if (!answer) return reply(e, "This answer's buttons have expired: ask again.");
  if (fn === CARD_ACTIONS.down) return reasonDialog(answerId);
  const key = userKeyOf(e.user?.name ?? "");
  const link = (await linkOf(key)) ?? (await trustedLink(e, key));
  if (!link) return reply(e, "Connect your Quarry account first: ask Quarry a question and follow its link.");
  try {
    const caller = await chatCaller(link, "google_chat");
    const reason = e.common?.formInputs?.reason?.stringInputs?.value?.[0]?.trim();
    await recordFeedback({
      uid: caller.uid,
      owner: answer.uid,
      threadId: answer.threadId,
      questionId: answer.questionId,
      score: fn === CARD_ACTIONS.up ? 1 : -1,
      ...(fn === CARD_ACTIONS.reason && reason ? { note: reason.slice(0, 1000) } : {}),
      via: "google_chat",
    });
    return reply(
      e,
      fn === CARD_ACTIONS.up ? "Thanks: your 👍 is recorded." : "Thanks: your 👎 and why are recorded.",
    );
  } catch (err) {
    return reply(e, `Sorry: ${toErrorBody(err).body.message}`);
  }
}

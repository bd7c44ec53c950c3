/**
 * `POST /slack/interactions`: an answer's buttons and the 👎 modal, verified like every Slack
 * request. Show SQL answers privately; 👍 is recorded as Quarry feedback for that answer's turn; 👎
 * opens a modal asking why, and its submission is recorded with the reason; Share to thread posts a
 * private answer for the room (its asker only). The clicker must be a linked, current member; what
 * a button acts on is looked up by the answer's id, never taken from the payload.
 */
import type { Request, Response } from "express";
import type { WebClient } from "@slack/web-api";
import * as logger from "firebase-functions/logger";
import { QuarryError, toErrorBody } from "../../errors";
import { recordFeedback } from "../../runs/feedback";
import { chatCaller } from "../ask";
import { answerOf, linkOf, type ChatAnswer } from "../store";
import { ACTIONS, DOWNVOTE_MODAL, downvoteModal, sqlBlocks } from "./blocks";
import { slackClient } from "./client";
import { verifiedSlackBody } from "./events";
import { SHARE_ACTION, shareAnswer } from "./share";

interface Payload {
  type?: string;
  team?: { id?: string };
  user?: { id?: string };
  trigger_id?: string;
  channel?: { id?: string };
  container?: { channel_id?: string; thread_ts?: string; message_ts?: string };
  message?: { ts?: string; thread_ts?: string };
  actions?: { action_id?: string; value?: string }[];
  view?: {
    callback_id?: string;
    private_metadata?: string;
    state?: { values?: Record<string, Record<string, { value?: string }>> };
  };
}

function payloadOf(raw: Buffer): Payload {
  const json = new URLSearchParams(raw.toString("utf8")).get("payload");
  try {
    if (json) return JSON.parse(json) as Payload;
  } catch {
    // worded below
  }
  throw new QuarryError(
    "bad_request:body",
    "A Slack interaction carries its JSON in the `payload` form field.",
  );
}

/** Where a private reply to the clicker goes. */
function replyTo(p: Payload) {
  const channel = p.channel?.id ?? p.container?.channel_id;
  const threadTs = p.container?.thread_ts ?? p.message?.thread_ts ?? p.message?.ts;
  return { channel, threadTs };
}

async function tell(slack: WebClient, p: Payload, text: string, blocks?: unknown[]): Promise<void> {
  const { channel, threadTs } = replyTo(p);
  if (!channel || !p.user?.id) return;
  await slack.chat.postEphemeral({
    channel,
    user: p.user.id,
    text,
    ...(threadTs ? { thread_ts: threadTs } : {}),
    ...(blocks ? { blocks: blocks as never } : {}),
  });
}

/** The clicker as a current member (undefined, after saying why, when they are not). */
async function clicker(slack: WebClient, p: Payload) {
  const link = await linkOf(`slack:${p.team?.id}:${p.user?.id}`);
  if (!link) {
    await tell(slack, p, "Connect your Quarry account first: ask Quarry a question and follow its link.");
    return undefined;
  }
  return chatCaller(link, "slack").catch(async (err: unknown) => {
    await tell(slack, p, `Sorry: ${toErrorBody(err).body.message}`);
    return undefined;
  });
}

async function vote(answer: ChatAnswer, uid: string, score: 1 | -1, note?: string): Promise<void> {
  await recordFeedback({
    uid,
    owner: answer.uid,
    threadId: answer.threadId,
    questionId: answer.questionId,
    score,
    ...(note ? { note } : {}),
    via: "slack",
  });
}

async function onAction(slack: WebClient, p: Payload): Promise<void> {
  const action = p.actions?.[0];
  if (!action || action.action_id === ACTIONS.open || action.action_id === "quarry_connect") return;
  const answer = await answerOf(action.value ?? "");
  if (!answer) return tell(slack, p, "This answer's buttons have expired: ask again.");
  if (action.action_id === ACTIONS.down) {
    await slack.views.open({ trigger_id: p.trigger_id!, view: downvoteModal(action.value!) as never });
    return;
  }
  const caller = await clicker(slack, p);
  if (!caller) return;
  if (action.action_id === ACTIONS.sql)
    await tell(slack, p, "The SQL behind this answer", sqlBlocks(answer.sql));
  else if (action.action_id === ACTIONS.up) {
    await vote(answer, caller.uid, 1);
    await tell(slack, p, "Thanks: your 👍 is recorded.");
  } else if (action.action_id === SHARE_ACTION && !(await shareAnswer(slack, answer, caller.uid))) {
    await tell(slack, p, "Only the person who asked can share this answer.");
  }
}

async function onDownvote(slack: WebClient, p: Payload): Promise<void> {
  const answer = await answerOf(p.view?.private_metadata ?? "");
  if (!answer) return;
  const caller = await clicker(slack, p);
  if (!caller) return;
  const reason = p.view?.state?.values?.reason?.reason?.value?.trim();
  await vote(answer, caller.uid, -1, reason || undefined);
}

export async function slackInteraction(req: Request, res: Response): Promise<void> {
  const p = payloadOf(verifiedSlackBody(req));
  const slack = await slackClient();
  try {
    if (p.type === "block_actions") await onAction(slack, p);
    else if (p.type === "view_submission" && p.view?.callback_id === DOWNVOTE_MODAL)
      await onDownvote(slack, p);
    else logger.info("slack interaction ignored", { type: String(p.type) });
  } catch (err) {
    const { body, expected } = toErrorBody(err);
    if (!expected) logger.error("slack interaction failed", { err: String((err as Error)?.stack ?? err) });
    await tell(slack, p, `Sorry: ${body.message}`).catch(() => {});
  }
  res.status(200).end();
}

/**
 * The `chatRun` task for a Slack question: an unlinked person gets a private "Connect your Quarry
 * account" link and nothing runs; a removed member is told so in the thread; a member's question
 * runs as them (chat/ask.ts) with its progress as the thread's status (`assistant.threads.setStatus`
 * per phase, refreshed before Slack lets it lapse, cleared in a `finally`), then the answer is
 * posted in the thread — or, in a shared room, privately to the asker with Share to thread (an
 * answer computed under one person's scope is never shown to a room by itself).
 */
import type { WebClient } from "@slack/web-api";
import * as logger from "firebase-functions/logger";
import { config } from "../../config";
import { toErrorBody } from "../../errors";
import { appUrl, threadUrl } from "../../runs/page-links";
import { askInChat, chatCaller, type ChatTurn } from "../ask";
import { chartPng } from "../chart-png";
import { signLinkToken } from "../link-token";
import { inBoundRoom, roomGroup } from "../rooms";
import { linkOf, newAnswerId, storeAnswer } from "../store";
import { answerBlocks } from "./blocks";
import { trustLine } from "../trust";
import type { SlackQuestion } from "./classify";
import { slackClient } from "./client";
import { shareButton } from "./share";

/** Slack clears an assistant status after two minutes without a message: refreshed well before. */
const STATUS_REFRESH_MS = 60_000;

const userKey = (q: SlackQuestion) => `slack:${q.team}:${q.user}`;
const isDirect = (q: SlackQuestion) => q.channelType === "im";

/** A private message to the asker in the question's thread. */
async function whisper(slack: WebClient, q: SlackQuestion, text: string, blocks?: unknown[]): Promise<void> {
  await slack.chat.postEphemeral({
    channel: q.channel,
    user: q.user,
    thread_ts: q.threadTs,
    text,
    ...(blocks ? { blocks: blocks as never } : {}),
  });
}

/** Words in the thread (a refusal, an error). */
async function say(slack: WebClient, q: SlackQuestion, text: string): Promise<void> {
  await slack.chat.postMessage({ channel: q.channel, thread_ts: q.threadTs, text });
}

/** The connect link, privately: nothing runs for a person Quarry does not know. */
async function offerLink(slack: WebClient, q: SlackQuestion): Promise<void> {
  const { linkKey, linkMinutes } = config().chat;
  const token = signLinkToken(linkKey!, userKey(q), Date.now() + linkMinutes * 60_000);
  const url = `${appUrl().replace(/\/+$/, "")}/connect?token=${encodeURIComponent(token)}`;
  const text = `Connect your Quarry account to ask questions here: ${url} (the link works for ${linkMinutes} minutes).`;
  await whisper(slack, q, text, [
    { type: "section", text: { type: "mrkdwn", text: "Connect your Quarry account to ask questions here." } },
    {
      type: "actions",
      elements: [
        {
          type: "button",
          style: "primary",
          action_id: "quarry_connect",
          text: { type: "plain_text", text: "Connect your Quarry account" },
          url,
        },
      ],
    },
  ]);
}

/** Keeps the thread's status line up to date while the run works; `stop` clears it. */
function statusLine(slack: WebClient, q: SlackQuestion) {
  let current = "is thinking…";
  const set = (status: string) =>
    slack.assistant.threads
      .setStatus({ channel_id: q.channel, thread_ts: q.threadTs, status })
      .catch((err: unknown) => logger.info("slack status not set", { err: String(err) }));
  void set(current);
  const timer = setInterval(() => void set(current), STATUS_REFRESH_MS);
  timer.unref();
  return {
    phase: (words: string) => {
      current = `is ${words}…`;
      void set(current);
    },
    stop: async () => {
      clearInterval(timer);
      await set("");
    },
  };
}

/** Posts the turn's answer (publicly in a DM, privately with Share to thread in a room). */
async function postAnswer(
  slack: WebClient,
  q: SlackQuestion,
  uid: string,
  turn: ChatTurn,
  forRoom: boolean,
): Promise<void> {
  if (turn.status === "failed" || turn.status === "stopped") {
    const why =
      turn.status === "failed" ? `the run failed: ${turn.error ?? "unknown error"}` : "it was stopped";
    await say(slack, q, `Sorry, I could not answer that: ${why}.`);
    return;
  }
  const { out } = turn;
  const answer = turn.status === "asking" ? out.clarification!.question : out.answer;
  const record = {
    uid,
    threadId: turn.threadId,
    questionId: turn.questionId,
    runId: turn.runId,
    sql: out.sql,
  };
  const text = answer.slice(0, 3000) || "Quarry answered.";
  const blocksFor = (answerId: string) =>
    answerBlocks({
      answer,
      ...(out.result ? { result: out.result } : {}),
      ...(out.computed && turn.status === "answered" ? { trust: trustLine(out.computed) } : {}),
      threadUrl: threadUrl(appUrl(), turn.threadId),
      answerId,
      hasSql: out.sql.length > 0,
    });
  if (isDirect(q) || forRoom) {
    const blocks = blocksFor(await storeAnswer(record));
    await slack.chat.postMessage({
      channel: q.channel,
      thread_ts: q.threadTs,
      text,
      blocks: blocks as never,
    });
    if (out.result) await uploadChart(slack, { channel: q.channel, threadTs: q.threadTs }, out.result);
    return;
  }
  // A room: the record keeps the message Share to thread posts (its buttons carry the same id).
  const answerId = newAnswerId();
  const blocks = blocksFor(answerId);
  const room = { channel: q.channel, threadTs: q.threadTs, message: JSON.stringify({ text, blocks }) };
  await storeAnswer({ ...record, room }, answerId);
  await whisper(slack, q, text, [...blocks, shareButton(answerId)]);
}

/**
 * The answer's chart as a PNG in the thread (files.uploadV2: Slack's external upload). A chart that
 * cannot be drawn or uploaded is logged: the answer and its table are already there.
 */
export async function uploadChart(
  slack: WebClient,
  q: { channel: string; threadTs: string },
  result: Parameters<typeof chartPng>[0],
): Promise<void> {
  try {
    const png = await chartPng(result);
    if (!png) return;
    await slack.files.uploadV2({
      channel_id: q.channel,
      thread_ts: q.threadTs,
      file: png,
      filename: "chart.png",
      title: "Chart",
      alt_text: `Chart of ${result.columns.map((c) => c.name).join(", ")}`,
    });
  } catch (err) {
    logger.warn("slack chart not posted", { err: String(err) });
  }
}

/** Answers one Slack question, end to end (the `chatRun` task's body). */
export async function answerSlackQuestion(q: SlackQuestion): Promise<void> {
  const slack = await slackClient();
  const link = await linkOf(userKey(q));
  if (!link) return offerLink(slack, q);
  // In a room an admin bound to a group, the group's scope, and the answer is for everyone.
  const bound = isDirect(q) ? undefined : await roomGroup(`slack:${q.team}:${q.channel}`);
  const caller = await chatCaller(link, "slack")
    .then((c) => (bound ? inBoundRoom(c, bound) : c))
    .catch(async (err: unknown) => {
      await say(slack, q, `Sorry, I cannot answer you: ${toErrorBody(err).body.message}`);
      return undefined;
    });
  if (!caller) return;
  const status = statusLine(slack, q);
  try {
    const turn = await askInChat(caller, `slack:${q.team}:${q.channel}:${q.threadTs}`, q.text, status.phase);
    await postAnswer(slack, q, caller.uid, turn, bound !== undefined);
  } catch (err) {
    const { body, expected } = toErrorBody(err);
    if (!expected) logger.error("slack question failed", { err: String((err as Error)?.stack ?? err) });
    await say(slack, q, `Sorry, I could not answer that: ${body.message}`);
  } finally {
    await status.stop();
  }
}

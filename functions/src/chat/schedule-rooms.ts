/**
 * Scheduled answers in chat rooms (runs/room-delivery.ts's port, given to the schedules by app.ts
 * and index.ts): a schedule may post to a Slack channel or Google Chat space as the app when its
 * owner's chat account is linked and they are in that room — an answer computed under the owner's
 * scope is theirs to share, as Share to thread is, and only where they are themselves. Both are
 * checked when the schedule is saved and again before every post (fail closed: a room that cannot
 * be checked is not posted to). The answer starts a thread whose follow-ups by the owner continue
 * the schedule's conversation (`chatThreads`); anyone else asking there gets their own, as in any
 * room.
 */
import * as logger from "firebase-functions/logger";
import { config } from "../config";
import type { RoomAnswer, RoomDelivery } from "../runs/room-delivery";
import { appUrl, threadUrl } from "../runs/page-links";
import { linkedUsers, storeAnswer, storeThread, type ChatAnswer } from "./store";

/** Most members of a Slack channel read while looking for the owner (pages of 1,000). */
const SLACK_MEMBER_PAGES = 20;

type Target =
  | { platform: "slack"; team: string; channel: string; users: string[] }
  | { platform: "google_chat"; space: string; users: string[] };

const heading = (a: RoomAnswer) =>
  [`**${a.name}** (scheduled)`, a.alert ? `Alert: ${a.alert}` : "", a.answer].filter(Boolean).join("\n\n");

/** What the answer's buttons act on (chatAnswers). */
const recordOf = (a: RoomAnswer): ChatAnswer => ({
  uid: a.uid,
  threadId: a.threadId,
  questionId: a.questionId,
  runId: a.runId,
  sql: [a.sql],
});

/** The room and the owner's chat user in it, or why there is none. */
async function targetOf(uid: string, room: string): Promise<Target | string> {
  const { slack, google } = config().chat;
  if (room.startsWith("slack:")) {
    if (!slack.enabled || config().chat.problem)
      return "the Slack app is not turned on here: ask an admin to set QUARRY_SLACK";
    const [, team, channel] = room.split(":");
    const users = (await linkedUsers(uid, "slack")).filter((u) => u.startsWith(`slack:${team}:`));
    if (!users.length)
      return "link your Slack account first: message the Quarry app in Slack and follow its Connect link";
    return { platform: "slack", team, channel, users: users.map((u) => u.split(":")[2]) };
  }
  if (!google.enabled || google.problem)
    return "the Google Chat app is not turned on here: ask an admin to set QUARRY_GOOGLE_CHAT";
  const users = await linkedUsers(uid, "google_chat");
  if (!users.length)
    return "link your Google Chat account first: message the Quarry app in Google Chat and follow its Connect link";
  return {
    platform: "google_chat",
    space: room.slice("google_chat:".length),
    users: users.map((u) => u.slice("google_chat:".length)),
  };
}

/** Whether the owner's Slack user is in the channel (the app must be in it to read its members). */
async function inSlackChannel(t: Extract<Target, { platform: "slack" }>): Promise<string | undefined> {
  const { slackClient } = await import("./slack/client.js");
  const slack = await slackClient();
  let cursor: string | undefined;
  try {
    for (let page = 0; page < SLACK_MEMBER_PAGES; page++) {
      const res = await slack.conversations.members({ channel: t.channel, limit: 1000, cursor });
      if (res.members?.some((m) => t.users.includes(m))) return undefined;
      cursor = res.response_metadata?.next_cursor || undefined;
      if (!cursor) break;
    }
    return "you are not in that channel: join it first (answers go only to rooms you are in)";
  } catch (err) {
    const code = (err as { data?: { error?: string } }).data?.error;
    if (code === "channel_not_found" || code === "not_in_channel")
      return "the Quarry app is not in that channel: invite it there (/invite @Quarry)";
    logger.warn("slack channel members not read", { err: String(err) });
    return "Slack could not say who is in that channel now: try again";
  }
}

/** Whether one of the owner's Google Chat users is in the space (`spaces.members.get` as the app). */
async function inGoogleSpace(t: Extract<Target, { platform: "google_chat" }>): Promise<string | undefined> {
  const { googleChatClient } = await import("./google/client.js");
  const chat = await googleChatClient();
  let problem = "you are not in that space, or the Quarry app is not: add both first";
  for (const user of t.users) {
    try {
      await chat.spaces.members.get({ name: `${t.space}/members/${user.replace(/^users\//, "")}` });
      return undefined;
    } catch (err) {
      const status = (err as { status?: number }).status ?? (err as { code?: number }).code;
      if (status === 404) continue;
      if (status === 403) return "the Quarry app is not in that space: add it there first";
      logger.warn("google chat membership not read", { err: String(err) });
      problem = "Google Chat could not say who is in that space now: try again";
    }
  }
  return problem;
}

async function check(uid: string, room: string): Promise<Target | string> {
  const target = await targetOf(uid, room);
  if (typeof target === "string") return target;
  const problem = target.platform === "slack" ? await inSlackChannel(target) : await inGoogleSpace(target);
  return problem ?? target;
}

/** The answer as a new Slack message in the channel, its chart in the thread it starts. */
async function postToSlack(t: Extract<Target, { platform: "slack" }>, a: RoomAnswer): Promise<void> {
  const [{ slackClient }, { answerBlocks }, { uploadChart }] = await Promise.all([
    import("./slack/client.js"),
    import("./slack/blocks.js"),
    import("./slack/answer.js"),
  ]);
  const slack = await slackClient();
  const answerId = await storeAnswer(recordOf(a));
  const text = heading(a);
  const blocks = answerBlocks({
    answer: text,
    ...(a.result ? { result: a.result } : {}),
    threadUrl: threadUrl(appUrl(), a.threadId),
    answerId,
    hasSql: true,
  });
  const posted = await slack.chat.postMessage({
    channel: t.channel,
    text: text.slice(0, 3000),
    blocks: blocks as never,
  });
  const ts = String(posted.ts);
  await storeThread(`slack:${t.team}:${t.channel}:${ts}`, a.uid, {
    threadId: a.threadId,
    questionId: a.questionId,
  });
  if (a.result) await uploadChart(slack, { channel: t.channel, threadTs: ts }, a.result);
}

/** The answer as a card in a new thread of the space. */
async function postToGoogle(t: Extract<Target, { platform: "google_chat" }>, a: RoomAnswer): Promise<void> {
  const [{ googleChatClient }, { answerMessage }, { chartImage }] = await Promise.all([
    import("./google/client.js"),
    import("./google/cards.js"),
    import("./google/answer.js"),
  ]);
  const url = a.result ? await chartImage(a.result, a.uid) : undefined;
  const answerId = await storeAnswer(recordOf(a));
  const chat = await googleChatClient();
  const res = await chat.spaces.messages.create({
    parent: t.space,
    requestBody: answerMessage({
      answer: heading(a),
      ...(a.result ? { result: a.result } : {}),
      sql: [a.sql],
      threadUrl: threadUrl(appUrl(), a.threadId),
      ...(url ? { chartUrl: url } : {}),
      answerId,
    }),
  });
  const thread = res.data.thread?.name;
  if (thread)
    await storeThread(`google_chat:${thread}`, a.uid, { threadId: a.threadId, questionId: a.questionId });
}

/** The chat channel's side of the schedules' room delivery. */
export const scheduleRooms: RoomDelivery = {
  async check(uid, room) {
    const target = await check(uid, room);
    return typeof target === "string" ? target : undefined;
  },
  async post(room, answer) {
    const target = await check(answer.uid, room);
    if (typeof target === "string") return target;
    if (target.platform === "slack") await postToSlack(target, answer);
    else await postToGoogle(target, answer);
    return undefined;
  },
};

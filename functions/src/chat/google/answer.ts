/**
 * The `chatRun` task for a Google Chat question: runs it as the linked member (chat/ask.ts) and
 * posts the answer as the app in the question's thread (`spaces.messages.create`, replying in the
 * thread) — in a space privately to the asker (`privateMessageViewer`), so a room never sees what
 * only the asker's scope shows, unless an admin bound the space to a group (then under that
 * group's scope, for everyone); a removed member or a failed run is told in words.
 */
import * as logger from "firebase-functions/logger";
import { toErrorBody } from "../../errors";
import { appUrl, threadUrl } from "../../runs/page-links";
import { askInChat, chatCaller } from "../ask";
import { chartPng } from "../chart-png";
import { chartUrl } from "../chart-url";
import { inBoundRoom, roomGroup } from "../rooms";
import { linkOf, storeAnswer } from "../store";
import { trustLine } from "../trust";
import { answerMessage } from "./cards";
import { googleChatClient } from "./client";
import { userKeyOf, type GoogleChatQuestion } from "./question";

async function post(q: GoogleChatQuestion, body: Record<string, unknown>, forRoom = false): Promise<void> {
  const chat = await googleChatClient();
  await chat.spaces.messages.create({
    parent: q.space,
    messageReplyOption: "REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD",
    requestBody: {
      ...body,
      thread: { name: q.thread },
      ...(q.direct || forRoom ? {} : { privateMessageViewer: { name: q.user } }),
    },
  });
}

/** The answer's chart as a signed image URL, or undefined (no chart, or it could not be drawn: logged). */
export async function chartImage(
  result: Parameters<typeof chartPng>[0],
  uid: string,
): Promise<string | undefined> {
  try {
    const png = await chartPng(result);
    return png ? await chartUrl(png, uid) : undefined;
  } catch (err) {
    logger.warn("google chat chart not drawn", { err: String(err) });
    return undefined;
  }
}

/** Answers one Google Chat question, end to end (the `chatRun` task's body). */
export async function answerGoogleChatQuestion(q: GoogleChatQuestion): Promise<void> {
  const link = await linkOf(userKeyOf(q.user));
  if (!link) return; // unlinked since the event: nothing runs (the event answered with the connect link)
  // In a space an admin bound to a group, the group's scope, and the answer is for everyone.
  const bound = q.direct ? undefined : await roomGroup(`google_chat:${q.space}`);
  try {
    const member = await chatCaller(link, "google_chat");
    const caller = bound ? await inBoundRoom(member, bound) : member;
    const turn = await askInChat(caller, `google_chat:${q.thread}`, q.text, () => {});
    if (turn.status === "failed" || turn.status === "stopped") {
      const why =
        turn.status === "failed" ? `the run failed: ${turn.error ?? "unknown error"}` : "it was stopped";
      return await post(q, { text: `Sorry, I could not answer that: ${why}.` });
    }
    const { out } = turn;
    const url = out.result ? await chartImage(out.result, caller.uid) : undefined;
    const { threadId, questionId, runId } = turn;
    const answerId = await storeAnswer({ uid: caller.uid, threadId, questionId, runId, sql: out.sql });
    await post(
      q,
      answerMessage({
        answer: turn.status === "asking" ? out.clarification!.question : out.answer,
        ...(out.result ? { result: out.result } : {}),
        sql: out.sql,
        ...(out.computed && turn.status === "answered" ? { trust: trustLine(out.computed) } : {}),
        threadUrl: threadUrl(appUrl(), turn.threadId),
        ...(url ? { chartUrl: url } : {}),
        answerId,
      }),
      bound !== undefined,
    );
  } catch (err) {
    const { body, expected } = toErrorBody(err);
    if (!expected) logger.error("google chat question failed", { err: String((err as Error)?.stack ?? err) });
    await post(q, { text: `Sorry, I cannot answer that: ${body.message}` }).catch((e: unknown) =>
      logger.error("google chat reply failed", { err: String(e) }),
    );
  }
}

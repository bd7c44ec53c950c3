/**
 * The `chatRun` task queue: a chat platform's event is acknowledged at once (Slack waits 3 s) and
 * its question answered by a task-queue function (functions/src/index.ts), which has its CPU until
 * the run ends — an HTTPS function is not guaranteed any after its response.
 */
import { enqueueTask } from "../services";
import type { GoogleChatQuestion } from "./google/question";
import type { SlackQuestion } from "./slack/classify";

/** The task queue (and its function) that answers chat questions. */
const CHAT_QUEUE = "chatRun";

/** What a task carries: the question as the platform sent it. */
export type ChatTask =
  { platform: "slack"; question: SlackQuestion } | { platform: "google_chat"; question: GoogleChatQuestion };

/** Queues a question. */
export async function enqueueChatRun(task: ChatTask): Promise<void> {
  await enqueueTask(CHAT_QUEUE, task);
}

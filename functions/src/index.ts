/**
 * Cloud Functions entry. Keep this file's import graph light: LangChain, Vertex AI, BigQuery,
 * DuckDB and the Firestore client load on first use, not here (cold start).
 */
import { onRequest } from "firebase-functions/v2/https";
import { beforeUserCreated, beforeUserSignedIn } from "firebase-functions/v2/identity";
import { onSchedule } from "firebase-functions/v2/scheduler";
import { onTaskDispatched } from "firebase-functions/v2/tasks";
import {
  CONCURRENCY,
  MEMORY_MIB,
  REGION,
  TIMEOUT_SECONDS,
  checkEnvironmentAtLoad,
  functionSecrets,
  scheduleTick as tickCadence,
  watchdogRetry,
} from "./config";
import * as logger from "firebase-functions/logger";
import { installProcessGuards } from "./runs/abort";
import { createApp } from "./app";

checkEnvironmentAtLoad();
installProcessGuards((message, data) => logger.error(message, data));

/** The Quarry API: LangGraph Agent Server protocol over HTTPS with SSE streaming. */
export const api = onRequest(
  {
    region: REGION,
    memory: MEMORY_MIB,
    timeoutSeconds: TIMEOUT_SECONDS,
    concurrency: CONCURRENCY,
    invoker: "public",
    secrets: functionSecrets(),
  },
  createApp(),
);

/**
 * Background runs (`POST /threads/:id/runs`): queued by the API, run here to their end with their
 * events in the run's log, so they finish whether or not anyone is connected (an HTTPS function is
 * not guaranteed CPU after its response). Never retried from the start: a run is not repeated
 * behind the user's back; one whose instance stops is continued from its checkpoint (runWatchdog).
 */
export const backgroundRun = onTaskDispatched<import("./runs/background").BackgroundTask>(
  {
    region: REGION,
    memory: MEMORY_MIB,
    timeoutSeconds: TIMEOUT_SECONDS,
    retryConfig: { maxAttempts: 1 },
    rateLimits: { maxConcurrentDispatches: 100 },
    secrets: functionSecrets(),
  },
  async (req) => {
    const { runInBackground } = await import("./runs/background.js");
    await runInBackground(req.data);
  },
);

/**
 * Durable runs (docs/runs.md, "What survives what"): each attempt of a run has a watchdog task
 * here. While the run holds its lease the task fails on purpose and is delivered again an interval
 * later; once the lease lapsed without an end, the task continues the run from its last stored step
 * (or closes it after its last continuation). Retried by design: that is how it keeps watching.
 */
export const runWatchdog = onTaskDispatched<import("./runs/watchdog-queue").WatchTask>(
  {
    region: REGION,
    memory: MEMORY_MIB,
    timeoutSeconds: TIMEOUT_SECONDS,
    retryConfig: watchdogRetry(),
    rateLimits: { maxConcurrentDispatches: 100 },
    secrets: functionSecrets(),
  },
  async (req) => {
    const { watchRun } = await import("./runs/continuation.js");
    await watchRun(req.data);
  },
);

/**
 * Scheduled questions (docs/schedules.md): every few minutes, claims the schedules that are due
 * (once each, even when two ticks overlap) and queues a `scheduledRun` task for each. Cloud
 * Scheduler's job is created by `firebase deploy`.
 */
export const scheduleTick = onSchedule(
  { schedule: tickCadence(), region: REGION, timeoutSeconds: 120, retryCount: 0 },
  async () => {
    const { runScheduleTick } = await import("./schedules/tick.js");
    await runScheduleTick();
  },
);

/**
 * One scheduled question's run, as its owner, to its end: the saved SQL, the alert, the
 * notification, webhook, mail and chat room. Never retried: a scheduled run is not repeated behind its back.
 */
export const scheduledRun = onTaskDispatched<import("./schedules/queue").ScheduledTask>(
  {
    region: REGION,
    memory: MEMORY_MIB,
    timeoutSeconds: TIMEOUT_SECONDS,
    retryConfig: { maxAttempts: 1 },
    rateLimits: { maxConcurrentDispatches: 20 },
    secrets: functionSecrets(),
  },
  async (req) => {
    const [{ runScheduled }, { chatRoomDelivery }] = await Promise.all([
      import("./schedules/run.js"),
      import("./chat/index.js"),
    ]);
    await runScheduled(req.data, { rooms: chatRoomDelivery });
  },
);

/**
 * A question asked in Slack or Google Chat (docs/chat.md): acknowledged by `/slack/events` or
 * `/chat/events` within the platform's window and answered here, as the linked member, to its end.
 * Never retried: an answer is not posted twice.
 */
export const chatRun = onTaskDispatched<import("./chat/queue").ChatTask>(
  {
    region: REGION,
    memory: MEMORY_MIB,
    timeoutSeconds: TIMEOUT_SECONDS,
    retryConfig: { maxAttempts: 1 },
    rateLimits: { maxConcurrentDispatches: 50 },
    secrets: functionSecrets(),
  },
  async (req) => {
    const task = req.data;
    if (task.platform === "google_chat") {
      const { answerGoogleChatQuestion } = await import("./chat/google/answer.js");
      await answerGoogleChatQuestion(task.question);
    } else {
      const { answerSlackQuestion } = await import("./chat/slack/answer.js");
      await answerSlackQuestion(task.question);
    }
  },
);

/**
 * Refuses outsiders at the door: Firebase Auth calls these before it creates an account and before
 * every sign-in, and refuses one whose email is outside the access policy (access/blocking.ts says
 * how, and why an unverified address in the policy is let in). The API still checks every request.
 */
export const beforeCreate = beforeUserCreated({ region: REGION }, async (event) => {
  const { admitAtTheDoor } = await import("./access/blocking.js");
  await admitAtTheDoor(event.data, "create");
});

export const beforeSignIn = beforeUserSignedIn({ region: REGION }, async (event) => {
  const { admitAtTheDoor } = await import("./access/blocking.js");
  await admitAtTheDoor(event.data, "sign-in");
});

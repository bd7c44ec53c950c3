/**
 * Background runs: recorded (`threads/{id}/runs/{runId}`, status `pending`) and enqueued on the
 * `backgroundRun` task queue, then run by the task-queue function (functions/src/index.ts) with the
 * same code as a streamed run, their events going to the run's event log only. A background run
 * must finish although its client is gone, and an HTTPS function is not guaranteed CPU once its
 * response is sent (see docs/runs.md). The HTTP routes over this are http/run-routes/background.ts.
 */
import { randomUUID } from "node:crypto";
import * as logger from "firebase-functions/logger";
import { config } from "../config";
import { QuarryError, toErrorBody } from "../errors";
import { resolveAccess } from "../access/gate";
import { enqueueTask } from "../services";
import { checkpointSaver, runStore, threadStore } from "./runtime";
import { STREAM_MODES } from "../contract/protocol";
import { NO_OUTPUT } from "./output";
import { leaseHolder } from "./thread-doc";
import { RunLogWriter } from "./event-log";
import type { QueuedRunStatus } from "./run-store";
import { ensureThread, startRun } from "./start";
import { checkRun } from "./check";

/** The largest request body a task carries itself (Cloud Tasks takes 1 MB per task, with its envelope). */
const TASK_BODY_CHARS = 512 * 1024;

/** The task queue (and its function) that runs background runs. */
const BACKGROUND_QUEUE = "backgroundRun";

/** What a task carries: who asked, which run, and the request's body as sent. */
export interface BackgroundTask {
  threadId: string;
  uid: string;
  runId: string;
  /** The request's body; absent when it was too big for a task (then kept with the run: `bodyKept`). */
  body?: unknown;
  bodyKept?: boolean;
  /** Who queued it, as their token said (access is checked again when it starts). */
  identity?: { email: string | null; emailVerified: boolean };
}

/**
 * Records a run and queues it on the task queue (the thread is created first when the body asks
 * `if_not_exists: "create"`); 409 when the thread is busy (unless `refuseBusy` is off and the
 * run's multitask strategy stops the busy run: interrupt, rollback). Returns the run's id. Access and quota
 * are checked again when the task starts it.
 */
export async function queueRun(
  caller: { uid: string; email?: string | null; emailVerified?: boolean },
  threadId: string,
  body: unknown,
  { refuseBusy = true } = {},
): Promise<string> {
  const { uid } = caller;
  const checked = checkRun(body);
  const store = await threadStore();
  if (checked.body.if_not_exists === "create")
    await ensureThread(store, await checkpointSaver(), threadId, uid);
  const busy = leaseHolder(await store.get(threadId, uid));
  if (busy && (refuseBusy || (checked.body.multitask_strategy ?? "reject") === "reject")) {
    throw new QuarryError(
      "conflict:run",
      `Thread ${threadId} is already running: wait for it, or cancel it.`,
    );
  }
  const runId = randomUUID();
  const runs = await runStore();
  await runs.createQueued(threadId, runId, {
    strategy: checked.body.multitask_strategy ?? "reject",
    uid,
  });
  // A body a task cannot carry (over TASK_BODY_CHARS: a question with images) waits beside the run.
  const json = JSON.stringify(body);
  const kept = json.length > TASK_BODY_CHARS;
  if (kept) await runs.keepBody(threadId, runId, json, config().runLogTtlMs);
  const task: BackgroundTask = {
    threadId,
    uid,
    runId,
    ...(kept ? { bodyKept: true } : { body }),
    identity: { email: caller.email ?? null, emailVerified: caller.emailVerified === true },
  };
  await enqueueTask(BACKGROUND_QUEUE, task).catch(async (err: unknown) => {
    // Not queued: its document must not stay pending (a join would wait on it for ever).
    await runs
      .setStatus(threadId, runId, "error", {
        error: { error: "unavailable:run", message: "The run could not be queued: send it again." },
      })
      .catch(() => {});
    throw err;
  });
  return runId;
}

/** The task-queue function's body: runs a queued run to its end, its events into its log. */
export async function runInBackground(task: BackgroundTask): Promise<void> {
  const { threadId, uid, runId, identity } = task;
  const runs = await runStore();
  const setStatus = (status: QueuedRunStatus, extra: { error?: unknown } = {}) =>
    runs
      .setStatus(threadId, runId, status, extra)
      .catch((err: unknown) => logger.warn("run status not stored", { threadId, runId, err: String(err) }));
  // Claimed once: a task delivered twice, or a run its client gave up on before it started, does not run.
  if (!(await runs.moveQueued(threadId, runId, "pending", "running"))) {
    logger.info("queued run not started: no longer pending", { threadId, runId });
    return;
  }
  try {
    const checked = checkRun(task.bodyKept ? JSON.parse(await runs.takeBody(threadId, runId)) : task.body);
    // Checked again now, past the members cache: someone removed since the run was queued must not run.
    const access = await resolveAccess(
      { uid, email: identity?.email ?? undefined, emailVerified: identity?.emailVerified === true },
      { fresh: true },
    );
    const caller = { uid, email: identity?.email ?? null, access };
    const outcome = await startRun(
      caller,
      threadId,
      { ...checked, modes: [...STREAM_MODES] },
      NO_OUTPUT,
      runId,
    );
    await setStatus(outcome.status, outcome.error ? { error: outcome.error } : {});
  } catch (err) {
    // Refused before it ran (the thread got busy meanwhile, was deleted…): say so in its log too,
    // so whoever joins it learns why instead of waiting.
    const { body } = toErrorBody(err);
    const { Timestamp } = await import("firebase-admin/firestore");
    const log = new RunLogWriter(runs.log(threadId, runId), {
      ttlMs: config().runLogTtlMs,
      timestamp: Timestamp,
    });
    log.append("metadata", { run_id: runId, attempt: 1 });
    log.append("error", body);
    await log.close({ status: "error" }).catch(() => {});
    await setStatus("error", { error: body });
  }
}

/**
 * Queueing a run's watchdog (runs/continuation.ts): kept apart so that starting a run, and a run
 * handing itself off, queue one without loading the continuation's code.
 */
import { config } from "../config";
import { enqueueTask } from "../services";

/** The task queue (and its function) of run watchdogs. */
const WATCHDOG_QUEUE = "runWatchdog";

/** A watchdog task: attempt `attempt` of run `runId` on `threadId`. */
export interface WatchTask {
  threadId: string;
  runId: string;
  attempt: number;
}

/**
 * Queues attempt `attempt`'s watchdog: first delivered at the lease's length plus an interval, or
 * at once (`now`: a run handed off on purpose). Its id is unique per run, attempt and purpose, so
 * a second queueing is refused by the queue and ignored here.
 */
export async function queueWatchdog(task: WatchTask, { now = false } = {}): Promise<void> {
  const { runContinuations, runLeaseSeconds, runWatchdogSeconds } = config();
  if (!runContinuations) return;
  const id = `${task.runId}-${now ? "h" : "w"}${task.attempt}`;
  const delay = now ? 0 : runLeaseSeconds + runWatchdogSeconds;
  await enqueueTask(WATCHDOG_QUEUE, task, { id, scheduleDelaySeconds: delay }).catch((err: unknown) => {
    if ((err as { code?: string }).code?.endsWith("task-already-exists")) return;
    throw err;
  });
}

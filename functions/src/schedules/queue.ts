/**
 * The `scheduledRun` task queue: the tick (and "run now") enqueue one task per claimed schedule;
 * the task-queue function (functions/src/index.ts) runs it (run.ts). A run gets its own task so a
 * slow question never holds the tick, and each runs to its end with its CPU.
 */
import { enqueueTask } from "../services";

/** The task queue (and its function) that runs scheduled questions. */
const SCHEDULED_QUEUE = "scheduledRun";

/** What a task carries: the schedule and the claim its run takes (once). */
export interface ScheduledTask {
  scheduleId: string;
  claim: string;
}

/** Queues a claimed schedule's run. */
export async function enqueueScheduledRun(task: ScheduledTask): Promise<void> {
  await enqueueTask(SCHEDULED_QUEUE, task);
}

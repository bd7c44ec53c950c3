/**
 * Following a run from any instance: whether the thread knows it, when it stops holding the thread
 * (released, taken over, or its lease run out), when it has ended, and the thread's values after.
 * The channels' rejoin routes (http/run-routes/join.ts, v2's event streams) are built on these.
 */
import { config } from "../config";
import { QuarryError } from "../errors";
import { agentGraph } from "./runtime";
import { toThreadState } from "./serialize";
import { leaseHolder, type ThreadDoc } from "./thread-doc";
import { followRunLog } from "./event-log";
import type { RunStore } from "./run-store";

/**
 * 404 unless the thread knows the run: it holds the lease, ran last, left a log, or is a queued
 * background run (its run document).
 */
export async function ensureKnownRun(runs: RunStore, threadId: string, runId: string, doc: ThreadDoc) {
  if (leaseHolder(doc) === runId || doc.lastRunId === runId) return;
  if (!(await runs.hasRecords(threadId, runId))) {
    throw new QuarryError("not_found:run", `Run ${runId} not found on thread ${threadId}.`);
  }
}

/** Resolves once `runId` no longer holds the thread (released, or its lease run out), or on `signal`. */
export function untilReleased(
  runs: RunStore,
  threadId: string,
  runId: string,
  signal?: AbortSignal,
): Promise<void> {
  return new Promise((resolve) => {
    let done = false;
    let stop = () => {};
    const finish = () => {
      if (done) return;
      done = true;
      stop();
      resolve();
    };
    if (signal?.aborted) return finish();
    signal?.addEventListener("abort", finish, { once: true });
    stop = watchRunHeld(runs, threadId, runId, finish);
    if (done) stop();
  });
}

/**
 * Calls `gone` once `runId` no longer holds the thread: released, taken over, its lease run out, or
 * the watch failed. A background run queued but not started yet (its run document says `pending`,
 * or `running` before its lease is taken) is not gone: its task has yet to run it.
 */
export function watchRunHeld(runs: RunStore, threadId: string, runId: string, gone: () => void): () => void {
  let timer: NodeJS.Timeout | undefined;
  let done = false;
  const fire = () => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    stop();
    gone();
  };
  const stop = runs.watchRun(threadId, runId, {
    runDoc: true,
    onChange: ({ held, run }) => {
      clearTimeout(timer);
      if (held || run?.status === "pending") return; // running, or its task has not started it yet
      if (run?.status === "running") {
        // Started, lease not taken yet: give it a lease's time to take it.
        timer = setTimeout(fire, config().runLeaseMs);
        timer.unref();
        return;
      }
      fire();
    },
    onError: fire,
  });
  if (done) stop();
  return () => {
    done = true;
    clearTimeout(timer);
    stop();
  };
}

/** Waits until the run has ended (its log's end marker, or the run lost), however long it is pending. */
export async function untilEnded(runs: RunStore, threadId: string, runId: string): Promise<void> {
  await followRunLog(runs.log(threadId, runId), {
    after: Number.MAX_SAFE_INTEGER,
    onEvent: () => {},
    watchRun: (gone) => watchRunHeld(runs, threadId, runId, gone),
  });
  // The end marker lands just before the release: the caller may start the next run at once.
  await untilReleased(runs, threadId, runId);
}

/** The thread's state as the Agent Server's join and wait answer it: its values. */
export async function finalValues(threadId: string) {
  const graph = await agentGraph();
  const snap = await graph.getState({ configurable: { thread_id: threadId } });
  return toThreadState(snap, threadId);
}

/**
 * A v2 run command's run: queued like a background run (an HTTPS function has no CPU once its
 * response is sent), and the command answered once the run holds the thread — or with why it could
 * not start, or after giving it up when it did not start within the lease (a run given up on never
 * starts later).
 */
import { config } from "../../config";
import { QuarryError } from "../../errors";
import { runStore } from "../../runs/runtime";
import { queueRun } from "../../runs/background";
import type { RunStore } from "../../runs/run-store";
import { ProtocolError } from "./errors";
import { runSeqBase } from "./events";

/** Who asks on which thread, and the response's meta a run fills in. */
export interface RunCtx {
  uid: string;
  email?: string | null;
  emailVerified?: boolean;
  threadId: string;
  /** `applied_through_seq` once a run holds the thread. */
  meta: { applied_through_seq?: number };
}

/**
 * Queues the run and waits until it holds the thread (its lease taken) — or has ended already, or
 * was refused (its run document says why: quota, access, a busy thread). A client that opens its
 * event stream after this answer finds the run as the thread's latest.
 */
export async function startQueued(ctx: RunCtx, body: Record<string, unknown>): Promise<string> {
  const runId = await queueRun(ctx, ctx.threadId, body, { refuseBusy: false });
  const runs = await runStore();
  const runNo = await untilStarted(runs, ctx.threadId, runId, config().runLeaseMs);
  // Every event of this run is above this seq, every earlier event of the thread at or below it.
  if (runNo !== undefined) ctx.meta.applied_through_seq = runSeqBase(runNo);
  return runId;
}

/** Resolves with the run's number once it holds the thread (undefined if it ended before that was seen). */
function untilStarted(
  runs: RunStore,
  threadId: string,
  runId: string,
  ms: number,
): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const stops: (() => void)[] = [];
    let settled = false;
    // Not started in time (or the listeners failed): the run is given up on — unless its task has
    // claimed it meanwhile, and then it is on its way and its id is the answer. A run given up on
    // never starts later (its task finds it no longer pending), so a retry cannot answer twice.
    const giveUp = (why: unknown) => {
      if (settled) return;
      // Quarry's code goes with it (`quarry_error: unavailable:run`), as for every refusal.
      const late = new QuarryError(
        "unavailable:run",
        "The answer did not start in time (the task queue did not run it): try again in a moment.",
      );
      runs
        .moveQueued(threadId, runId, "pending", "error", {
          error: { error: "unavailable:run", message: late.message },
        })
        .then(
          (gaveUp) => (gaveUp ? done(why instanceof Error ? why : late) : done()),
          () => done(late),
        );
    };
    const timer = setTimeout(() => giveUp(undefined), ms);
    function done(err?: unknown, runNo?: number) {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      stops.forEach((s) => s());
      if (err) reject(err);
      else resolve(runNo);
    }
    stops.push(
      runs.watchRun(threadId, runId, {
        runDoc: true,
        onChange: ({ thread, run }) => {
          if (thread?.lastRunId === runId) return done(undefined, thread.runNo);
          if (run?.status === "error") {
            // Failed after it took the thread (its error is in its events; the thread's change may
            // not have reached this listener yet), or refused before: the thread says which.
            runs.threadDoc(threadId).then((doc) => {
              if (doc?.lastRunId === runId) done(undefined, doc.runNo);
              else done(refusal(run.error));
            }, giveUp);
          } else if (run?.status && run.status !== "pending" && run.status !== "running") done();
        },
        onError: giveUp,
      }),
    );
  });
}

/** Why a queued run could not start, from its run document's error body (its code checked). */
function refusal(body: unknown): Error {
  const b = body as { error?: unknown; message?: unknown } | undefined;
  if (b?.error && b.message) return QuarryError.fromWire(b);
  return new ProtocolError("unknown_error", "The answer could not start: try again.");
}

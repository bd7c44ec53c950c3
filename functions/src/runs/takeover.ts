/**
 * The transactions that move a run between instances (durable runs, runs/continuation.ts): an
 * instance letting its run go on purpose (its client left for good), a watchdog taking a lapsed
 * run over as its next attempt, and the fence the last checkpoint of an attempt is committed with.
 */
import type { WriteBatch } from "firebase-admin/firestore";
import type { RunOutcome } from "../contract/protocol";
import type { RunStore } from "./run-store";
import type { ThreadDoc } from "./thread-doc";

/** Firestore's ALREADY_EXISTS: a fence or log document someone else created first. */
const ALREADY_EXISTS = 6;

export interface TakeOverArgs {
  threadId: string;
  runId: string;
  /** The attempt that lapsed; the takeover becomes `from + 1`. */
  from: number;
  leaseMs: number;
  holder: string;
  /** How long the new log document lives (the run log's TTL). */
  ttlMs: number;
  /** The run has an event log (QUARRY_RUN_LOG): a hand-over document continues it. */
  log: boolean;
  /** Taken to be closed, not run (a cancelled run, or one out of continuations): a cancel does not stop it. */
  closing?: boolean;
}

/**
 * What a takeover got: the lease as attempt `from + 1` and the log's next document, or why not —
 * `lost` (not this run's lapsed attempt any more), `fenced` (the attempt had committed the run's
 * last checkpoint), or `ended` (its log has its end marker: it only failed to let go).
 */
export type TakenOver =
  { attempt: number; nextDoc: number; lastId: number } | "lost" | "fenced" | { ended: RunOutcome };

/**
 * Takes a lapsed run over, in one transaction: the thread's lease must still be run `runId`'s
 * attempt `from`, lapsed (or handed off) and not cancelled; it becomes attempt `from + 1`, held by
 * `holder`. The attempt's fence is created (the lapsed attempt can no longer commit the run's
 * last checkpoint) and so is the log's next document, a hand-over marker (its log writer can no
 * longer append). Two watchdogs racing: one transaction wins, the other finds `lost`. `fenced`:
 * the lapsed attempt had already committed the run's last checkpoint.
 */
export async function takeOver(runs: RunStore, a: TakeOverArgs): Promise<TakenOver> {
  const { db, thread, timestamp } = runs.parts;
  const attempt = a.from + 1;
  try {
    return await db.runTransaction(async (tx) => {
      const run = ((await tx.get(thread(a.threadId))).data() as ThreadDoc | undefined)?.run;
      const now = Date.now();
      const lapsed = run && (run.expiresAt.toMillis() <= now || run.handoff);
      if (
        !run ||
        run.runId !== a.runId ||
        (run.attempt ?? 0) !== a.from ||
        !lapsed ||
        (run.cancel && !a.closing)
      )
        return "lost" as const;
      const last = a.log
        ? await tx.get(runs.log(a.threadId, a.runId).orderBy("n", "desc").limit(1))
        : undefined;
      const top = last?.docs[0];
      const end = top?.get("end") as { status: RunOutcome } | undefined;
      if (end) return { ended: end.status };
      const n = top ? (top.get("n") as number) : -1;
      const lastId = top ? ((top.get("lastId") as number) ?? 0) : 0;
      const expireAt = timestamp.fromMillis(now + a.ttlMs);
      // `closing`: this takeover only closes the run, so the lapsed attempt's own charge stands.
      tx.create(runs.fence(a.threadId, a.runId, attempt), {
        holder: a.holder,
        expireAt,
        ...(a.closing ? { closing: true } : {}),
      });
      tx.update(thread(a.threadId), {
        "run.attempt": attempt,
        "run.holder": a.holder,
        "run.expiresAt": timestamp.fromMillis(now + a.leaseMs),
        "run.handoff": false,
      });
      if (a.log) {
        tx.create(runs.log(a.threadId, a.runId).doc(String(n + 1).padStart(6, "0")), {
          n: n + 1,
          bytes: Buffer.alloc(0),
          lastId: 0,
          expireAt,
          handover: { attempt, holder: a.holder },
        });
      }
      return { attempt, nextDoc: n + 2, lastId };
    });
  } catch (err) {
    if ((err as { code?: unknown }).code === ALREADY_EXISTS) return "fenced";
    throw err;
  }
}

/**
 * Lets the run go on purpose (its streamed client left for good): the lease lapses now and is
 * marked handed off, so the watchdog continues the run at once from its last checkpoint. False
 * when the lease is no longer this attempt's.
 */
export async function handOver(runs: RunStore, threadId: string, runId: string, attempt: number) {
  const { db, thread, timestamp } = runs.parts;
  return db.runTransaction(async (tx) => {
    const run = ((await tx.get(thread(threadId))).data() as ThreadDoc | undefined)?.run;
    if (!run || run.runId !== runId || (run.attempt ?? 0) !== attempt || run.cancel) return false;
    tx.update(thread(threadId), { "run.handoff": true, "run.expiresAt": timestamp.now() });
    return true;
  });
}

/**
 * What the commit of an attempt's last checkpoint adds: the next attempt's fence. If a takeover
 * created it first, the commit fails and nothing of this attempt's end is written.
 */
export function finalFence(runs: RunStore, threadId: string, runId: string, attempt: number, ttlMs: number) {
  const expireAt = runs.parts.timestamp.fromMillis(Date.now() + ttlMs);
  return (batch: WriteBatch) =>
    batch.create(runs.fence(threadId, runId, attempt + 1), { finishedBy: attempt, expireAt });
}

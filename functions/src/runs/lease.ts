/**
 * The run lease: one run per thread across all instances. It is taken in the commit of the run's
 * first checkpoint (RunCheckpointer's first put, see RunStore.claimLease), held while the run
 * goes on (renewed every third of its length, watched for a cancel flag set from any instance),
 * and released with the run's outcome. Every Firestore wait is bounded: the Firestore client
 * retries an unreachable call for minutes, and a lease that cannot be renewed in time may be lost.
 */
import * as logger from "firebase-functions/logger";
import type { MarkedEnd, RunStore, SeenThread } from "./run-store";
import type { WriteBatch } from "firebase-admin/firestore";
import { within } from "../storage";
import type { RunCheckpointer } from "./checkpointer";

export interface LeaseIds {
  threadId: string;
  runId: string;
  leaseMs: number;
  /** The attempt holding it (0: the run as started; k: its k-th continuation). */
  attempt: number;
}

export class RunLease {
  private renewal: NodeJS.Timeout | undefined;
  private unwatch = () => {};
  /** The thread document as the run's watch last saw it (the release rides on it: `releaseAlong`). */
  private seen: SeenThread | undefined;

  constructor(
    private readonly store: RunStore,
    private readonly saver: RunCheckpointer,
    private readonly ids: LeaseIds,
  ) {}

  /** Settles once the run's first checkpoint, and with it the lease, is committed (or refused: 404/409). */
  taken(): Promise<void> {
    return within(this.ids.leaseMs, this.saver.started, "taking the run lease");
  }

  /**
   * Holds the lease: `onCancel` when someone asks the run to stop, `onLost` when it could not be
   * renewed in time (stopping is safer than two writers on one thread).
   */
  hold(onCancel: () => void, onLost: () => void): void {
    const { threadId, runId, leaseMs, attempt } = this.ids;
    this.unwatch = this.store.watchCancel(threadId, runId, onCancel, (seen) => (this.seen = seen));
    this.renewal = setInterval(() => {
      const renewed = this.store.renewLease(threadId, runId, leaseMs, attempt);
      within(leaseMs / 3, renewed, "renewing the run lease").then(
        (ours) => ours || onLost(),
        (err: unknown) => {
          logger.warn("lease renewal failed", { threadId, runId, err: String(err) });
          onLost();
        },
      );
    }, leaseMs / 3);
    this.renewal.unref();
  }

  /** Stops renewing and watching (the run is ending). */
  unhold(): void {
    clearInterval(this.renewal);
    this.unwatch();
  }

  /**
   * After a run failed before its lease was known to be taken: once the graph has stopped
   * (`stopped`), either it made its first put — whose commit may still land — or it never will.
   * True when the lease is ours after all (it must then be released like any other).
   */
  async landedAfter(stopped: Promise<unknown>): Promise<boolean> {
    const half = this.ids.leaseMs / 2;
    await within(half, stopped, "stopping the run").catch(() => {});
    if (!this.saver.firstPutMade) return false;
    return within(half, this.saver.started, "taking the run lease").then(
      () => true,
      () => false,
    );
  }

  /** Gives up a run that never started: nothing more is written, and a lease commit still in flight is released whenever it lands. */
  abandon(): void {
    this.saver.close(new Error("the run did not start"));
    if (!this.saver.firstPutMade) return;
    const { threadId, runId } = this.ids;
    this.saver.started.then(
      () =>
        this.store
          .releaseLease(threadId, runId, "idle", undefined, undefined, undefined, this.ids.attempt)
          .catch(() => {}),
      () => {},
    );
  }

  /**
   * The release as writes of another commit (the run's last log write), from the thread document
   * as the watch last saw it and guarded by its version, with the attempt's end mark and the
   * charge; undefined when the watch saw none showing this attempt holding the run.
   */
  releaseAlong(end: Omit<MarkedEnd, "attempt">): ((batch: WriteBatch) => void) | undefined {
    const { threadId, runId, attempt } = this.ids;
    return this.store.releaseAlong(threadId, this.seen, runId, { ...end, attempt });
  }

  /**
   * Releases the lease with the attempt's end mark and the charge (one transaction, bounded):
   * true when a commit carrying them had landed already, false when written now, undefined when it
   * failed (logged; the lease then runs out).
   */
  async releaseMarked(end: Omit<MarkedEnd, "attempt">): Promise<boolean | undefined> {
    const { threadId, runId, leaseMs, attempt } = this.ids;
    return within(
      leaseMs / 2,
      this.store.releaseMarked(threadId, runId, { ...end, attempt }),
      "releasing the run lease",
    ).catch((err: unknown) => {
      logger.error("lease release failed", { threadId, runId, err: String(err) });
      return undefined;
    });
  }

  /** The charge alone, with the end mark (once: not if a commit carrying it landed); failures logged. */
  async chargeMarked(end: Omit<MarkedEnd, "attempt">): Promise<void> {
    const { threadId, runId, leaseMs, attempt } = this.ids;
    await within(
      leaseMs / 2,
      this.store.chargeMarked(threadId, runId, { ...end, attempt }),
      "charging the quota",
    ).catch((err: unknown) => logger.error("usage not charged", { threadId, runId, err: String(err) }));
  }
}

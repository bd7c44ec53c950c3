/**
 * What a run does so that it can be continued if its instance stops (docs/runs.md, "What survives
 * what"): at each phase boundary its latest finished step is stored as its progress, with that
 * boundary's events; its last checkpoint is committed with the next attempt's fence; a streamed
 * run whose client left for good hands itself to a task at the next boundary. Used by the
 * executor; the continuing side is continuation.ts.
 */
import { hostname } from "node:os";
import type { WriteBatch } from "firebase-admin/firestore";
import * as logger from "firebase-functions/logger";
import { PROGRESS_NS, type RunCheckpointer } from "./checkpointer";
import type { LogCommit, RunLogWriter } from "./event-log";
import type { RunStore } from "./run-store";
import { finalFence, handOver } from "./takeover";
import { queueWatchdog } from "./watchdog-queue";

/** This process, as the lease records its holder (`host:pid`). */
export const HOLDER = `${hostname()}:${process.pid}`;

/** A run's durability: which attempt this is, and where its records go. Absent when continuations are off. */
export interface Durability {
  attempt: number;
  ttlMs: number;
  checkpoints: {
    checkpointRef(
      threadId: string,
      ns: string,
      id: string,
    ): import("firebase-admin/firestore").DocumentReference;
  };
}

export class DurableRun {
  /** The client left for good: let the run go at the next boundary. */
  private handOffWanted = false;
  /** Settles once a hand-over is done (or failed: the lease then lapses and the watchdog takes it). */
  handedOff: Promise<void> | undefined;

  constructor(
    private readonly store: RunStore,
    private readonly saver: RunCheckpointer,
    private readonly ids: { threadId: string; runId: string },
    private readonly d: Durability,
    /** Stops the run once it is handed off. */
    private readonly stop: () => void,
  ) {}

  /** A phase boundary: the log's write carries the run's progress (and hands the run off if asked). */
  boundary(log: RunLogWriter | undefined, step?: number): void {
    const progress = this.saver.progress({ runId: this.ids.runId, attempt: this.d.attempt }, step);
    if (this.handOffWanted && !this.handedOff) return this.handOff(log, progress);
    if (!progress) return log?.boundary();
    if (log) log.boundary(progress);
    else void progress(() => {}).catch((err: unknown) => this.warn("progress not stored", err));
  }

  /** The streamed client is gone and the run outlives it: a task finishes it instead of this instance. */
  clientLeft(): void {
    this.handOffWanted = true;
  }

  /** The commit of the run's last checkpoint: the next attempt's fence, the progress deleted. */
  final(): (batch: WriteBatch) => void {
    const { threadId, runId } = this.ids;
    const fence = finalFence(this.store, threadId, runId, this.d.attempt, this.d.ttlMs);
    return (batch) => {
      fence(batch);
      batch.delete(this.d.checkpoints.checkpointRef(threadId, PROGRESS_NS, runId));
    };
  }

  /**
   * Hands the run off at this boundary: the step just starting is stopped before it does anything,
   * the progress so far (the step before) is stored with this boundary's events, the lease is
   * let go and a watchdog task queued to run now — it goes on from exactly here. `handedOff`
   * settles once that is done (the executor waits for it before it lets the request end).
   */
  private handOff(log: RunLogWriter | undefined, progress: LogCommit | undefined): void {
    this.stop();
    let stored!: () => void;
    const landed = new Promise<void>((resolve) => (stored = resolve));
    const commit: LogCommit = async (along) => {
      try {
        await (progress ?? ((a) => this.store.commitAlone(a)))(along);
      } finally {
        stored();
      }
    };
    if (log) log.boundary(commit);
    else void commit(() => {}).catch(() => {});
    const { threadId, runId } = this.ids;
    this.handedOff = landed
      .then(() => handOver(this.store, threadId, runId, this.d.attempt))
      .then(async (ours) => {
        if (!ours) return;
        await queueWatchdog({ threadId, runId, attempt: this.d.attempt }, { now: true });
        logger.info("run handed to a task: its client left", { threadId, runId });
      })
      .catch((err: unknown) =>
        this.warn("hand-over failed: the run is continued once its lease lapses", err),
      );
  }

  private warn(what: string, err: unknown) {
    logger.warn(what, { ...this.ids, err: String(err) });
  }
}

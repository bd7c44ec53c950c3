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
  private handingOff = false;

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
    if (!progress) return log?.boundary();
    const commit: LogCommit = this.handOffWanted && !this.handingOff ? this.thenHandOff(progress) : progress;
    if (log) log.boundary(commit);
    else void commit(() => {}).catch((err: unknown) => this.warn("progress not stored", err));
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

  /** Once the progress (with its events) is stored, the lease is let go and a task continues from there. */
  private thenHandOff(progress: LogCommit): LogCommit {
    this.handingOff = true;
    return async (along) => {
      await progress(along);
      const { threadId, runId } = this.ids;
      if (await handOver(this.store, threadId, runId, this.d.attempt)) {
        await queueWatchdog({ threadId, runId, attempt: this.d.attempt }, { now: true });
        logger.info("run handed to a task: its client left", { threadId, runId });
        this.stop();
      }
    };
  }

  private warn(what: string, err: unknown) {
    logger.warn(what, { ...this.ids, err: String(err) });
  }
}

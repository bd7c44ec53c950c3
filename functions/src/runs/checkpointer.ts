/**
 * The checkpointer one run uses: a per-run front on the instance's FirestoreCheckpointer that keeps
 * Firestore off the path to the first answer token without giving up what the API promises.
 *
 * - `getTuple` answers with the tuple read before the run started (read together with the thread
 *   document: the query, then one getAll).
 * - The run's first `put` (LangGraph's input checkpoint; a turn goes in as a Command, see
 *   `turnInput`, so it holds the user's message in `messages`) is committed together with the run's
 *   lease by `claim`, in one commit. With durability "sync" LangGraph awaits it before the next
 *   step, so the message is stored before any model call.
 * - Later `put`s and `putWrites` resolve at once. A run keeps one more checkpoint: its last,
 *   written when the run ends (`drain()`) as the child of the first, with its pending writes (an
 *   interrupt's question, say); the first then keeps none of the pending writes made on it (one
 *   commit a run fewer). The steps in between are folded into it (their new channel versions are
 *   its too), as LangGraph's durability "exit" does: the thread's history shows two
 *   checkpoints per turn — the question and the end — instead of one per node, so a client's
 *   history window (the SDK's `useStream` fetches the last 10) holds the checkpoints it branches
 *   from (an edit: the question's parent, the previous turn's end; a regenerate: the answer's
 *   parent, the question, which runs the turn again). A crash before the end keeps the question
 *   and loses the turn's steps, which the next turn redoes.
 *
 * So a run makes three Firestore round trips before its first token: the checkpoint query, one
 * getAll (blobs + thread document), one commit (checkpoint + lease).
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import {
  BaseCheckpointSaver,
  emptyCheckpoint,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointTuple,
  type PendingWrite,
} from "@langchain/langgraph-checkpoint";
import type { WriteBatch } from "firebase-admin/firestore";

import type { FirestoreCheckpointer } from "../checkpointer/index.js";
import { NULL_TASK_ID, hasPendingTasks } from "./langgraph-internals";
import type { LogCommit } from "./event-log";

/**
 * The namespace of runs' progress checkpoints: one document per run (`quarry~progress!{runId}`),
 * beside the thread's chain and never in its history, holding the run's latest finished step so a
 * continuation (runs/continuation.ts) resumes there instead of at the question.
 */
export const PROGRESS_NS = "quarry~progress";

/** What a progress checkpoint's metadata says of its run. */
export interface ProgressMark {
  runId: string;
  attempt: number;
  /** The run's checkpoint in the chain: the parent of the checkpoint it ends with. */
  kept: string;
  /** The progress checkpoint's own id (its document is named after the run). */
  id: string;
}

/**
 * A thread's empty start, committed with its document (`along` adds the document): LangGraph's
 * empty checkpoint with the metadata its loop gives a new thread (step -2). The first run's first
 * checkpoint already holds the question (the turn goes in as a Command), so without this start
 * the first question would have no parent to fork from: a client editing it (from the question's
 * `parent_checkpoint`) would append a turn instead of replacing the question.
 */
export function rootCommit(saver: FirestoreCheckpointer, threadId: string) {
  return (along: (batch: WriteBatch) => void) =>
    saver.putAlong(
      { configurable: { thread_id: threadId, checkpoint_ns: "" } },
      emptyCheckpoint(),
      { source: "input", step: -2, parents: {} },
      {},
      along,
    );
}

/** Commits the first checkpoint through `put`, adding the run's own writes to the same batch. */
export type Claim = (put: (along: (batch: WriteBatch) => void) => Promise<unknown>) => Promise<void>;

/**
 * Whether a run holds its later checkpoint writes back until it ends — and so goes in as a
 * Command whose first checkpoint holds the question (one decision; see `turnInput`). It needs a
 * checkpoint at rest — the thread's latest, or an earlier one a client forks from (an edited
 * question starts from the previous turn's end or the thread's empty start) — with no tasks left
 * to run (a stopped run's, or a mid-turn checkpoint's: a Command would run them again; plain input
 * discards them). A resumed run holds back too: its first checkpoint comes after the clarify
 * node, which has nothing to redo, and holds the user's answer.
 */
export function holdsBack(run: { resume: boolean; tuple: CheckpointTuple | undefined }): boolean {
  return run.resume || !hasPendingTasks(run.tuple?.checkpoint);
}

export class RunCheckpointer extends BaseCheckpointSaver {
  /** Settles with the run's first put: resolved once the checkpoint and the lease are committed. */
  readonly started: Promise<void>;
  /** Whether LangGraph has made its first put yet. */
  firstPutMade = false;
  private settleStarted!: { resolve: () => void; reject: (err: unknown) => void };
  private prefetchServed = false;
  private readonly queue: Array<{ op: () => Promise<unknown>; done: (err?: unknown) => void }> = [];
  /** The run is ending: what a held-back run queued is written now (`drain`). */
  private draining = false;
  /** The latest checkpoint LangGraph made and nothing has kept yet (folded steps included). */
  private latest?: {
    config: RunnableConfig;
    checkpoint: Checkpoint;
    metadata: CheckpointMetadata;
    versions: ChannelVersions;
    writes: Array<[PendingWrite[], string, string | undefined]>;
  };
  /** The id of the run's last checkpoint written (or queued): the parent of the next one kept. */
  private keptId?: string;
  private pumping?: Promise<void>;
  private failure?: { err: unknown };
  /** Called once if a queued write fails: the run should stop. */
  onFailure: (err: unknown) => void = () => {};
  /** A continuation: the run's last checkpoint stores every channel (its parent predates the steps before the hand-over). */
  private full = false;
  /** Writes on the kept checkpoint while it is the run's last (stored only if the run ends there). */
  private readonly keptWrites: Array<{
    config: RunnableConfig;
    writes: PendingWrite[];
    taskId: string;
    taskPath?: string;
  }> = [];
  /** The checkpoint the last progress write held. */
  private progressed?: string;
  /** The last few checkpoints LangGraph made in this run, by their step (the progress picks one). */
  private readonly byStep = new Map<number, { checkpoint: Checkpoint; metadata: CheckpointMetadata }>();

  constructor(
    private readonly saver: FirestoreCheckpointer,
    private readonly prefetched: { threadId: string; checkpointId?: string; tuple?: CheckpointTuple },
    private readonly claim: Claim,
    /**
     * Hold later writes back until the run ends (`drain`; {@link holdsBack}). Off for a run from a checkpoint
     * with tasks left (plain input, whose first checkpoint holds the question only as pending
     * input): every step is written and awaited as usual.
     */
    readonly holdBack = true,
  ) {
    super(saver.serde);
    this.started = new Promise<void>((resolve, reject) => {
      this.settleStarted = { resolve, reject };
    });
    this.started.catch(() => {}); // observed by the executor
  }

  /**
   * Takes the lease in a commit of its own (`commit` writes the batch `claim` fills), for a run
   * whose first put would come only after a model call (a rerun: no input checkpoint).
   */
  async claimAlone(commit: (along: (batch: WriteBatch) => void) => Promise<unknown>): Promise<void> {
    this.firstPutMade = true;
    this.keptId = this.prefetched.tuple?.config.configurable?.checkpoint_id as string | undefined;
    const done = this.claim(commit);
    done.then(
      () => this.settleStarted.resolve(),
      (err: unknown) => this.settleStarted.reject(err),
    );
    await done;
  }

  /**
   * A continuation (runs/continuation.ts): the lease is already this attempt's and the run's
   * checkpoint in the chain is `kept`; the graph resumes from the prefetched tuple (its progress).
   */
  continueFrom(kept: string): void {
    this.firstPutMade = true;
    this.keptId = kept;
    this.full = true;
    this.settleStarted.resolve();
  }

  /**
   * The run's progress, when a step finished since the last: a commit that stores its latest
   * checkpoint as the run's progress checkpoint (PROGRESS_NS) together with what the caller adds
   * — the event log's write of the same boundary, so a stored progress always has its events.
   */
  progress(run: { runId: string; attempt: number }, step?: number): LogCommit | undefined {
    const l = this.latest;
    if (!this.holdBack || !l || !this.keptId || this.failure) return;
    // The step before the one starting (`step`): the graph may have gone further meanwhile, and
    // the events of those steps are not in this boundary's log write.
    const { checkpoint: at, metadata: meta } =
      (step !== undefined ? this.byStep.get(step - 1) : undefined) ?? l;
    if (at.id === this.progressed) return;
    this.progressed = at.id;
    const mark: ProgressMark = { ...run, kept: this.keptId, id: at.id };
    const config = {
      configurable: { thread_id: l.config.configurable?.thread_id, checkpoint_ns: PROGRESS_NS },
    };
    const metadata = { ...meta, quarry_run: mark } as CheckpointMetadata;
    // One document per run, overwritten at each boundary; every channel is stored (it has no parent).
    const checkpoint = { ...at, id: run.runId };
    return (along) => this.saver.putAlong(config, checkpoint, metadata, { ...at.channel_versions }, along);
  }

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const c = config.configurable ?? {};
    if (
      !this.prefetchServed &&
      String(c.thread_id) === this.prefetched.threadId &&
      (c.checkpoint_ns ?? "") === "" &&
      (c.checkpoint_id ?? undefined) === this.prefetched.checkpointId
    ) {
      this.prefetchServed = true;
      return this.prefetched.tuple;
    }
    await this.drain();
    return this.saver.getTuple(config);
  }

  async *list(config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple> {
    await this.drain();
    yield* this.saver.list(config, options);
  }

  async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    const c = config.configurable ?? {};
    const stored = {
      configurable: {
        thread_id: c.thread_id,
        checkpoint_ns: c.checkpoint_ns ?? "",
        checkpoint_id: checkpoint.id,
      },
    };
    if (!this.firstPutMade) {
      this.firstPutMade = true;
      this.keptId = checkpoint.id;
      const done = this.claim((along) =>
        this.saver.putAlong(config, checkpoint, metadata, newVersions, along),
      );
      done.then(
        () => this.settleStarted.resolve(),
        (err: unknown) => this.settleStarted.reject(err),
      );
      await done;
      return stored;
    }
    if (this.holdBack) {
      // Kept at the end (drain) unless a later step supersedes it; its versions carry over.
      const versions = { ...(this.latest?.versions ?? {}), ...newVersions };
      this.byStep.set(metadata.step, { checkpoint, metadata });
      this.byStep.delete(metadata.step - 4);
      this.latest = { config, checkpoint, metadata, versions, writes: [] };
      return stored;
    }
    this.keptId = checkpoint.id;
    await this.enqueue(() => this.saver.put(config, checkpoint, metadata, newVersions));
    return stored;
  }

  async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath?: string) {
    // A turn given as a Command: LangGraph records its update as null-task writes on the checkpoint
    // it started from, then applies them into the run's first checkpoint. Stored, they would be
    // applied again to any later run forked from that older checkpoint; the first checkpoint
    // (committed before anything else of the run) already holds them, so they are not stored.
    if (taskId === NULL_TASK_ID && !this.firstPutMade) return;
    const of = config.configurable?.checkpoint_id as string | undefined;
    if (this.holdBack && this.latest && of === this.latest.checkpoint.id) {
      this.latest.writes.push([writes, taskId, taskPath]);
      return;
    }
    if (this.holdBack) {
      // Writes on the run's kept checkpoint (its first) are stored only if the run ends there (an
      // error, say); once a later checkpoint exists it holds their effect, as with LangGraph's
      // durability "exit". Writes of a folded step: that checkpoint is not kept at all.
      if (of === this.keptId && !this.latest) this.keptWrites.push({ config, writes, taskId, taskPath });
      return;
    }
    await this.enqueue(() => this.saver.putWrites(config, writes, taskId, taskPath));
  }

  /**
   * Queues the latest checkpoint (as the child of the last kept one) and its pending writes;
   * `along` adds to its commit (the run's end: the next attempt's fence, the progress deleted).
   */
  private keepLatest(along?: (batch: WriteBatch) => void): void {
    const l = this.latest;
    const kept = this.keptWrites.splice(0);
    if (this.failure) return;
    if (!l) {
      // The run ended on its first checkpoint: what its tasks wrote (an error) is stored on it.
      for (const w of kept)
        void this.enqueue(() => this.saver.putWrites(w.config, w.writes, w.taskId, w.taskPath));
      return;
    }
    this.latest = undefined;
    const c = l.config.configurable ?? {};
    const ids = { thread_id: c.thread_id, checkpoint_ns: c.checkpoint_ns ?? "" };
    const parent = { configurable: { ...ids, ...(this.keptId ? { checkpoint_id: this.keptId } : {}) } };
    this.keptId = l.checkpoint.id;
    const versions = this.full ? { ...l.checkpoint.channel_versions } : l.versions;
    void this.enqueue(() => this.saver.putAlong(parent, l.checkpoint, l.metadata, versions, along));
    const at = { configurable: { ...ids, checkpoint_id: l.checkpoint.id } };
    for (const [writes, taskId, taskPath] of l.writes)
      void this.enqueue(() => this.saver.putWrites(at, writes, taskId, taskPath));
  }

  async deleteThread(threadId: string): Promise<void> {
    await this.saver.deleteThread(threadId);
  }

  override getNextVersion(current: number | undefined): number {
    return this.saver.getNextVersion(current);
  }

  /**
   * Keeps the latest checkpoint and writes everything queued; rejects with the first failure.
   * `along` (the run's end) rides with the last checkpoint's commit.
   */
  async drain(along?: (batch: WriteBatch) => void): Promise<void> {
    this.keepLatest(along);
    this.draining = true;
    while (this.queue.length > 0 || this.pumping) {
      this.pump();
      await this.pumping;
    }
    if (this.failure) throw this.failure.err;
  }

  /**
   * Drops what is still queued and refuses later writes: the run no longer owns the thread (its
   * lease is lost or about to be released), so nothing more of it may be written.
   */
  close(why: Error): void {
    this.failure ??= { err: why };
    this.latest = undefined;
    for (const item of this.queue.splice(0)) item.done(why);
  }

  /** Queues a write; the promise settles once it is written (or dropped after a failure). */
  private enqueue(op: () => Promise<unknown>): Promise<void> {
    if (this.failure) {
      const refused = Promise.reject(this.failure.err as Error);
      refused.catch(() => {}); // reported through onFailure and drain; never an unhandled rejection
      return refused;
    }
    const written = new Promise<void>((resolve, reject) =>
      this.queue.push({ op, done: (err) => (err === undefined ? resolve() : reject(err as Error)) }),
    );
    written.catch(() => {}); // a held-back write's failure is reported through onFailure and drain
    if (this.draining || !this.holdBack) this.pump();
    return written;
  }

  private pump() {
    if (this.pumping || this.queue.length === 0) return;
    this.pumping = (async () => {
      try {
        await this.started;
      } catch (err) {
        // The first checkpoint was never written: these would hang off nothing.
        for (const item of this.queue.splice(0)) item.done(err);
        return;
      }
      while (this.queue.length > 0 && !this.failure) {
        const item = this.queue.shift()!;
        try {
          await item.op();
          item.done();
        } catch (err) {
          this.failure = { err };
          item.done(err);
          for (const rest of this.queue.splice(0)) rest.done(err);
          this.onFailure(err);
        }
      }
    })().finally(() => {
      this.pumping = undefined;
      if ((this.draining || !this.holdBack) && this.queue.length > 0) this.pump();
    });
  }
}

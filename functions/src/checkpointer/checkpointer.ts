import type {
  DocumentReference,
  DocumentSnapshot,
  Firestore,
  Timestamp,
  WriteBatch,
} from "@google-cloud/firestore";
import {
  BaseCheckpointSaver,
  getCheckpointId,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  type DeltaChannelHistory,
  type PendingWrite,
} from "@langchain/langgraph-checkpoint";
import type { RunnableConfig } from "@langchain/core/runnables";
import { CheckpointerCache } from "./cache";
import { FirestoreCheckpointerError, withContext } from "./errors";
import { CHECKPOINTS, checkpointDocId, keyOf } from "./layout";
import {
  blobIdsOf,
  decodeWrites,
  fetchBlobs,
  fetchBlobsAlong,
  isCheckpoint,
  loaded,
  sendBlobIds,
  toTuple,
  type LoadedDoc,
} from "./read";
import { deleteThreadDocs, deltaHistory } from "./history";
import { listTuples } from "./list";
import { checkedOptions, type FirestoreCheckpointerOptions } from "./options";
import { writeCheckpoint, writePendingWrites, type WriteContext } from "./write";

export type { FirestoreCheckpointerOptions } from "./options";

/**
 * LangGraph checkpointer on Cloud Firestore.
 *
 * Each checkpoint is one document holding the checkpoint's bookkeeping, its metadata, its pending
 * writes and one small reference per channel; values live in content-addressed blob documents, so
 * a message is stored once however many checkpoints include it, values above 1 MB are chunked,
 * and `getTuple` costs two round trips (the document, then one `getAll` of its blobs) whatever the
 * thread's length. `put` and `putWrites` each commit one batch. Document ids derive from LangGraph's
 * ids, so retries never duplicate. Deploy the indexes in `firestore.indexes.json` with it.
 *
 * @example
 * ```ts
 * import { getFirestore } from "firebase-admin/firestore";
 * import { FirestoreCheckpointer } from "@quarry/functions/checkpointer";
 *
 * const checkpointer = new FirestoreCheckpointer({
 *   firestore: getFirestore(),
 *   rootCollection: "checkpoints",
 *   ttl: { days: 30 }, // optional: pair with a TTL policy on `expireAt`
 * });
 * const graph = workflow.compile({ checkpointer });
 * await graph.invoke(input, { configurable: { thread_id: "thread-1" } });
 * ```
 */
export class FirestoreCheckpointer extends BaseCheckpointSaver {
  readonly firestore: Firestore;
  readonly rootCollection: string;
  private readonly cache = new CheckpointerCache();
  private readonly ttl?: { days: number; field: string };
  private readonly maxCommitBytes: number;

  constructor(options: FirestoreCheckpointerOptions) {
    super(options?.serde);
    const { root, ttl, maxCommitBytes } = checkedOptions(options);
    this.firestore = options.firestore;
    this.rootCollection = root;
    this.maxCommitBytes = maxCommitBytes;
    if (ttl) this.ttl = ttl;
  }

  private threadPath(threadId: string): string {
    return `${this.rootCollection}/${keyOf(threadId)}`;
  }

  private docPath(threadId: string, ns: string, checkpointId: string): string {
    return `${this.threadPath(threadId)}/${CHECKPOINTS}/${checkpointDocId(ns, checkpointId)}`;
  }

  /**
   * The document of one checkpoint (its pending writes included, not its blobs), for an app that
   * deletes checkpoints of a namespace of its own in a commit of its own (a run's progress).
   */
  checkpointRef(threadId: string, ns: string, checkpointId: string) {
    return this.firestore.doc(this.docPath(threadId, ns, checkpointId));
  }

  private writeContext(): WriteContext {
    return {
      firestore: this.firestore,
      serde: this.serde,
      cache: this.cache,
      ttl: this.ttl,
      maxCommitBytes: this.maxCommitBytes,
    };
  }

  private blobs(docs: LoadedDoc[]) {
    return fetchBlobs(this.firestore, blobIdsOf(docs), this.cache, this.ttl?.field);
  }

  /** TASKS writes of the parent: only checkpoints older than format v4 need them (migration). */
  private async parentSends(doc: LoadedDoc): Promise<CheckpointPendingWrite[] | undefined> {
    if (!(doc.data.v < 4) || !doc.data.parent_checkpoint_id) return undefined;
    const snap = await this.firestore
      .doc(
        `${doc.threadPath}/${CHECKPOINTS}/${checkpointDocId(doc.data.checkpoint_ns, doc.data.parent_checkpoint_id)}`,
      )
      .get();
    if (!snap.exists) return [];
    const parent = loaded(snap);
    const blobs = await fetchBlobs(this.firestore, sendBlobIds(parent), this.cache, this.ttl?.field);
    return decodeWrites(this.serde, parent, blobs, (w) => w.c === "__pregel_tasks");
  }

  private async tuple(doc: LoadedDoc, blobs: Map<string, Buffer>): Promise<CheckpointTuple> {
    const sends = await this.parentSends(doc);
    return toTuple(this.serde, doc, blobs, sends, (v) => this.getNextVersion(v));
  }

  /** Remembers a document read in full, so the next put/putWrites need not read it. */
  private remember(doc: LoadedDoc) {
    const updateTime = doc.snap.updateTime;
    this.cache.rememberDoc(doc.path, {
      channels: doc.data.ch ?? {},
      writes: updateTime ? { updateTime, keys: new Set(Object.keys(doc.data.w ?? {})) } : undefined,
    });
  }

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    return (await this.getTupleAlong(config, [])).tuple;
  }

  /**
   * `getTuple` that also reads documents of the caller's own in the same `getAll` as the
   * checkpoint's blobs: an app that needs, say, its thread metadata whenever it loads a thread gets
   * both in getTuple's two round trips. Snapshots come back in the order of `along`. `readTime` is
   * when the checkpoint was read: an `along` document updated after it changed in between.
   */
  async getTupleAlong(
    config: RunnableConfig,
    along: DocumentReference[],
  ): Promise<{ tuple: CheckpointTuple | undefined; along: DocumentSnapshot[]; readTime?: Timestamp }> {
    const threadId = config.configurable?.thread_id as string | undefined;
    if (threadId === undefined || threadId === null) {
      return { tuple: undefined, along: along.length ? await this.firestore.getAll(...along) : [] };
    }
    const ns = (config.configurable?.checkpoint_ns as string | undefined) ?? "";
    const checkpointId = getCheckpointId(config);
    const ctx = { operation: "getTuple", threadId: String(threadId), checkpointNs: ns, checkpointId };
    return withContext(ctx, async () => {
      const threadPath = this.threadPath(String(threadId));
      let doc: LoadedDoc | undefined;
      let readTime: Timestamp | undefined;
      if (checkpointId) {
        const snap = await this.firestore.doc(this.docPath(String(threadId), ns, checkpointId)).get();
        readTime = snap.readTime;
        if (isCheckpoint(snap)) doc = loaded(snap);
      } else {
        const res = await this.firestore
          .collection(`${threadPath}/${CHECKPOINTS}`)
          .where("checkpoint_ns", "==", ns)
          .orderBy("checkpoint_id", "desc")
          .limit(1)
          .get();
        readTime = res.readTime;
        // The thread was deleted (perhaps by another instance): blobs this instance knew are gone.
        if (res.empty && ns === "") this.cache.forgetThread(threadPath);
        if (!res.empty) doc = loaded(res.docs[0]);
      }
      const fetched = await fetchBlobsAlong(
        this.firestore,
        doc ? blobIdsOf([doc]) : [],
        this.cache,
        this.ttl?.field,
        along,
      );
      if (!doc) return { tuple: undefined, along: fetched.along, readTime };
      this.remember(doc);
      return { tuple: await this.tuple(doc, fetched.blobs), along: fetched.along, readTime };
    });
  }

  /** Newest first; all namespaces without `checkpoint_ns`, all threads of the root without `thread_id`. */
  async *list(config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple> {
    const threadId = config.configurable?.thread_id as string | undefined;
    yield* listTuples(
      {
        firestore: this.firestore,
        serde: this.serde,
        root: this.rootCollection,
        checkpoints: threadId ? `${this.threadPath(String(threadId))}/${CHECKPOINTS}` : undefined,
        blobs: (docs) => this.blobs(docs),
        tuple: (doc, blobs) => this.tuple(doc, blobs),
      },
      config,
      options,
    );
  }

  async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    return this.putAlong(config, checkpoint, metadata, newVersions);
  }

  /**
   * `put` whose commit also carries writes of the caller's own (`along` adds them to the batch), so
   * a checkpoint and, say, an app's lease or status document change atomically in one round trip.
   * Give those writes a precondition (`update` with `lastUpdateTime`, or `exists`): if it fails,
   * nothing is written and the put rejects with a FirestoreCheckpointerError whose `cause` is
   * Firestore's error (code 9 FAILED_PRECONDITION or 5 NOT_FOUND), for the caller to re-read and
   * retry.
   */
  async putAlong(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
    along?: (batch: WriteBatch) => void,
  ): Promise<RunnableConfig> {
    const threadId = config?.configurable?.thread_id as string | undefined;
    const ns = (config?.configurable?.checkpoint_ns as string | undefined) ?? "";
    const ctx = { operation: "put", threadId, checkpointNs: ns, checkpointId: checkpoint?.id };
    if (threadId === undefined || threadId === null || threadId === "") {
      throw new FirestoreCheckpointerError(
        "checkpointer:bad_config",
        ctx,
        'config.configurable.thread_id is required: pass { configurable: { thread_id: "..." } } when invoking the graph',
      );
    }
    const tid = String(threadId);
    const path = this.docPath(tid, ns, checkpoint.id);
    const parentId = config.configurable?.checkpoint_id as string | undefined;
    // Queued per document so this instance's putWrites for the same checkpoint run after it.
    await this.cache.serialize(path, () =>
      withContext(ctx, () =>
        writeCheckpoint(this.writeContext(), {
          root: this.rootCollection,
          threadId: tid,
          ns,
          threadPath: this.threadPath(tid),
          path,
          parentPath: parentId ? this.docPath(tid, ns, parentId) : undefined,
          parentId,
          checkpoint,
          metadata,
          newVersions,
          along,
        }),
      ),
    );
    return { configurable: { thread_id: tid, checkpoint_ns: ns, checkpoint_id: checkpoint.id } };
  }

  async putWrites(
    config: RunnableConfig,
    writes: PendingWrite[],
    taskId: string,
    taskPath?: string,
  ): Promise<void> {
    const threadId = config.configurable?.thread_id as string | undefined;
    const ns = (config.configurable?.checkpoint_ns as string | undefined) ?? "";
    const checkpointId = config.configurable?.checkpoint_id as string | undefined;
    const ctx = { operation: "putWrites", threadId, checkpointNs: ns, checkpointId };
    if (threadId === undefined || threadId === null || threadId === "") {
      throw new FirestoreCheckpointerError(
        "checkpointer:bad_config",
        ctx,
        "config.configurable.thread_id is required",
      );
    }
    if (!checkpointId) {
      throw new FirestoreCheckpointerError(
        "checkpointer:bad_config",
        ctx,
        "config.configurable.checkpoint_id is required: pass the config returned by put()",
      );
    }
    const tid = String(threadId);
    const path = this.docPath(tid, ns, checkpointId);
    await this.cache.serialize(path, () =>
      withContext(ctx, () =>
        writePendingWrites(this.writeContext(), {
          threadPath: this.threadPath(tid),
          path,
          writes,
          taskId,
          taskPath: taskPath ?? "",
        }),
      ),
    );
  }

  /** Deletes every checkpoint, pending write and blob of the thread, 300 documents per commit. */
  async deleteThread(threadId: string): Promise<void> {
    const threadPath = this.threadPath(String(threadId));
    await withContext({ operation: "deleteThread", threadId: String(threadId) }, () =>
      deleteThreadDocs(this.firestore, threadPath),
    );
    this.cache.forgetThread(threadPath);
  }

  /**
   * Ancestor walk for `DeltaChannel`s in two round trips: one query for the namespace's checkpoint
   * documents (parent links, channel entries and writes), then one getAll of the blobs needed.
   */
  override async getDeltaChannelHistory(options: {
    config: RunnableConfig;
    channels: string[];
  }): Promise<Record<string, DeltaChannelHistory>> {
    const { config, channels } = options;
    if (channels.length === 0) return {};
    const threadId = String(config.configurable?.thread_id);
    const ns = (config.configurable?.checkpoint_ns as string | undefined) ?? "";
    const checkpointId = getCheckpointId(config);
    const ctx = { operation: "getDeltaChannelHistory", threadId, checkpointNs: ns, checkpointId };
    return withContext(ctx, () =>
      deltaHistory(
        { firestore: this.firestore, serde: this.serde, cache: this.cache, ttlField: this.ttl?.field },
        `${this.threadPath(threadId)}/${CHECKPOINTS}`,
        ns,
        checkpointId,
        channels,
      ),
    );
  }
}

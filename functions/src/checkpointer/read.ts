/**
 * Reading side: turns checkpoint documents plus their blobs into LangGraph's CheckpointTuple.
 * Blob ids are all known from the documents, so every read is "documents, then one getAll".
 */
import type { DocumentReference, DocumentSnapshot, Firestore } from "@google-cloud/firestore";
import {
  TASKS,
  compareWritesSortKeys,
  maxChannelVersion,
  writesSortKey,
  type Checkpoint,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  type SerializerProtocol,
} from "@langchain/langgraph-checkpoint";
import type { CheckpointerCache } from "./cache";
import { MissingBlobError, decodeValue, refBlobIds } from "./codec";
import { FirestoreCheckpointerError } from "./errors";
import { BLOBS, channelsFromStore, type CheckpointDoc, type WriteEntry } from "./layout";

/** A checkpoint document (channel names unescaped) with the path of its thread (blobs live under the thread). */
export interface LoadedDoc {
  threadPath: string;
  path: string;
  data: CheckpointDoc;
  snap: DocumentSnapshot;
}

/** Whether a snapshot is a complete checkpoint (putWrites may create one holding only writes). */
export function isCheckpoint(snap: DocumentSnapshot): boolean {
  return snap.exists && snap.get("c") !== undefined;
}

export function loaded(snap: DocumentSnapshot): LoadedDoc {
  const threadRef = snap.ref.parent.parent as DocumentReference;
  const data = snap.data() as CheckpointDoc;
  return {
    threadPath: threadRef.path,
    path: snap.ref.path,
    data: { ...data, ch: channelsFromStore(data.ch) },
    snap,
  };
}

/** Pending writes of a document in LangGraph's `(taskPath, taskId, idx)` order. */
export function sortedWrites(doc: CheckpointDoc): WriteEntry[] {
  return Object.values(doc.w ?? {}).sort((a, b) =>
    compareWritesSortKeys(writesSortKey(a.p, a.t, a.i), writesSortKey(b.p, b.t, b.i)),
  );
}

/** Every blob a set of documents needs (optionally only some channels, writes or none). */
export function blobIdsOf(
  docs: LoadedDoc[],
  opts: { channels?: ReadonlySet<string>; writes?: boolean } = {},
): Array<{ threadPath: string; id: string }> {
  const seen = new Set<string>();
  const out: Array<{ threadPath: string; id: string }> = [];
  const add = (threadPath: string, ref: Buffer) => {
    for (const id of refBlobIds(ref)) {
      const k = `${threadPath}/${id}`;
      if (!seen.has(k)) {
        seen.add(k);
        out.push({ threadPath, id });
      }
    }
  };
  for (const d of docs) {
    for (const [name, entry] of Object.entries(d.data.ch ?? {})) {
      if (!opts.channels || opts.channels.has(name)) add(d.threadPath, entry.r);
    }
    if (opts.writes !== false) for (const w of Object.values(d.data.w ?? {})) add(d.threadPath, w.r);
  }
  return out;
}

/**
 * Fetches blobs in one getAll (BatchGetDocuments streams any number of documents back), so a
 * read stays at two round trips however many messages a thread holds. Key: `thread/id`.
 */
export async function fetchBlobs(
  firestore: Firestore,
  ids: Array<{ threadPath: string; id: string }>,
  cache: CheckpointerCache,
  ttlField: string | undefined,
): Promise<Map<string, Buffer>> {
  return (await fetchBlobsAlong(firestore, ids, cache, ttlField, [])).blobs;
}

/** {@link fetchBlobs}, with other documents read in the same getAll (snapshots in `refs` order). */
export async function fetchBlobsAlong(
  firestore: Firestore,
  ids: Array<{ threadPath: string; id: string }>,
  cache: CheckpointerCache,
  ttlField: string | undefined,
  along: DocumentReference[],
): Promise<{ blobs: Map<string, Buffer>; along: DocumentSnapshot[] }> {
  const out = new Map<string, Buffer>();
  if (ids.length === 0 && along.length === 0) return { blobs: out, along: [] };
  const refs = ids.map(({ threadPath, id }) => firestore.doc(`${threadPath}/${BLOBS}/${id}`));
  const snaps = await firestore.getAll(...refs, ...along);
  snaps.slice(0, ids.length).forEach((snap, j) => {
    const { threadPath, id } = ids[j];
    const data = snap.exists ? (snap.get("d") as Buffer | undefined) : undefined;
    // A TTL refresh may have recreated an expired blob without data: treat it as missing.
    if (!data) return;
    out.set(`${threadPath}/${id}`, data);
    const expiry = ttlField ? snap.get(ttlField) : undefined;
    cache.rememberBlob(threadPath, id, expiry?.toMillis ? expiry.toMillis() : Infinity);
  });
  return { blobs: out, along: snaps.slice(ids.length) };
}

/** Blobs of one thread, keyed by bare id, as decodeValue wants them. */
export function threadBlobs(all: Map<string, Buffer>, threadPath: string): Map<string, Buffer> {
  const prefix = `${threadPath}/`;
  const out = new Map<string, Buffer>();
  for (const [k, v] of all) if (k.startsWith(prefix)) out.set(k.slice(prefix.length), v);
  return out;
}

async function decode(serde: SerializerProtocol, doc: LoadedDoc, ref: Buffer, blobs: Map<string, Buffer>) {
  try {
    return await decodeValue(serde, ref, blobs);
  } catch (err) {
    const what =
      err instanceof MissingBlobError ? `${err.message} (deleted or expired by a TTL policy)` : String(err);
    throw new FirestoreCheckpointerError(
      "checkpointer:corrupt",
      {
        operation: "read",
        threadId: doc.data.thread_id,
        checkpointNs: doc.data.checkpoint_ns,
        checkpointId: doc.data.checkpoint_id,
      },
      `cannot decode stored value: ${what}`,
      err,
    );
  }
}

/** Pending writes of a document, decoded and in order. */
export async function decodeWrites(
  serde: SerializerProtocol,
  doc: LoadedDoc,
  blobs: Map<string, Buffer>,
  filter?: (w: WriteEntry) => boolean,
): Promise<CheckpointPendingWrite[]> {
  const own = threadBlobs(blobs, doc.threadPath);
  const entries = sortedWrites(doc.data).filter((w) => !filter || filter(w));
  return Promise.all(
    entries.map(async (w) => [w.t, w.c, await decode(serde, doc, w.r, own)] as CheckpointPendingWrite),
  );
}

/**
 * Builds the tuple. `parentSends` are the parent's TASKS writes, needed only to migrate
 * checkpoints older than format v4 (which kept pending sends as writes, not as a channel).
 */
export async function toTuple(
  serde: SerializerProtocol,
  doc: LoadedDoc,
  blobs: Map<string, Buffer>,
  parentSends?: CheckpointPendingWrite[],
  nextVersion?: (v: undefined) => number | string,
): Promise<CheckpointTuple> {
  const d = doc.data;
  const own = threadBlobs(blobs, doc.threadPath);
  const base = (await serde.loadsTyped(d.ct, new Uint8Array(d.c))) as Omit<Checkpoint, "channel_values">;
  const channel_values: Record<string, unknown> = {};
  for (const [name, entry] of Object.entries(d.ch ?? {})) {
    channel_values[name] = await decode(serde, doc, entry.r, own);
  }
  const checkpoint = { ...base, channel_values } as Checkpoint;
  if (checkpoint.v < 4 && d.parent_checkpoint_id) {
    checkpoint.channel_values[TASKS] = (parentSends ?? []).map((w) => w[2]);
    const versions = Object.values(checkpoint.channel_versions ?? {});
    checkpoint.channel_versions ??= {};
    checkpoint.channel_versions[TASKS] =
      versions.length > 0 ? maxChannelVersion(...versions) : (nextVersion?.(undefined) ?? 1);
  }
  const configurable = {
    thread_id: d.thread_id,
    checkpoint_ns: d.checkpoint_ns,
    checkpoint_id: d.checkpoint_id,
  };
  const tuple: CheckpointTuple = {
    config: { configurable },
    checkpoint,
    metadata: await serde.loadsTyped(d.mt, new Uint8Array(d.m)),
    pendingWrites: await decodeWrites(serde, doc, blobs),
  };
  if (d.parent_checkpoint_id) {
    tuple.parentConfig = { configurable: { ...configurable, checkpoint_id: d.parent_checkpoint_id } };
  }
  return tuple;
}

/** Ids of blobs that the TASKS writes of a (parent) document need. */
export function sendBlobIds(doc: LoadedDoc): Array<{ threadPath: string; id: string }> {
  return Object.values(doc.data.w ?? {})
    .filter((w) => w.c === TASKS)
    .flatMap((w) => refBlobIds(w.r).map((id) => ({ threadPath: doc.threadPath, id })));
}

/**
 * Writing side: `put` and `putWrites` as one batched commit each, writing only blobs this
 * instance does not already know to be stored.
 */
import { FieldPath, type Firestore, type WriteBatch, type WriteResult } from "@google-cloud/firestore";
import {
  WRITES_IDX_MAP,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointMetadata,
  type PendingWrite,
  type SerializerProtocol,
} from "@langchain/langgraph-checkpoint";
import type { CheckpointerCache } from "./cache";
import { encodeValue, refBlobIds } from "./codec";
import { FirestoreCheckpointerError } from "./errors";
import {
  BLOBS,
  PUT_FIELDS,
  channelsFromStore,
  channelsToStore,
  writeKey,
  type ChannelEntry,
  type CheckpointDoc,
  type WriteEntry,
} from "./layout";

/** What the write helpers need from the checkpointer. */
export interface WriteContext {
  firestore: Firestore;
  serde: SerializerProtocol;
  cache: CheckpointerCache;
  ttl?: { days: number; field: string };
  /** Largest commit request, bytes (blobs beyond it go in earlier commits). */
  maxCommitBytes: number;
}

/** Firestore (gRPC) status codes handled here. */
const NOT_FOUND = 5;
const ALREADY_EXISTS = 6;
const FAILED_PRECONDITION = 9;
const DAY_MS = 86_400_000;

interface BlobPlan {
  sets: Array<{ id: string; bytes: Buffer }>;
  /** Blobs referenced again whose TTL expiry must move forward. */
  touches: string[];
}

function codeOf(err: unknown): unknown {
  return (err as { code?: unknown })?.code;
}

/**
 * Blobs to write, and blobs to re-stamp. With a TTL, a document expires `ttl` after it is written;
 * the blobs it references must outlive it, so blobs get 1.5 × ttl and are re-stamped whenever a new
 * document references one that would expire before that document does (at most every ttl / 2).
 */
function planBlobs(
  ctx: WriteContext,
  threadPath: string,
  blobs: Map<string, Buffer>,
  referenced: string[],
): BlobPlan {
  const horizon = Date.now() + (ctx.ttl ? ctx.ttl.days * DAY_MS : 0);
  const stale = (exp: number | undefined) => exp === undefined || (ctx.ttl !== undefined && exp < horizon);
  const sets = [...blobs]
    .filter(([id]) => stale(ctx.cache.blobExpiry(threadPath, id)))
    .map(([id, bytes]) => ({ id, bytes }));
  const touches = ctx.ttl
    ? referenced.filter((id) => !blobs.has(id) && stale(ctx.cache.blobExpiry(threadPath, id)))
    : [];
  return { sets, touches };
}

function expiry(ctx: WriteContext, factor = 1): Date | undefined {
  return ctx.ttl ? new Date(Date.now() + factor * ctx.ttl.days * DAY_MS) : undefined;
}

/**
 * Commits the blobs and then `last` (the document that references them) in one batch; blobs
 * beyond the request size limit go in earlier batches, so a document is never visible before the
 * blobs it references.
 */
async function commitWithBlobs(
  ctx: WriteContext,
  threadPath: string,
  plan: BlobPlan,
  last: (batch: WriteBatch) => void,
): Promise<WriteResult> {
  const expireAt = expiry(ctx, 1.5);
  const ttlFields = ctx.ttl && expireAt ? { [ctx.ttl.field]: expireAt } : {};
  let batch = ctx.firestore.batch();
  let bytes = 0;
  for (const { id, bytes: data } of plan.sets) {
    if (bytes > 0 && bytes + data.length > ctx.maxCommitBytes) {
      await batch.commit();
      batch = ctx.firestore.batch();
      bytes = 0;
    }
    batch.set(ctx.firestore.doc(`${threadPath}/${BLOBS}/${id}`), { d: data, ...ttlFields });
    bytes += data.length;
  }
  for (const id of plan.touches) {
    batch.set(ctx.firestore.doc(`${threadPath}/${BLOBS}/${id}`), ttlFields, { merge: true });
  }
  last(batch);
  const results = await batch.commit();
  const exp = expireAt?.getTime() ?? Infinity;
  for (const { id } of plan.sets) ctx.cache.rememberBlob(threadPath, id, exp);
  for (const id of plan.touches) ctx.cache.rememberBlob(threadPath, id, exp);
  return results[results.length - 1];
}

/** Arguments of {@link writeCheckpoint}. */
export interface PutArgs {
  root: string;
  threadId: string;
  ns: string;
  threadPath: string;
  path: string;
  parentPath?: string;
  parentId?: string;
  checkpoint: Checkpoint;
  metadata: CheckpointMetadata;
  newVersions: ChannelVersions;
  /** The caller's own writes, committed in the same batch as the checkpoint document. */
  along?: (batch: WriteBatch) => void;
}

/**
 * The checkpoint's channel entries: those in `newVersions` encoded (their new blobs in `blobs`), the
 * others carried from the parent when its version matches (their blobs, already stored, in
 * `referenced`).
 */
async function checkpointChannels(
  ctx: WriteContext,
  a: PutArgs,
): Promise<{ ch: Record<string, ChannelEntry>; blobs: Map<string, Buffer>; referenced: string[] }> {
  const values = (a.checkpoint.channel_values ?? {}) as Record<string, unknown>;
  const versions = a.checkpoint.channel_versions ?? {};
  const names = new Set([...Object.keys(versions), ...Object.keys(a.newVersions ?? {})]);
  const ch: Record<string, ChannelEntry> = {};
  const blobs = new Map<string, Buffer>();
  const carried: string[] = [];
  for (const name of names) {
    if (!Object.prototype.hasOwnProperty.call(a.newVersions ?? {}, name)) {
      carried.push(name);
      continue;
    }
    if (!Object.prototype.hasOwnProperty.call(values, name) || values[name] === undefined) continue;
    const enc = await encodeValue(ctx.serde, values[name]);
    ch[name] = { v: versions[name] ?? a.newVersions[name], r: enc.ref };
    for (const [id, b] of enc.blobs) blobs.set(id, b);
  }
  const referenced: string[] = [];
  if (carried.length > 0 && a.parentPath) {
    let parent: Record<string, ChannelEntry> | undefined = ctx.cache.doc(a.parentPath)?.channels;
    if (!parent) {
      const snap = await ctx.firestore.doc(a.parentPath).get();
      parent = channelsFromStore(snap.get("ch") as Record<string, ChannelEntry> | undefined);
    }
    for (const name of carried) {
      const e = parent[name];
      if (e && String(e.v) === String(versions[name])) {
        ch[name] = e;
        referenced.push(...refBlobIds(e.r));
      }
    }
  }
  return { ch, blobs, referenced };
}

/**
 * Stores a checkpoint. Channels in `newVersions` are encoded from the checkpoint; the others keep
 * the parent's entry when its version matches (the value did not change, so neither do its blobs).
 */
export async function writeCheckpoint(ctx: WriteContext, a: PutArgs): Promise<void> {
  const { ch, blobs, referenced } = await checkpointChannels(ctx, a);
  const { channel_values: _values, ...rest } = a.checkpoint;
  const [[ct, c], [mt, m]] = await Promise.all([
    ctx.serde.dumpsTyped(rest),
    ctx.serde.dumpsTyped(a.metadata),
  ]);
  const data: CheckpointDoc & Record<string, unknown> = {
    root: a.root,
    thread_id: a.threadId,
    checkpoint_ns: a.ns,
    checkpoint_id: a.checkpoint.id,
    parent_checkpoint_id: a.parentId ?? null,
    v: a.checkpoint.v,
    ct,
    c: Buffer.from(c),
    mt,
    m: Buffer.from(m),
    ch: channelsToStore(ch),
  };
  const expireAt = expiry(ctx);
  if (ctx.ttl && expireAt) data[ctx.ttl.field] = expireAt;
  const ref = ctx.firestore.doc(a.path);
  const plan = planBlobs(ctx, a.threadPath, blobs, referenced);
  // LangGraph chains puts but not putWrites, so this instance's putWrites for this checkpoint often
  // created the document already: update it, guarded by its update time, keeping its writes.
  const partial = ctx.cache.doc(a.path)?.writes;
  let result: WriteResult | undefined;
  let writes: { keys: Set<string> } | undefined = partial ? { keys: partial.keys } : { keys: new Set() };
  try {
    result = await commitWithBlobs(ctx, a.threadPath, plan, (b) => {
      if (partial) b.update(ref, data, { lastUpdateTime: partial.updateTime });
      else b.create(ref, data);
      a.along?.(b);
    });
  } catch (err) {
    const code = codeOf(err);
    if (code !== ALREADY_EXISTS && code !== FAILED_PRECONDITION && code !== NOT_FOUND) throw err;
    // Without a partial document ours is a create: a failed precondition can only be the caller's.
    if (a.along && !partial && code !== ALREADY_EXISTS) throw err;
  }
  if (!result) {
    // Someone else (a retry, another instance's putWrites) wrote the document: keep its writes.
    writes = undefined;
    const fields = [...PUT_FIELDS, ...(ctx.ttl ? [ctx.ttl.field] : [])];
    result = await commitWithBlobs(ctx, a.threadPath, plan, (b) => {
      b.set(ref, data, { mergeFields: fields });
      a.along?.(b);
    });
  }
  ctx.cache.rememberDoc(a.path, {
    channels: ch,
    writes: writes ? { updateTime: result.writeTime, keys: writes.keys } : undefined,
  });
}

/** Arguments of {@link writePendingWrites}. */
export interface PutWritesArgs {
  threadPath: string;
  path: string;
  writes: PendingWrite[];
  taskId: string;
  taskPath: string;
}

interface Planned {
  entry: WriteEntry;
  special: boolean;
  blobs: Map<string, Buffer>;
}

/**
 * Adds pending writes to their checkpoint document: regular writes only if absent, special writes
 * (error, scheduled, interrupt, resume) replacing. One commit guarded by the document's update
 * time; on a concurrent change it re-reads and retries.
 */
export async function writePendingWrites(ctx: WriteContext, a: PutWritesArgs): Promise<void> {
  const planned = new Map<string, Planned>();
  for (const [idx, [channel, value]] of a.writes.entries()) {
    const special = Object.prototype.hasOwnProperty.call(WRITES_IDX_MAP, channel);
    const i = special ? WRITES_IDX_MAP[channel] : idx;
    const enc = await encodeValue(ctx.serde, value);
    planned.set(writeKey(a.taskId, i), {
      entry: { t: a.taskId, p: a.taskPath, i, c: channel, r: enc.ref },
      special,
      blobs: enc.blobs,
    });
  }
  const ref = ctx.firestore.doc(a.path);
  for (let attempt = 0; attempt < 8; attempt++) {
    let known = ctx.cache.doc(a.path)?.writes;
    // Unknown document: most often its put has not landed yet, so try creating it first and read
    // only if it exists after all.
    let exists = known !== undefined || attempt > 0;
    if (!known && exists) {
      const snap = await ref.get();
      exists = snap.exists;
      if (exists && snap.updateTime) {
        known = { updateTime: snap.updateTime, keys: new Set(Object.keys(snap.get("w") ?? {})) };
      }
    }
    const todo = [...planned].filter(([k, p]) => p.special || !known?.keys.has(k));
    if (todo.length === 0) return;
    const blobs = new Map<string, Buffer>();
    for (const [, p] of todo) for (const [id, b] of p.blobs) blobs.set(id, b);
    try {
      const result = await commitWithBlobs(
        ctx,
        a.threadPath,
        planBlobs(ctx, a.threadPath, blobs, []),
        (b) => {
          if (!exists || !known) {
            const expireAt = expiry(ctx);
            const w = Object.fromEntries(todo.map(([k, p]) => [k, p.entry]));
            b.create(ref, { w, ...(ctx.ttl && expireAt ? { [ctx.ttl.field]: expireAt } : {}) });
          } else {
            const pairs = todo.flatMap(([k, p]) => [new FieldPath("w", k), p.entry]);
            const [first, value, ...more] = pairs;
            b.update(ref, first as FieldPath, value, ...more, { lastUpdateTime: known.updateTime });
          }
        },
      );
      ctx.cache.rememberDoc(a.path, {
        channels: ctx.cache.doc(a.path)?.channels,
        writes: {
          updateTime: result.writeTime,
          keys: new Set([...(known?.keys ?? []), ...todo.map(([k]) => k)]),
        },
      });
      return;
    } catch (err) {
      const code = codeOf(err);
      if (code !== FAILED_PRECONDITION && code !== ALREADY_EXISTS && code !== NOT_FOUND) throw err;
      // Someone else changed the document since we last saw it: forget, re-read, retry.
      ctx.cache.rememberDoc(a.path, { channels: ctx.cache.doc(a.path)?.channels });
      const optimisticMiss = attempt === 0 && code === ALREADY_EXISTS;
      if (!optimisticMiss) await new Promise((r) => setTimeout(r, 10 + Math.random() * 40 * (attempt + 1)));
    }
  }
  throw new FirestoreCheckpointerError(
    "checkpointer:conflict",
    { operation: "putWrites" },
    "the checkpoint document kept changing under 8 attempts; retry the run",
  );
}

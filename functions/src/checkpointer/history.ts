/**
 * `getDeltaChannelHistory` in two round trips: one query for the namespace's checkpoint
 * documents (parent links, channel entries, pending writes; no values), the ancestor walk in
 * memory, then one getAll of the blobs of the writes and seeds the walk needs.
 */
import { FieldPath, type Firestore } from "@google-cloud/firestore";
import type {
  CheckpointPendingWrite,
  DeltaChannelHistory,
  SerializerProtocol,
} from "@langchain/langgraph-checkpoint";
import type { CheckpointerCache } from "./cache";
import { decodeValue, refBlobIds } from "./codec";
import {
  BLOBS,
  CHECKPOINTS,
  channelField,
  channelsFromStore,
  type ChannelEntry,
  type CheckpointDoc,
  type WriteEntry,
} from "./layout";
import { fetchBlobs, sortedWrites, threadBlobs } from "./read";

/** What the walk needs from the checkpointer. */
export interface HistoryContext {
  firestore: Firestore;
  serde: SerializerProtocol;
  cache: CheckpointerCache;
  ttlField?: string;
}

export async function deltaHistory(
  ctx: HistoryContext,
  checkpointsPath: string,
  ns: string,
  checkpointId: string,
  channels: string[],
): Promise<Record<string, DeltaChannelHistory>> {
  let q = ctx.firestore.collection(checkpointsPath).where("checkpoint_ns", "==", ns);
  if (checkpointId) q = q.where("checkpoint_id", "<=", checkpointId);
  const snaps = await q
    .orderBy("checkpoint_id", "desc")
    .select(
      "checkpoint_id",
      "parent_checkpoint_id",
      "w",
      ...channels.map((c) => new FieldPath("ch", channelField(c))),
    )
    .get();
  const byId = new Map<string, Pick<CheckpointDoc, "parent_checkpoint_id" | "ch" | "w">>();
  for (const s of snaps.docs) {
    const data = s.data() as CheckpointDoc;
    byId.set(data.checkpoint_id, { ...data, ch: channelsFromStore(data.ch) });
  }
  const target = checkpointId
    ? byId.get(checkpointId)
    : byId.get(snaps.docs[0]?.get("checkpoint_id") as string);

  // Walk from the parent of the target (the target's own writes are pending for the next step).
  const wanted = new Set(channels);
  const remaining = new Set(channels);
  const collected = new Map<string, WriteEntry[]>(channels.map((c) => [c, []]));
  const seeds = new Map<string, ChannelEntry>();
  let cursor = target?.parent_checkpoint_id ?? null;
  while (cursor && remaining.size > 0) {
    const doc = byId.get(cursor);
    if (!doc) break;
    const writes = sortedWrites(doc as CheckpointDoc);
    for (let i = writes.length - 1; i >= 0; i--) {
      if (remaining.has(writes[i].c)) collected.get(writes[i].c)!.push(writes[i]);
    }
    for (const ch of Array.from(remaining)) {
      const entry = doc.ch?.[ch];
      if (entry) {
        seeds.set(ch, entry);
        remaining.delete(ch);
      }
    }
    cursor = doc.parent_checkpoint_id;
  }

  const threadPath = checkpointsPath.slice(0, checkpointsPath.lastIndexOf("/"));
  const refs = [...[...collected.values()].flat().map((w) => w.r), ...[...seeds.values()].map((e) => e.r)];
  const ids = [...new Set(refs.flatMap((r) => refBlobIds(r)))].map((id) => ({ threadPath, id }));
  const blobs = threadBlobs(await fetchBlobs(ctx.firestore, ids, ctx.cache, ctx.ttlField), threadPath);

  const result: Record<string, DeltaChannelHistory> = {};
  for (const ch of wanted) {
    const writes: CheckpointPendingWrite[] = [];
    for (const w of collected.get(ch)!.slice().reverse()) {
      writes.push([w.t, w.c, await decodeValue(ctx.serde, w.r, blobs)]);
    }
    const entry: DeltaChannelHistory = { writes };
    const seed = seeds.get(ch);
    if (seed) entry.seed = await decodeValue(ctx.serde, seed.r, blobs);
    result[ch] = entry;
  }
  return result;
}

/** Deletes every checkpoint, pending write and blob document of a thread, 300 per commit. */
export async function deleteThreadDocs(firestore: Firestore, threadPath: string): Promise<void> {
  for (const sub of [CHECKPOINTS, BLOBS]) {
    const col = firestore.collection(`${threadPath}/${sub}`);
    for (;;) {
      const page = await col.select().limit(300).get();
      if (page.empty) break;
      const batch = firestore.batch();
      for (const d of page.docs) batch.delete(d.ref);
      await batch.commit();
      if (page.size < 300) break;
    }
  }
}

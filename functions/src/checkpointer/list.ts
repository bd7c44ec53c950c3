/**
 * `list`: one query per page of checkpoint documents, newest first, then one getAll for the blobs
 * of the page. Metadata filters are applied to the decoded metadata (it is stored as serialized
 * bytes, like every other value), so pages continue until `limit` matches are found.
 */
import type { Firestore, Query, QueryDocumentSnapshot } from "@google-cloud/firestore";
import type {
  CheckpointListOptions,
  CheckpointTuple,
  SerializerProtocol,
} from "@langchain/langgraph-checkpoint";
import type { RunnableConfig } from "@langchain/core/runnables";
import { isDeepStrictEqual } from "node:util";
import { withContext } from "./errors";
import { CHECKPOINTS } from "./layout";
import { loaded, type LoadedDoc } from "./read";

/** What listing needs from the checkpointer. */
export interface ListContext {
  firestore: Firestore;
  serde: SerializerProtocol;
  root: string;
  /** The thread's checkpoints collection, or undefined for every thread of the root. */
  checkpoints?: string;
  blobs(docs: LoadedDoc[]): Promise<Map<string, Buffer>>;
  tuple(doc: LoadedDoc, blobs: Map<string, Buffer>): Promise<CheckpointTuple>;
}

export async function* listTuples(
  ctx: ListContext,
  config: RunnableConfig,
  options?: CheckpointListOptions,
): AsyncGenerator<CheckpointTuple> {
  const { before, filter } = options ?? {};
  let remaining = options?.limit;
  const threadId = config.configurable?.thread_id as string | undefined;
  const ns = config.configurable?.checkpoint_ns as string | undefined;
  const checkpointId = config.configurable?.checkpoint_id as string | undefined;
  const errCtx = { operation: "list", threadId, checkpointNs: ns, checkpointId };
  let q: Query = ctx.checkpoints
    ? ctx.firestore.collection(ctx.checkpoints)
    : ctx.firestore.collectionGroup(CHECKPOINTS).where("root", "==", ctx.root);
  if (ns !== undefined) q = q.where("checkpoint_ns", "==", ns);
  if (checkpointId) q = q.where("checkpoint_id", "==", checkpointId);
  const beforeId = before?.configurable?.checkpoint_id as string | undefined;
  if (beforeId) q = q.where("checkpoint_id", "<", beforeId);
  q = q.orderBy("checkpoint_id", "desc");
  const filters = Object.entries(filter ?? {});
  const pageSize =
    filters.length === 0 && remaining !== undefined ? Math.max(1, Math.min(remaining, 100)) : 100;
  let cursor: QueryDocumentSnapshot | undefined;
  while (remaining === undefined || remaining > 0) {
    const page = await withContext(errCtx, () => (cursor ? q.startAfter(cursor) : q).limit(pageSize).get());
    if (page.empty) return;
    cursor = page.docs[page.docs.length - 1];
    const matched: LoadedDoc[] = [];
    for (const snap of page.docs) {
      if (remaining !== undefined && matched.length >= remaining) break;
      const doc = loaded(snap);
      if (filters.length > 0) {
        const metadata = (await ctx.serde.loadsTyped(doc.data.mt, new Uint8Array(doc.data.m))) as Record<
          string,
          unknown
        >;
        if (!filters.every(([k, v]) => isDeepStrictEqual(metadata?.[k], v))) continue;
      }
      matched.push(doc);
    }
    const blobs = await withContext(errCtx, () => ctx.blobs(matched));
    for (const doc of matched) {
      const tuple = await withContext(
        { ...errCtx, threadId: doc.data.thread_id, checkpointId: doc.data.checkpoint_id },
        () => ctx.tuple(doc, blobs),
      );
      if (remaining !== undefined) remaining -= 1;
      yield tuple;
    }
    if (page.docs.length < pageSize) return;
  }
}

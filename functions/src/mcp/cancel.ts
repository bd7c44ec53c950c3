/**
 * Cancelling an `ask` when MCP is served stateless: the client's `notifications/cancelled` comes in
 * its own POST, maybe to another instance, naming only the JSON-RPC id of the call it cancels. So
 * each `ask` records which run that id started (`mcp_calls/{hash}`, server-only, with a TTL), keyed
 * by the person, the credential and the id; the cancel finds the run there and asks it to stop
 * through the run's own cancel flag (the same as the API's cancel, seen within a second on any
 * instance). A call on this instance is stopped at once as well.
 */
import { createHash } from "node:crypto";
import * as logger from "firebase-functions/logger";
import { firestore } from "../services";
import { runStore } from "../runs/runtime";
import type { Via } from "../tools/person";

const COLLECTION = "mcp_calls";
/** gRPC's ALREADY_EXISTS: `create` of a record that is there. */
const ALREADY_EXISTS = 6;
/** Most ids one request may cancel (the SDK's own limit of messages in a batch). */
const MAX_CANCELS = 100;
/** How long a call's record is kept if its instance dies before deleting it (a TTL policy on `expireAt`). */
const KEEP_MS = 86_400_000;

/** The calls running on this instance, by key: how to stop each at once. */
const local = new Map<string, () => void>();

/** A call's key: one person's credential and the client's request id. */
export function callKey(uid: string, via: Via | undefined, requestId: string | number): string {
  return createHash("sha256")
    .update(`${uid}\n${via?.tokenId ?? via?.clientId ?? "id-token"}\n${typeof requestId}:${requestId}`)
    .digest("hex");
}

/**
 * Records a starting `ask`; returns the function that forgets it when it ends (the record is
 * deleted then, so it names only running calls). Two running calls with the same key — two
 * clients of one person whose JSON-RPC ids coincide — cannot be told apart: the second is not
 * tracked (a cancel of that id stops the first, which is the person's own), never the wrong
 * person's. Throws when the record cannot be written; nothing is kept then.
 */
export async function trackCall(
  key: string,
  run: { uid: string; threadId: string; runId: string },
  stop: () => void,
): Promise<() => void> {
  const [db, { Timestamp }] = await Promise.all([firestore(), import("firebase-admin/firestore")]);
  const ref = db.collection(COLLECTION).doc(key);
  try {
    await ref.create({ ...run, expireAt: Timestamp.fromMillis(Date.now() + KEEP_MS) });
  } catch (err) {
    if ((err as { code?: unknown }).code === ALREADY_EXISTS) return () => {};
    throw err;
  }
  local.set(key, stop);
  return () => {
    if (local.get(key) === stop) local.delete(key);
    ref.delete().catch((err: unknown) => logger.warn("MCP call record not deleted", { err: String(err) }));
  };
}

/** The JSON-RPC ids a request body cancels (`notifications/cancelled`, alone or in a batch). */
export function cancelledIds(body: unknown): (string | number)[] {
  const messages = Array.isArray(body) ? body.slice(0, MAX_CANCELS) : [body];
  const ids = messages.flatMap((m) => {
    const msg = m as { method?: unknown; params?: { requestId?: unknown } } | null;
    const id = msg?.params?.requestId;
    return msg?.method === "notifications/cancelled" && (typeof id === "string" || typeof id === "number")
      ? [id]
      : [];
  });
  return [...new Set(ids)];
}

/** Stops the run a cancelled call started, wherever it runs; a finished or unknown call is ignored. */
export async function cancelCall(uid: string, key: string): Promise<void> {
  local.get(key)?.();
  try {
    const snap = await (await firestore()).collection(COLLECTION).doc(key).get();
    const run = snap.data() as { uid: string; threadId: string; runId: string } | undefined;
    if (!run || run.uid !== uid) return;
    await (await runStore()).requestCancel(run.threadId, uid, run.runId);
  } catch (err) {
    // Already over, or the thread is gone: nothing left to stop.
    logger.info("MCP cancel found no running call", { err: String(err) });
  }
}

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
import { runStore } from "../http/runtime";
import type { Via } from "../tools/person";

const COLLECTION = "mcp_calls";
/** How long a call's record is kept (a TTL policy on `expireAt` deletes it). */
const KEEP_MS = 86_400_000;

/** The calls running on this instance, by key: how to stop each at once. */
const local = new Map<string, () => void>();

/** A call's key: one person's credential and the client's request id. */
export function callKey(uid: string, via: Via | undefined, requestId: string | number): string {
  return createHash("sha256")
    .update(`${uid}\n${via?.tokenId ?? via?.clientId ?? "id-token"}\n${typeof requestId}:${requestId}`)
    .digest("hex");
}

/** Records a starting `ask`; returns the function that forgets it on this instance when it ends. */
export async function trackCall(
  key: string,
  run: { uid: string; threadId: string; runId: string },
  stop: () => void,
): Promise<() => void> {
  local.set(key, stop);
  const [db, { Timestamp }] = await Promise.all([firestore(), import("firebase-admin/firestore")]);
  await db
    .collection(COLLECTION)
    .doc(key)
    .set({ ...run, expireAt: Timestamp.fromMillis(Date.now() + KEEP_MS) });
  return () => {
    if (local.get(key) === stop) local.delete(key);
  };
}

/** The JSON-RPC ids a request body cancels (`notifications/cancelled`, alone or in a batch). */
export function cancelledIds(body: unknown): (string | number)[] {
  const messages = Array.isArray(body) ? body : [body];
  return messages.flatMap((m) => {
    const msg = m as { method?: unknown; params?: { requestId?: unknown } } | null;
    const id = msg?.params?.requestId;
    return msg?.method === "notifications/cancelled" && (typeof id === "string" || typeof id === "number")
      ? [id]
      : [];
  });
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

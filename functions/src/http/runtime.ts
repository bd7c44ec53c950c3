/**
 * Per-instance singletons built on first use: the Firestore-backed thread store, the
 * FirestoreCheckpointer and the compiled agent graph. Nothing here loads when the entry loads.
 */
import { config } from "../config";
import { firestore } from "../services";
import { ThreadStore } from "./thread-store";

type Graph = import("../agent/index.js").QuarryGraph;
type Checkpointer = import("../checkpointer/index.js").FirestoreCheckpointer;

let store: Promise<ThreadStore> | undefined;
let checkpointer: Promise<Checkpointer> | undefined;
let graph: Promise<Graph> | undefined;

export function threadStore(): Promise<ThreadStore> {
  store ??= Promise.all([firestore(), import("firebase-admin/firestore")]).then(
    ([db, mod]) => new ThreadStore(db, config().threadsCollection, mod.FieldValue, mod.Timestamp),
  );
  return store;
}

export function checkpointSaver(): Promise<Checkpointer> {
  checkpointer ??= Promise.all([firestore(), import("../checkpointer/index.js")]).then(([db, mod]) => {
    const cfg = config();
    return new mod.FirestoreCheckpointer({
      firestore: db,
      rootCollection: cfg.checkpointsCollection,
      ...(cfg.checkpointTtlDays > 0 ? { ttl: { field: "expireAt", days: cfg.checkpointTtlDays } } : {}),
    });
  });
  return checkpointer;
}

export function agentGraph(): Promise<Graph> {
  graph ??= Promise.all([checkpointSaver(), import("../agent/index.js")])
    .then(([saver, agent]) => agent.createAgentGraph({ checkpointer: saver, config: config() }))
    .catch((err: unknown) => {
      graph = undefined; // a failed start (e.g. missing credentials) is retried on the next request
      throw err;
    });
  return graph;
}

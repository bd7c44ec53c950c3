/**
 * Per-instance singletons built on first use: the Firestore-backed thread store, the
 * FirestoreCheckpointer and the compiled agent graph. Nothing here loads when the entry loads.
 */
import * as logger from "firebase-functions/logger";
import { config } from "../config";
import { firestore } from "../services";
import { accessStores } from "../access/gate";
import { credentialSource } from "../identity";
import type { QueryRecord } from "../tools/types";
import { RunStore } from "./run-store";
import { ThreadStore } from "./thread-store";
import { FileStore } from "./files-store";
import type { UploadTarget } from "../tools/types";

type Graph = import("../agent/index.js").QuarryGraph;
type Checkpointer = import("../checkpointer/index.js").FirestoreCheckpointer;

let store: Promise<ThreadStore> | undefined;
let files: Promise<FileStore> | undefined;
let uploads: Promise<UploadTarget> | undefined;
let checkpointer: Promise<Checkpointer> | undefined;
let graph: Promise<Graph> | undefined;
let factory: Promise<import("../agent/index.js").GraphFactory> | undefined;

export function threadStore(): Promise<ThreadStore> {
  store ??= Promise.all([firestore(), import("firebase-admin/firestore")]).then(
    ([db, mod]) => new ThreadStore(db, config().threadsCollection, mod.FieldValue, mod.Timestamp),
  );
  return store;
}

/** A conversation's uploaded files (records beside the thread document). */
export function fileStore(): Promise<FileStore> {
  files ??= Promise.all([firestore(), import("firebase-admin/firestore")]).then(
    ([db, mod]) => new FileStore(db, config().threadsCollection, mod.FieldValue, mod.Timestamp),
  );
  return files;
}

/** Where the engine keeps uploaded tables (a refusal, when the deployment has nowhere, is not kept). */
export function uploadTarget(): Promise<UploadTarget> {
  uploads ??= Promise.all([import("../tools/uploads/index.js"), credentialSource()]).then(
    ([m, credentials]) => m.createUploadTarget(config(), credentials),
  );
  uploads.catch(() => (uploads = undefined));
  return uploads;
}

let imports: Promise<import("../context/imports/firestore-store.js").ImportStore> | undefined;

/** The imports pushed, reviewed and applied through the admin API (one store per instance, its cache shared). */
export function importStore(): Promise<import("../context/imports/firestore-store.js").ImportStore> {
  imports ??= Promise.all([firestore(), import("../context/imports/firestore-store.js")]).then(
    ([db, m]) => new m.ImportStore(db),
  );
  return imports;
}

let approved: Promise<import("../context/approved.js").ApprovedQueries> | undefined;

/**
 * The queries approved in the admin page (one store per instance: an approval made here reaches
 * this instance's next question at once, the others' within the store's 30 s).
 */
export function approvedQueries(): Promise<import("../context/approved.js").ApprovedQueries> {
  approved ??= Promise.all([firestore(), import("../context/approved.js")]).then(
    ([db, m]) => new m.ApprovedQueries(db),
  );
  return approved;
}

let runs: Promise<RunStore> | undefined;

/** The run store (leases, run documents, event logs), beside the thread store. */
export function runStore(): Promise<RunStore> {
  runs ??= Promise.all([firestore(), threadStore(), import("firebase-admin/firestore")]).then(
    ([db, threads, mod]) => new RunStore(db, threads, mod.FieldValue, mod.Timestamp),
  );
  return runs;
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

/** Compiles the agent graph for a checkpointer; model and tools are built once per instance. */
export function graphFactory(): Promise<import("../agent/index.js").GraphFactory> {
  factory ??= import("../agent/index.js")
    .then((agent) => {
      logger.info(`Model: ${agent.describeModel(agent.resolveModel(config().model))}`);
      return Promise.all([
        firestore(),
        import("../context/catalog-store.js"),
        approvedQueries(),
        accessStores(),
        credentialSource(),
        importStore(),
      ]).then(([db, { FirestoreCatalogStore }, approved, { audit }, credentials, imports]) =>
        agent.createGraphFactory({
          config: config(),
          // User identity mode: each person's BigQuery calls with their own token, by uid.
          ...(credentials ? { credentials } : {}),
          catalogStore: new FirestoreCatalogStore(db, config().catalogsCollection),
          approvedQueries: () => approved.current(),
          // Imports applied in the admin page, in every instance's prompts within seconds.
          storedImports: () => imports.current(),
          // Every query, ran or refused, on the audit log (written beside the run, never holding it up).
          onQuery: (q) => {
            audit
              .record({ kind: "query", uid: q.userId, email: q.userEmail, ...queryFields(q) }, q.auditKey)
              .catch((err: unknown) =>
                logger.error("audit entry not written", { err: String(err), sql: q.sql }),
              );
          },
        }),
      );
    })
    .catch((err: unknown) => {
      factory = undefined; // a failed start (e.g. missing credentials) is retried on the next request
      throw err;
    });
  return factory;
}

/** The graph on the shared checkpointer, for state and history reads. */
export function agentGraph(): Promise<Graph> {
  graph ??= Promise.all([checkpointSaver(), graphFactory()])
    .then(([saver, build]) => build(saver))
    .catch((err: unknown) => {
      graph = undefined;
      throw err;
    });
  return graph;
}

/** A query record's fields as the audit log keeps them. */
function queryFields(q: QueryRecord) {
  const { userId: _u, userEmail: _e, auditKey: _k, ...rest } = q;
  return rest;
}

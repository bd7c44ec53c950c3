/**
 * Lazily initialised Firebase Admin services. firebase-admin/firestore pulls in gRPC and protobufs,
 * so it is loaded on first use, not when the function entry loads (cold start).
 */
import type { App } from "firebase-admin/app";
import type { Auth } from "firebase-admin/auth";
import type { Firestore } from "firebase-admin/firestore";
import { config } from "./config";
import { tuneFirestore } from "./firestore-client";

let app: Promise<App> | undefined;
let db: Promise<Firestore> | undefined;
let auth: Promise<Auth> | undefined;

function adminApp(): Promise<App> {
  app ??= import("firebase-admin/app").then(({ getApps, initializeApp }) => {
    const existing = getApps().find((a) => a.name === "[DEFAULT]");
    return existing ?? initializeApp({ projectId: config().projectId });
  });
  return app;
}

/** The Admin Firestore client (emulator when FIRESTORE_EMULATOR_HOST is set). */
export function firestore(): Promise<Firestore> {
  db ??= Promise.all([adminApp(), import("firebase-admin/firestore")]).then(([a, mod]) => {
    const instance = mod.getFirestore(a);
    tuneFirestore(instance);
    return instance;
  });
  return db;
}

/** The Admin Auth client (emulator when FIREBASE_AUTH_EMULATOR_HOST is set). */
export function adminAuth(): Promise<Auth> {
  auth ??= Promise.all([adminApp(), import("firebase-admin/auth")]).then(([a, mod]) => mod.getAuth(a));
  return auth;
}

/**
 * Queues `task` on the task queue of the task-queue function `functionName` (`backgroundRun`,
 * `scheduledRun`), deployed or in the emulator — which knows queues by the function's bare name
 * only (firebase-tools#7793).
 */
export async function enqueueTask<T extends object>(
  functionName: string,
  task: T,
  options?: import("firebase-admin/functions").TaskOptions,
): Promise<void> {
  const [a, { getFunctions }] = await Promise.all([adminApp(), import("firebase-admin/functions")]);
  const { inEmulator, region } = config();
  const queue = inEmulator ? functionName : `locations/${region}/functions/${functionName}`;
  await getFunctions(a).taskQueue<T>(queue).enqueue(task, options);
}

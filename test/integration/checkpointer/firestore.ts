import { Firestore } from "@google-cloud/firestore";
import { randomUUID } from "node:crypto";
import { FirestoreCheckpointer } from "../../../functions/src/checkpointer";
import { stackEnv } from "../../support/stack-env";

/** A Firestore client on the stack's emulator (fails clearly without one). */
export function emulatorFirestore(): Firestore {
  const { env } = stackEnv();
  // No metadata-server probe (it only logs a warning offline).
  process.env.METADATA_SERVER_DETECTION ??= "none";
  // FIRESTORE_EMULATOR_HOST (set by stackEnv) points the client at the emulator, without credentials.
  return new Firestore({ projectId: env.GCLOUD_PROJECT });
}

/** A unique root collection, so tests never see each other's threads. */
export function freshRoot(prefix = "cp"): string {
  return `${prefix}-${randomUUID()}`;
}

/** A checkpointer on a fresh root. */
export function freshCheckpointer(firestore: Firestore, root = freshRoot()): FirestoreCheckpointer {
  return new FirestoreCheckpointer({ firestore, rootCollection: root });
}

/** Every document path under a root (collection-group scans of both subcollections). */
export async function documentsUnder(firestore: Firestore, root: string): Promise<string[]> {
  const paths: string[] = [];
  for (const group of ["checkpoints", "blobs"]) {
    const snap = await firestore.collectionGroup(group).select().get();
    for (const d of snap.docs) if (d.ref.path.startsWith(`${root}/`)) paths.push(d.ref.path);
  }
  return paths;
}

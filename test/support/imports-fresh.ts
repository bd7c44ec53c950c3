/**
 * Waiting for an applied import to reach every instance of the function: each one re-reads the
 * active imports once its copy is `IMPORTS_MAX_AGE_MS` old, counted from when that read started
 * (ImportStore.current). So a question asked that long after the import document's last write
 * uses it, whichever instance (one of the functions emulator's workers) it reaches. One that read
 * just before the write serves its old copy until then, so a question that reaches it sooner
 * shows nothing of the import, which a test asserting absence would take for a pass.
 */
import type { Firestore } from "@google-cloud/firestore";
import { IMPORTS_COLLECTION, IMPORTS_MAX_AGE_MS } from "../../functions/src/context/imports/firestore-store";

export async function importSeenEverywhere(db: Firestore, id: string): Promise<void> {
  const doc = await db.collection(IMPORTS_COLLECTION).doc(id).get();
  if (!doc.updateTime) throw new Error(`context_imports/${id} does not exist: nothing was pushed`);
  const fresh = doc.updateTime.toMillis() + IMPORTS_MAX_AGE_MS;
  if (Date.now() < fresh) await new Promise((r) => setTimeout(r, fresh - Date.now()));
}

/**
 * A semantic layer's saved queries (dbt `saved_queries`, compiled to SQL) proposed as verified
 * queries, reviewed like up-voted answers: each becomes a `proposed` feedback document that an
 * admin approves, edits or rejects in the admin page (or with `npm run feedback`). Never approved
 * by importing. A saved query already proposed — waiting, approved or rejected — is not proposed
 * again (its id is derived from the project, the name and the SQL), so a re-import never undoes a
 * review; a changed SQL is a new proposal.
 */
import { createHash } from "node:crypto";
import { FieldValue, type Firestore } from "@google-cloud/firestore";
import type { ImportedLayer } from "./types";

export interface ProposeResult {
  proposed: string[];
  /** Proposed before (and perhaps reviewed since): left as they are. */
  already: string[];
  /** Without SQL, with the reason. */
  skipped: { name: string; reason: string }[];
}

export async function proposeSavedQueries(
  db: Firestore,
  collection: string,
  layer: ImportedLayer,
): Promise<ProposeResult> {
  const out: ProposeResult = { proposed: [], already: [], skipped: [] };
  for (const q of layer.queries) {
    if (!q.sql) {
      out.skipped.push({ name: q.name, reason: q.noSql ?? "no SQL" });
      continue;
    }
    const id = createHash("sha256")
      .update(`import/${layer.source}/${layer.project}/${q.name}/${q.sql}`)
      .digest("hex")
      .slice(0, 40);
    try {
      await db
        .collection(collection)
        .doc(id)
        .create({
          uid: `import:${layer.source}`,
          threadId: "",
          questionId: q.name,
          score: 1,
          note: `${layer.source} saved query ${q.name}${q.origin.file ? ` (${q.origin.file})` : ""} of project ${layer.project}`,
          question: q.question,
          answer: "",
          sql: q.sql,
          status: "proposed",
          createdAt: FieldValue.serverTimestamp(),
        });
      out.proposed.push(q.name);
    } catch (err) {
      // ALREADY_EXISTS: proposed by an earlier import of the same SQL.
      if ((err as { code?: number }).code !== 6) throw err;
      out.already.push(q.name);
    }
  }
  return out;
}

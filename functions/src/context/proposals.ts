/**
 * From feedback to examples, with a person in between: an up-voted answer that ran SQL is stored
 * as a *proposed* verified query (http/feedback.ts); `npm run feedback` lists proposals, and
 * approving one appends it to the dataset's context file — only if the file, with it, still
 * validates (the SQL passes the warehouse's dry run) — and marks it approved. Nothing becomes an
 * example without review.
 */
import { readFileSync, writeFileSync } from "node:fs";
import type { Firestore } from "@google-cloud/firestore";
import { isSeq, parseDocument } from "yaml";
import type { Warehouse } from "../tools/types";
import { ContextFileError, parseContextFile, validateAgainstWarehouse } from "./authored";

export interface Proposal {
  id: string;
  question: string;
  sql: string;
  note: string | null;
  threadId: string;
  uid: string;
  status: "proposed" | "approved" | "rejected" | "recorded";
}

/** The context file's text with one more verified query (comments and layout kept). */
function appendVerifiedQuery(text: string, entry: { question: string; sql: string }): string {
  const doc = parseDocument(text);
  const list = doc.get("verified_queries");
  if (isSeq(list)) list.add(doc.createNode(entry));
  else doc.set("verified_queries", doc.createNode([entry]));
  return doc.toString({ lineWidth: 0 });
}

export async function listProposals(db: Firestore, collection = "feedback"): Promise<Proposal[]> {
  const snap = await db.collection(collection).where("status", "==", "proposed").get();
  return snap.docs.map((d) => ({ id: d.id, ...(d.data() as Omit<Proposal, "id">) }));
}

async function proposal(db: Firestore, collection: string, id: string): Promise<Proposal> {
  const snap = await db.collection(collection).doc(id).get();
  if (!snap.exists) throw new Error(`No feedback ${id}. List proposals with \`npm run feedback -- list\`.`);
  const p = { id, ...(snap.data() as Omit<Proposal, "id">) };
  if (p.status !== "proposed") throw new Error(`Feedback ${id} is ${p.status}, not a proposal.`);
  return p;
}

/**
 * Appends the proposal to `file` if the file, with it, validates against the warehouse; then marks
 * it approved. A proposal that does not validate changes nothing and says why (with the line).
 */
export async function approveProposal(opts: {
  db: Firestore;
  id: string;
  file: string;
  warehouse: Warehouse;
  collection?: string;
  question?: string;
}): Promise<void> {
  const collection = opts.collection ?? "feedback";
  const p = await proposal(opts.db, collection, opts.id);
  const before = readFileSync(opts.file, "utf8");
  const after = appendVerifiedQuery(before, { question: opts.question ?? p.question, sql: p.sql });
  try {
    await validateAgainstWarehouse(parseContextFile(after, opts.file), opts.warehouse, opts.file);
  } catch (err) {
    if (err instanceof ContextFileError) {
      throw new Error(`Not approved: the context file would not validate with it.\n${err.message}`, {
        cause: err,
      });
    }
    throw err;
  }
  writeFileSync(opts.file, after);
  await opts.db.collection(collection).doc(opts.id).update({ status: "approved", approvedInto: opts.file });
}

export async function rejectProposal(db: Firestore, id: string, collection = "feedback"): Promise<void> {
  await proposal(db, collection, id);
  await db.collection(collection).doc(id).update({ status: "rejected" });
}

/**
 * From feedback to examples, with a person in between: an up-voted answer that ran SQL is stored
 * as a *proposed* verified query (http/feedback.ts); `npm run feedback` lists proposals, and
 * approving one appends it to the dataset's context file — only if the file, with it, still
 * validates (the SQL passes the warehouse's dry run) — and marks it approved. Nothing becomes an
 * example without review. `exportApprovedQueries` writes the ones approved in the admin page
 * (Firestore `approved_queries`) into the files, so the team can version them.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";
import type { Firestore } from "@google-cloud/firestore";
import { Document, isSeq, parseDocument } from "yaml";
import type { Warehouse } from "../tools/types";
import { APPROVED_COLLECTION, type ApprovedQuery } from "./approved";
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

/**
 * The context file's text with one more verified query. The entry is inserted as text after the
 * list's last item, so the rest of the file stays byte for byte as it was (a small diff to review
 * and commit); when that cannot be done safely (no block list yet, or the result would read
 * differently), the file is written out again from its parsed form, comments kept.
 */
export function appendVerifiedQuery(text: string, entry: { question: string; sql: string }): string {
  const doc = parseDocument(text);
  const list = doc.get("verified_queries", true);
  if (isSeq(list) && !list.flow && list.items.length && list.range) {
    const [start, end] = list.range;
    const indent = " ".repeat(start - (text.lastIndexOf("\n", start - 1) + 1));
    const at = text.slice(0, end).trimEnd().length;
    const item = new Document([entry])
      .toString({ lineWidth: 0 })
      .trimEnd()
      .split("\n")
      .map((line) => (line ? indent + line : line))
      .join("\n");
    const spliced = `${text.slice(0, at)}\n${item}${text.slice(at)}`;
    const want = doc.toJS() as { verified_queries: unknown[] };
    want.verified_queries = [...want.verified_queries, entry];
    if (isDeepStrictEqual(parseDocument(spliced).toJS(), want)) return spliced;
  }
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

/** What `exportApprovedQueries` did with each approved query. */
export interface ExportReport {
  added: { id: string; file: string }[];
  /** Already in the file (same question and SQL, whitespace aside). */
  present: { id: string; file: string }[];
  /** Not written, and why (no matching file, or the file would not validate with it). */
  skipped: { id: string; why: string }[];
}

const squash = (s: string) => s.trim().replace(/\s+/g, " ");
const sameQuery = (a: { question: string; sql: string }, b: { question: string; sql: string }) =>
  squash(a.question) === squash(b.question) && squash(a.sql) === squash(b.sql);

/**
 * The context file an approved query belongs in: `only` when given or when there is one file,
 * else the one file whose dataset the SQL names (`shop.orders` → the file of dataset `shop`).
 */
function fileFor(
  q: { sql: string },
  files: { file: string; dataset: string }[],
  only?: string,
): string | { why: string } {
  if (only) return only;
  if (files.length === 1) return files[0].file;
  const named = files.filter((f) =>
    new RegExp(`(^|[^\\w.])\`?${f.dataset.replace(/[^\w]/g, "\\$&")}\`?\\.`, "i").test(q.sql),
  );
  if (named.length === 1) return named[0].file;
  const which = named.length ? `the datasets of ${named.map((f) => f.file).join(", ")}` : "no file's dataset";
  return { why: `its SQL names ${which}; say which file with --file` };
}

/**
 * Writes the approved verified queries (Firestore `approved_queries`) into the context files
 * (`files`; or all into `only`): each into the file of the dataset its SQL names, skipping one
 * already there. One is added only if the file, with it, still validates (the file's rules and the
 * warehouse's dry run); one that does not is skipped with the reason, and the others are written.
 */
export async function exportApprovedQueries(opts: {
  db: Firestore;
  files: string[];
  warehouse: Warehouse;
  only?: string;
}): Promise<ExportReport> {
  const report: ExportReport = { added: [], present: [], skipped: [] };
  const snap = await opts.db.collection(APPROVED_COLLECTION).orderBy("approvedAt").get();
  const approved = snap.docs.map((d) => d.data() as ApprovedQuery);
  const texts = new Map<string, string>();
  for (const file of opts.only ? [opts.only] : opts.files) texts.set(file, readFileSync(file, "utf8"));
  const datasets = [...texts].map(([file, text]) => ({
    file,
    dataset: parseContextFile(text, file).context.dataset,
  }));
  for (const q of approved) {
    const file = fileFor(q, datasets, opts.only);
    if (typeof file !== "string") {
      report.skipped.push({ id: q.id, why: file.why });
      continue;
    }
    const text = texts.get(file)!;
    if (parseContextFile(text, file).context.verified_queries.some((v) => sameQuery(v, q))) {
      report.present.push({ id: q.id, file });
      continue;
    }
    const after = appendVerifiedQuery(text, { question: q.question, sql: q.sql });
    try {
      await validateAgainstWarehouse(parseContextFile(after, file), opts.warehouse, file);
    } catch (err) {
      if (!(err instanceof ContextFileError)) throw err;
      report.skipped.push({ id: q.id, why: `${file} would not validate with it:\n${err.message}` });
      continue;
    }
    texts.set(file, after);
    report.added.push({ id: q.id, file });
  }
  for (const file of new Set(report.added.map((a) => a.file))) writeFileSync(file, texts.get(file)!);
  return report;
}

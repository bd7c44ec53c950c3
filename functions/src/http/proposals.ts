/**
 * Proposals in the admin page: verified queries proposed by up-votes (feedback with SQL), listed,
 * edited (question, SQL), approved or rejected. An approval is validated as a context file's own
 * entry is (the file's rules, the warehouse's dry run), stored in Firestore (`approved_queries`)
 * and used from the next question on, on every instance within a minute — no redeploy.
 * `npm run feedback -- export` writes the approved ones into the context files.
 */
import { Router, type Request, type Response } from "express";
import { z } from "zod";
import { config } from "../config";
import type { ProposalView, ProposalsAnswer } from "../contract/admin";
import { QuarryError } from "../errors";
import { firestore } from "../services";
import { auditAction } from "../access/admin-audit";
import { callerOf } from "../access/caller";
import { approvedQueries } from "../runs/runtime";
import { parse } from "../runs/schemas";

const ProposalId = z.string().regex(/^[0-9a-f]{40}$/, "must be a proposal id");
const EditBody = z
  .strictObject({ question: z.string().trim().min(1).max(1_000), sql: z.string().trim().min(1).max(10_000) })
  .partial()
  .refine((b) => b.question !== undefined || b.sql !== undefined, { message: "send question and/or sql" });

export function proposalRoutes(): Router {
  const r = Router();
  r.get("/admin/proposals", list);
  r.patch("/admin/proposals/:id", edit);
  r.post("/admin/proposals/:id/approve", approve);
  r.post("/admin/proposals/:id/reject", reject);
  return r;
}

async function feedback() {
  return (await firestore()).collection(config().feedbackCollection);
}

/** The proposal `id`, or 404 / 409 when it is not one waiting for review. */
async function proposal(req: Request) {
  const id = parse(ProposalId, req.params.id, "path");
  const ref = (await feedback()).doc(id);
  const snap = await ref.get();
  if (!snap.exists) throw new QuarryError("not_found:proposal", `No proposal ${id}.`);
  const p = snap.data() as {
    status: string;
    question: string;
    sql: string | null;
    uid: string;
    note: string | null;
  };
  if (p.status !== "proposed") {
    throw new QuarryError("conflict:proposal", `Proposal ${id} was already ${p.status}: reload the list.`);
  }
  return { id, ref, p };
}

async function list(_req: Request, res: Response): Promise<void> {
  const snap = await (await feedback()).where("status", "==", "proposed").limit(500).get();
  res.json({
    proposals: snap.docs.map((d): ProposalView => {
      const p = d.data();
      return {
        id: d.id,
        question: p.question,
        sql: p.sql,
        note: p.note ?? null,
        answer: p.answer ?? "",
        uid: p.uid,
      };
    }),
  } satisfies ProposalsAnswer);
}

async function edit(req: Request, res: Response): Promise<void> {
  const { id, ref } = await proposal(req);
  const body = parse(EditBody, req.body ?? {}, "body");
  await ref.update(body);
  await auditAction(req, "proposal.edit", id, body);
  res.json({ id, ...(await ref.get()).data() });
}

async function approve(req: Request, res: Response): Promise<void> {
  const { id, ref, p } = await proposal(req);
  const [{ getWarehouse }, { ApprovalError, validateVerifiedQuery }] = await Promise.all([
    import("../tools/index.js"),
    import("../context/approved.js"),
  ]);
  let entry;
  try {
    entry = await validateVerifiedQuery({ question: p.question, sql: p.sql ?? "" }, await getWarehouse());
  } catch (err) {
    if (err instanceof ApprovalError) throw new QuarryError("bad_request:body", err.message);
    throw err;
  }
  const by = callerOf(req).email ?? callerOf(req).uid;
  // This instance's own store, so its next question has the approval at once.
  const store = await approvedQueries();
  const approved = await store.add({
    id,
    proposalId: id,
    ...entry,
    approvedBy: by,
  });
  await ref.update({ status: "approved", approvedBy: by, approvedInto: "approved_queries" });
  await auditAction(req, "proposal.approve", id, { question: entry.question });
  res.json(approved);
}

async function reject(req: Request, res: Response): Promise<void> {
  const { id, ref } = await proposal(req);
  await ref.update({ status: "rejected", rejectedBy: callerOf(req).email ?? callerOf(req).uid });
  await auditAction(req, "proposal.reject", id);
  res.status(204).end();
}

import { randomUUID } from "node:crypto";
import { Router, type Request, type Response } from "express";
import { config } from "../config";
import { QuarryError } from "../errors";
import { callerOf } from "../access/caller";
import { checkpointSaver, agentGraph, fileStore, runStore, threadStore, uploadTarget } from "../runs/runtime";
import { CreateThreadBody, HistoryBody, PatchThreadBody, SearchThreadsBody } from "./schemas";
import { ThreadIdParam, parse } from "../runs/schemas";
import { rootCommit } from "../runs/checkpointer";
import { toThreadState } from "../runs/serialize";
import { leaseHolder, toThread } from "../runs/thread-doc";
import type { InvestigationReport, StepResult } from "../contract/investigations";

function threadParam(req: Request): string {
  return parse(ThreadIdParam, req.params.threadId, "path");
}

export function threadRoutes(): Router {
  const r = Router();
  r.post("/threads", createThread);
  r.post("/threads/search", searchThreads);
  r.get("/threads/:threadId", getThread);
  r.patch("/threads/:threadId", patchThread);
  r.delete("/threads/:threadId", deleteThread);
  r.get("/threads/:threadId/state", getState);
  r.get("/threads/:threadId/investigation", getInvestigation);
  r.post("/threads/:threadId/history", async (req, res) => {
    res.json(await history(req, parse(HistoryBody, req.body ?? {}, "body")));
  });
  r.get("/threads/:threadId/history", async (req, res) => {
    const limit = req.query.limit === undefined ? undefined : Number(req.query.limit);
    res.json(await history(req, parse(HistoryBody, { limit }, "query")));
  });
  return r;
}

async function createThread(req: Request, res: Response): Promise<void> {
  const { uid } = callerOf(req);
  const body = parse(CreateThreadBody, req.body ?? {}, "body");
  const id = body.thread_id ?? randomUUID();
  const [store, saver] = await Promise.all([threadStore(), checkpointSaver()]);
  // The thread's empty start checkpoint goes in the same commit (see rootCommit).
  const doc = await store.create(
    id,
    uid,
    body.metadata ?? {},
    body.if_exists ?? "raise",
    rootCommit(saver, id),
  );
  res.json(toThread(id, doc));
}

async function searchThreads(req: Request, res: Response): Promise<void> {
  const { uid } = callerOf(req);
  const body = parse(SearchThreadsBody, req.body ?? {}, "body");
  if (body.sort_by && body.sort_by !== "updated_at") {
    throw new QuarryError("bad_request:body", 'Threads can be sorted by "updated_at" only.');
  }
  const found = await (
    await threadStore()
  ).search(uid, {
    limit: body.limit ?? 10,
    offset: body.offset ?? 0,
    status: body.status,
    order: body.sort_order ?? "desc",
  });
  const wanted = body.metadata ? Object.entries(body.metadata) : [];
  const threads = found
    .map(({ id, doc }) => toThread(id, doc))
    .filter((t) => (body.ids ? body.ids.includes(t.thread_id) : true))
    .filter((t) =>
      wanted.every(
        ([k, v]) => JSON.stringify((t.metadata as Record<string, unknown>)[k]) === JSON.stringify(v),
      ),
    );
  res.json(threads);
}

async function getThread(req: Request, res: Response): Promise<void> {
  const { uid } = callerOf(req);
  const id = threadParam(req);
  res.json(toThread(id, await (await threadStore()).get(id, uid)));
}

async function patchThread(req: Request, res: Response): Promise<void> {
  const { uid } = callerOf(req);
  const id = threadParam(req);
  const body = parse(PatchThreadBody, req.body ?? {}, "body");
  res.json(toThread(id, await (await threadStore()).patchMetadata(id, uid, body.metadata)));
}

async function deleteThread(req: Request, res: Response): Promise<void> {
  const { uid } = callerOf(req);
  const id = threadParam(req);
  const store = await threadStore();
  const running = await store.beginDelete(id, uid);
  if (running) await (await runStore()).waitForRelease(id, running, config().runLeaseMs);
  // Checkpoints first: if this fails the metadata still points at the thread and delete can be retried.
  await (await checkpointSaver()).deleteThread(id);
  await dropUploads(id, uid);
  await store.delete(id);
  res.status(204).end();
}

/** The thread's uploaded tables go with it (before its records, so a failure can be retried). */
async function dropUploads(id: string, uid: string): Promise<void> {
  const locations = await (await fileStore()).locations(id);
  if (!locations.length) return;
  const target = await uploadTarget();
  await Promise.all(locations.map((l) => target.drop(l, { userId: uid })));
}

async function getState(req: Request, res: Response): Promise<void> {
  const { uid } = callerOf(req);
  const id = threadParam(req);
  const doc = await (await threadStore()).get(id, uid);
  const graph = await agentGraph();
  const snap = await graph.getState({ configurable: { thread_id: id } });
  const state = toThreadState(snap, id);
  // While a run answers, the thread's latest checkpoint is the question's (a run keeps its steps
  // until it ends, see runs/checkpointer.ts) and its task has already written: LangGraph reads
  // that as nothing next. The turn is still running from there: say so as the history says of
  // the same checkpoint, its tasks next, so a client that tells a running thread by `next` (the
  // React hook of @langchain/react rejoins only then) sees it running.
  if (leaseHolder(doc) && state.next.length === 0) state.next = state.tasks.map((t) => t.name);
  res.json(state);
}

/**
 * The thread's latest investigation report (docs/investigations.md): JSON, or with
 * `?format=markdown` or `?format=pdf` the export as a download.
 */
async function getInvestigation(req: Request, res: Response): Promise<void> {
  const { uid } = callerOf(req);
  const id = threadParam(req);
  const format = req.query.format ?? "json";
  if (format !== "json" && format !== "markdown" && format !== "pdf") {
    throw new QuarryError(
      "bad_request:query",
      `format must be "json", "markdown" or "pdf", not "${String(format)}".`,
    );
  }
  await (await threadStore()).get(id, uid);
  const snap = await (await agentGraph()).getState({ configurable: { thread_id: id } });
  const messages =
    (snap.values as { messages?: { response_metadata?: Record<string, unknown> }[] }).messages ?? [];
  const answer = messages.filter((m) => m.response_metadata?.quarry_investigation).at(-1);
  const report = answer?.response_metadata?.quarry_investigation as InvestigationReport | undefined;
  if (!report) {
    throw new QuarryError(
      "not_found:investigation",
      `Thread ${id} has no investigation report: run one with input.investigate and answer its plan.`,
    );
  }
  if (format === "json") {
    res.json(report);
    return;
  }
  if (format === "pdf") {
    const { investigationPdf } = await import("./investigation-pdf.js");
    const results = (answer?.response_metadata?.quarry_investigation_results ?? []) as StepResult[];
    res
      .type("application/pdf")
      .attachment("investigation.pdf")
      .send(await investigationPdf(report, results));
    return;
  }
  res.type("text/markdown; charset=utf-8").attachment("investigation.md").send(report.markdown);
}

async function history(req: Request, body: ReturnType<typeof HistoryBody.parse>) {
  const { uid } = callerOf(req);
  const id = threadParam(req);
  await (await threadStore()).get(id, uid);
  const graph = await agentGraph();
  const before =
    typeof body.before === "string"
      ? { configurable: { thread_id: id, checkpoint_id: body.before } }
      : body.before?.checkpoint_id
        ? { configurable: { thread_id: id, checkpoint_id: body.before.checkpoint_id } }
        : undefined;
  const config = {
    configurable: {
      thread_id: id,
      ...(body.checkpoint?.checkpoint_ns != null ? { checkpoint_ns: body.checkpoint.checkpoint_ns } : {}),
      ...(body.checkpoint?.checkpoint_id ? { checkpoint_id: body.checkpoint.checkpoint_id } : {}),
    },
  };
  const states = [];
  for await (const snap of graph.getStateHistory(config, {
    limit: body.limit ?? 10,
    before,
    filter: body.metadata,
  })) {
    states.push(toThreadState(snap, id));
  }
  return states;
}

import { Router, type Request, type Response } from "express";
import { runObject, runStatusOf, type RunObject } from "../../contract/protocol";
import { config } from "../../config";
import { QuarryError } from "../../errors";
import { storageError } from "../../storage";
import { callerOf, runCallerOf } from "../../access/caller";
import { leaseHolder, type ThreadDoc } from "../../runs/thread-doc";
import type { RunStore } from "../../runs/run-store";
import { CancelQuery, ListRunsQuery } from "../schemas";
import { RunIdParam, ThreadIdParam, parse } from "../../runs/schemas";
import { runStore, threadStore } from "../../runs/runtime";
import { SseWriter } from "../sse";
import { startRun } from "../../runs/start";
import { checkRun } from "../../runs/check";

export function runRoutes(): Router {
  const r = Router();
  r.post("/threads/:threadId/runs/stream", streamRun);
  r.post("/threads/:threadId/runs/:runId/cancel", cancelRun);
  r.get("/threads/:threadId/runs/:runId", getRun);
  r.get("/threads/:threadId/runs", listRuns);
  return r;
}

/** Everything is validated and the lease taken before the stream opens: bad input is a 4xx, never an event. */
async function streamRun(req: Request, res: Response): Promise<void> {
  const threadId = parse(ThreadIdParam, req.params.threadId, "path");
  await startRun(runCallerOf(req), threadId, checkRun(req.body), new SseWriter(res));
}

async function cancelRun(req: Request, res: Response): Promise<void> {
  const { uid } = callerOf(req);
  const threadId = parse(ThreadIdParam, req.params.threadId, "path");
  const runId = parse(RunIdParam, req.params.runId, "path");
  const q = parse(CancelQuery, req.query, "query");
  const runs = await runStore();
  const ok = await runs.requestCancel(threadId, uid, runId);
  if (!ok) throw new QuarryError("not_found:run", `Run ${runId} is not running on thread ${threadId}.`);
  // wait: answer once the run has let go of the thread, so the caller's next run is not refused.
  if (q.wait === "true" || q.wait === "1") {
    await runs.waitForRelease(threadId, runId, config().runLeaseMs).catch((err: unknown) => {
      throw storageError(err);
    });
  }
  res.status(204).end();
}

async function getRun(req: Request, res: Response): Promise<void> {
  const { uid } = callerOf(req);
  const threadId = parse(ThreadIdParam, req.params.threadId, "path");
  const runId = parse(RunIdParam, req.params.runId, "path");
  const [store, runs] = await Promise.all([threadStore(), runStore()]);
  const doc = await store.get(threadId, uid);
  const run =
    endedLast(threadId, runId, doc) ??
    (await runsOf(runs, threadId, doc)).find((r) => r.run_id === runId) ??
    (await fromLog(runs, threadId, runId));
  if (!run) throw new QuarryError("not_found:run", `Run ${runId} not found.`);
  res.json(run);
}

/**
 * The thread's last run, once it has let go of the thread, from the thread's document alone (what
 * the SDK asks after every stream it did not see end): no query of the run documents or the log.
 */
function endedLast(threadId: string, runId: string, doc: ThreadDoc): RunObject | undefined {
  const end = doc.lastRunEnd;
  if (end?.runId !== runId || doc.lastRunId !== runId || leaseHolder(doc) === runId) return undefined;
  return runObject(threadId, runId, runStatusOf(end.outcome), {
    at: doc.updatedAt.toDate(),
    strategy: end.strategy,
  });
}

/** An earlier streamed run, known by its event log (until the log expires): how it ended. */
async function fromLog(runs: RunStore, threadId: string, runId: string) {
  const end = await runs.loggedEnd(threadId, runId);
  if (!end) return undefined;
  // No end marker and no lease (runsOf would have found it): its instance was lost.
  return runObject(threadId, runId, end.status ? runStatusOf(end.status) : "error", { at: end.at });
}

/**
 * The thread's runs that Quarry keeps track of: the one running now, and the last one that ran
 * (`client.runs.list`, e.g. to find a run to cancel or rejoin).
 */
async function listRuns(req: Request, res: Response): Promise<void> {
  const { uid } = callerOf(req);
  const threadId = parse(ThreadIdParam, req.params.threadId, "path");
  const q = parse(ListRunsQuery, req.query, "query");
  const [store, runs] = await Promise.all([threadStore(), runStore()]);
  const doc = await store.get(threadId, uid);
  const found = (await runsOf(runs, threadId, doc)).filter((r) => !q.status || r.status === q.status);
  res.json(found.slice(q.offset, q.offset + q.limit));
}

/**
 * The thread's runs: the one holding its lease now, background runs (their documents, newest
 * first), and the last streamed run.
 */
async function runsOf(runs: RunStore, threadId: string, doc: ThreadDoc) {
  const at = doc.updatedAt.toDate();
  const out: RunObject[] = [];
  const has = (id: string) => out.some((r) => r.run_id === id);
  const running = leaseHolder(doc);
  if (running) out.push(runObject(threadId, running, "running", { at, strategy: doc.run?.strategy }));
  for (const { runId, doc: run } of await runs.recentRuns(threadId, 20)) {
    if (has(runId)) continue;
    const status =
      run.status === "pending" || run.status === "running" ? run.status : runStatusOf(run.status);
    out.push(
      runObject(threadId, runId, status, { at: run.createdAt?.toDate() ?? at, strategy: run.strategy }),
    );
  }
  if (doc.lastRunId && !has(doc.lastRunId)) {
    // Its log says how it ended (a stop included); without a log, the thread's status does.
    const status = doc.status === "error" || doc.status === "interrupted" ? doc.status : "success";
    out.push(
      endedLast(threadId, doc.lastRunId, doc) ??
        (await fromLog(runs, threadId, doc.lastRunId)) ??
        runObject(threadId, doc.lastRunId, status, { at }),
    );
  }
  return out;
}

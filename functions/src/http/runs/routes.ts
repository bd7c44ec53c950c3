import { Router, type Request, type Response } from "express";
import { runObject, runStatusOf, type RunObject, type RunOutcome } from "../../contract/protocol";
import { config } from "../../config";
import { QuarryError } from "../../errors";
import { storageError } from "../../storage";
import { callerOf, runCallerOf } from "../auth";
import { leaseHolder, type ThreadDoc } from "../thread-doc";
import type { ThreadStore } from "../thread-store";
import { runLog } from "./event-log";
import type { QueuedRunStatus } from "./background";
import { CancelQuery, ListRunsQuery, RunIdParam, ThreadIdParam, parse } from "../schemas";
import { threadStore } from "../runtime";
import { SseWriter } from "../sse";
import { checkRun, startRun } from "./start";

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
  const store = await threadStore();
  const ok = await store.requestCancel(threadId, uid, runId);
  if (!ok) throw new QuarryError("not_found:run", `Run ${runId} is not running on thread ${threadId}.`);
  // wait: answer once the run has let go of the thread, so the caller's next run is not refused.
  if (q.wait === "true" || q.wait === "1") {
    await store.waitForRelease(threadId, runId, config().runLeaseSeconds * 1000).catch((err: unknown) => {
      throw storageError(err);
    });
  }
  res.status(204).end();
}

async function getRun(req: Request, res: Response): Promise<void> {
  const { uid } = callerOf(req);
  const threadId = parse(ThreadIdParam, req.params.threadId, "path");
  const runId = parse(RunIdParam, req.params.runId, "path");
  const store = await threadStore();
  const doc = await store.get(threadId, uid);
  const run =
    (await runsOf(store, threadId, doc)).find((r) => r.run_id === runId) ??
    (await fromLog(store, threadId, runId));
  if (!run) throw new QuarryError("not_found:run", `Run ${runId} not found.`);
  res.json(run);
}

/** An earlier streamed run, known by its event log (until the log expires): how it ended. */
async function fromLog(store: ThreadStore, threadId: string, runId: string) {
  const last = await runLog(store.runRef(threadId, runId)).orderBy("n", "desc").limit(1).get();
  if (last.empty) return undefined;
  const end = last.docs[0].get("end") as { status?: RunOutcome } | undefined;
  // No end marker and no lease (runsOf would have found it): its instance was lost.
  return runObject(threadId, runId, end?.status ? runStatusOf(end.status) : "error", {
    at: last.docs[0].updateTime.toDate(),
  });
}

/**
 * The thread's runs that Quarry keeps track of: the one running now, and the last one that ran
 * (`client.runs.list`, e.g. to find a run to cancel or rejoin).
 */
async function listRuns(req: Request, res: Response): Promise<void> {
  const { uid } = callerOf(req);
  const threadId = parse(ThreadIdParam, req.params.threadId, "path");
  const q = parse(ListRunsQuery, req.query, "query");
  const store = await threadStore();
  const doc = await store.get(threadId, uid);
  const runs = (await runsOf(store, threadId, doc)).filter((r) => !q.status || r.status === q.status);
  res.json(runs.slice(q.offset, q.offset + q.limit));
}

/**
 * The thread's runs: the one holding its lease now, background runs (their documents, newest
 * first), and the last streamed run.
 */
async function runsOf(store: ThreadStore, threadId: string, doc: ThreadDoc) {
  const at = doc.updatedAt.toDate();
  const out: RunObject[] = [];
  const has = (id: string) => out.some((r) => r.run_id === id);
  const running = leaseHolder(doc);
  if (running) out.push(runObject(threadId, running, "running", { at, strategy: doc.run?.strategy }));
  const queued = await store.ref(threadId).collection("runs").orderBy("createdAt", "desc").limit(20).get();
  for (const d of queued.docs) {
    const status = d.get("status") as QueuedRunStatus;
    if (!has(d.id)) {
      const created = (d.get("createdAt") as { toDate(): Date } | undefined)?.toDate() ?? at;
      const strategy = d.get("strategy") as RunObject["multitask_strategy"] | undefined;
      out.push(
        runObject(
          threadId,
          d.id,
          status === "pending" || status === "running" ? status : runStatusOf(status),
          {
            at: created,
            strategy,
          },
        ),
      );
    }
  }
  if (doc.lastRunId && !has(doc.lastRunId)) {
    // Its log says how it ended (a stop included); without a log, the thread's status does.
    const status = doc.status === "error" || doc.status === "interrupted" ? doc.status : "success";
    out.push(
      (await fromLog(store, threadId, doc.lastRunId)) ?? runObject(threadId, doc.lastRunId, status, { at }),
    );
  }
  return out;
}

/**
 * Runs nobody streams, as the Agent Server's routes: `runs.create` (recorded and queued on the task
 * queue; functions/src/runs/background.ts runs it), `runs.join` (waits for its end, then the
 * values) and `runs.wait` (runs in this request, which stays open until the run ends).
 */
import { Router, type Request, type Response } from "express";
import { callerOf, runCallerOf } from "../../access/caller";
import { STREAM_MODES, runObject, type MultitaskStrategy } from "../../contract/protocol";
import { queueRun } from "../../runs/background";
import { ensureKnownRun, finalValues, untilEnded } from "../../runs/join";
import { NO_OUTPUT } from "../../runs/output";
import { runStore, threadStore } from "../../runs/runtime";
import { RunIdParam, ThreadIdParam, parse } from "../../runs/schemas";
import { startRun } from "../../runs/start";
import { checkRun } from "../../runs/check";

export function backgroundRoutes(): Router {
  const r = Router();
  r.post("/threads/:threadId/runs", createRun);
  r.post("/threads/:threadId/runs/wait", waitRun);
  r.get("/threads/:threadId/runs/:runId/join", joinRun);
  return r;
}

/** `runs.create`: records the run, queues it, answers at once with the pending run. */
async function createRun(req: Request, res: Response): Promise<void> {
  const threadId = parse(ThreadIdParam, req.params.threadId, "path");
  const strategy = (checkRun(req.body).body.multitask_strategy ?? "reject") as MultitaskStrategy;
  const runId = await queueRun(callerOf(req), threadId, req.body);
  res.json(runObject(threadId, runId, "pending", { strategy }));
}

/** `runs.join`: waits for the run to end, then answers with the thread's values. */
async function joinRun(req: Request, res: Response): Promise<void> {
  const { uid } = callerOf(req);
  const threadId = parse(ThreadIdParam, req.params.threadId, "path");
  const runId = parse(RunIdParam, req.params.runId, "path");
  const [store, runs] = await Promise.all([threadStore(), runStore()]);
  await ensureKnownRun(runs, threadId, runId, await store.get(threadId, uid));
  await untilEnded(runs, threadId, runId);
  const { values, interrupts } = await finalValues(threadId);
  const failed = (await runs.readRun(threadId, runId))?.error;
  res.json({ ...(values as object), ...(failed ? { __error__: failed } : {}), ...interruptsOf(interrupts) });
}

/** `runs.wait`: runs in this request (it stays open, so it keeps its CPU) and answers with the values. */
async function waitRun(req: Request, res: Response): Promise<void> {
  const threadId = parse(ThreadIdParam, req.params.threadId, "path");
  const checked = checkRun(req.body);
  const outcome = await startRun(
    runCallerOf(req),
    threadId,
    { ...checked, modes: [...STREAM_MODES] },
    NO_OUTPUT,
  );
  const { values, interrupts } = await finalValues(threadId);
  res.json({
    ...(values as object),
    ...(outcome.error ? { __error__: outcome.error } : {}),
    ...interruptsOf(interrupts),
  });
}

function interruptsOf(interrupts: unknown): Record<string, unknown> {
  return Array.isArray(interrupts) && interrupts.length ? { __interrupt__: interrupts } : {};
}

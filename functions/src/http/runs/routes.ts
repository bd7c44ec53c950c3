import { randomUUID } from "node:crypto";
import { Router, type Request, type Response } from "express";
import { config } from "../../config";
import { QuarryError } from "../../errors";
import { callerOf } from "../auth";
import type { DocumentSnapshot, Timestamp } from "firebase-admin/firestore";
import type { ThreadDoc } from "../thread-store";
import type { CheckpointTuple } from "@langchain/langgraph-checkpoint";
import { RunCheckpointer, hasPendingTasks } from "./checkpointer";
import { executeRun, storageError } from "./executor";
import { RunLogWriter, runLog } from "./event-log";
import * as logger from "firebase-functions/logger";
import { firestore } from "../../services";
import { within } from "../within";
import {
  ASSISTANT_ID,
  CancelQuery,
  ListRunsQuery,
  RunIdParam,
  RunStreamBody,
  ThreadIdParam,
  parse,
  questionText,
  type StreamMode,
} from "../schemas";
import { checkpointSaver, graphFactory, threadStore } from "../runtime";

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
  const { uid } = callerOf(req);
  const threadId = parse(ThreadIdParam, req.params.threadId, "path");
  const body = parse(RunStreamBody, req.body ?? {}, "body");
  if (body.assistant_id !== ASSISTANT_ID) {
    throw new QuarryError(
      "not_found:assistant",
      `Assistant "${body.assistant_id}" not found: use "${ASSISTANT_ID}".`,
    );
  }
  const resume = body.command?.resume;
  if (body.input && resume !== undefined) {
    throw new QuarryError(
      "bad_request:body",
      "Send either input (a new question) or command.resume (the answer to the thread's question), not both.",
    );
  }
  if (!body.input && resume === undefined)
    throw new QuarryError(
      "bad_request:body",
      "input is required: { messages: [{ type: 'human', content }] }.",
    );
  const checkpointId = body.checkpoint_id ?? body.checkpoint?.checkpoint_id ?? undefined;
  if (resume !== undefined && checkpointId) {
    throw new QuarryError(
      "bad_request:body",
      "command.resume answers the question the thread is waiting on now: leave out checkpoint_id.",
    );
  }
  const question = body.input ? questionText(body.input) : answerText(resume);
  const requested = body.stream_mode === undefined ? ["values"] : [body.stream_mode].flat();
  if (requested.includes("messages")) {
    throw new QuarryError(
      "bad_request:body",
      'stream_mode "messages" is not supported: use "messages-tuple".',
    );
  }
  const modes = [...new Set(requested as StreamMode[])];
  const [store, saver, build, db, { Timestamp }] = await Promise.all([
    threadStore(),
    checkpointSaver(),
    graphFactory(),
    firestore(),
    import("firebase-admin/firestore"),
  ]);
  const runId = randomUUID();
  const leaseMs = config().runLeaseSeconds * 1000;
  // Agent Server's if_not_exists "create": a run on a thread id that does not exist yet creates it
  // (the caller's; someone else's id stays refused). One more round trip, only when asked.
  if (body.if_not_exists === "create") {
    await within(leaseMs, store.create(threadId, uid, {}, "do_nothing"), "creating the thread").catch(
      (err: unknown) => {
        throw err instanceof QuarryError ? err : storageError(err);
      },
    );
  }
  // The thread's latest checkpoint and its metadata document, in getTuple's two round trips. If
  // the document changed after the checkpoint was read (a run finishing, say), read both again.
  const read = () =>
    within(
      leaseMs,
      saver.getTupleAlong(
        {
          configurable: {
            thread_id: threadId,
            checkpoint_ns: "",
            ...(checkpointId ? { checkpoint_id: checkpointId } : {}),
          },
        },
        [store.ref(threadId)],
      ),
      "reading the thread",
    ).catch((err: unknown) => {
      throw storageError(err);
    });
  let { tuple, along, readTime } = await read();
  for (let again = 0; changedSince(along[0], readTime); again++) {
    if (again === 2) {
      throw new QuarryError("conflict:run", `Thread ${threadId} is changing right now: send it again.`);
    }
    ({ tuple, along, readTime } = await read());
  }
  const claim = { runId, leaseMs, question };
  store.leaseUpdate(threadId, along[0], uid, claim); // 404 / 409 now, before anything runs
  if (resume !== undefined && !waitingForAnswer(tuple)) {
    throw new QuarryError(
      "conflict:no_interrupt",
      `Thread ${threadId} is not waiting for an answer (it asked nothing, or the question was already ` +
        "answered): send a new question as input instead.",
    );
  }

  // The fast start (a Command turn, later steps held back) needs a thread at rest: not a fork, and
  // no tasks left by a stopped run (a Command would run them again; plain input discards them).
  // A resumed run holds back too: its first checkpoint comes after the clarify node, which has
  // nothing to redo, and holds the user's answer.
  const fast = resume !== undefined || (!checkpointId && !hasPendingTasks(tuple?.checkpoint));
  const message = body.input?.messages[0];
  const runSaver = new RunCheckpointer(
    saver,
    { threadId, checkpointId, tuple },
    (put) => store.claimLease(threadId, uid, claim, along[0], put),
    fast,
  );
  await executeRun(res, store, runSaver, build(runSaver), {
    threadId,
    uid,
    runId,
    leaseMs,
    modes,
    input: message
      ? { type: "human", content: message.content, id: message.id ?? randomUUID() }
      : { resume: answerText(resume) },
    checkpointId,
    asCommand: fast,
    // A resumable stream outlives its connection: the client rejoins it (Location, Last-Event-ID).
    cancelOnDisconnect:
      body.on_disconnect === "cancel" || (body.on_disconnect !== "continue" && !body.stream_resumable),
    ...(config().runLog
      ? {
          log: new RunLogWriter(runLog(db, config().threadsCollection, threadId, runId), {
            ttlMs: config().runLogTtlHours * 3_600_000,
            timestamp: Timestamp,
            onError: (err) => logger.warn("run log write failed", { threadId, runId, err: String(err) }),
          }),
        }
      : {}),
  });
}

/** Whether the checkpoint stopped at an `interrupt()` (a question to the user) not answered yet. */
function waitingForAnswer(tuple: CheckpointTuple | undefined): boolean {
  return (tuple?.pendingWrites ?? []).some(([, channel]) => channel === "__interrupt__");
}

/** `command.resume` (validated: a string or `{ answer }`) as the answer's text. */
function answerText(resume: unknown): string {
  return typeof resume === "string" ? resume.trim() : String((resume as { answer: string }).answer).trim();
}

/** Whether a document was updated after `readTime` (false when either is unknown or it is missing). */
function changedSince(snap: DocumentSnapshot, readTime: Timestamp | undefined): boolean {
  const u = snap.updateTime;
  if (!readTime || !u) return false;
  return (
    u.seconds > readTime.seconds || (u.seconds === readTime.seconds && u.nanoseconds > readTime.nanoseconds)
  );
}

async function cancelRun(req: Request, res: Response): Promise<void> {
  const { uid } = callerOf(req);
  const threadId = parse(ThreadIdParam, req.params.threadId, "path");
  const runId = parse(RunIdParam, req.params.runId, "path");
  parse(CancelQuery, req.query, "query");
  const store = await threadStore();
  const ok = await store.requestCancel(threadId, uid, runId);
  if (!ok) throw new QuarryError("not_found:run", `Run ${runId} is not running on thread ${threadId}.`);
  res.status(204).end();
}

async function getRun(req: Request, res: Response): Promise<void> {
  const { uid } = callerOf(req);
  const threadId = parse(ThreadIdParam, req.params.threadId, "path");
  const runId = parse(RunIdParam, req.params.runId, "path");
  const doc = await (await threadStore()).get(threadId, uid);
  const run = runsOf(threadId, doc).find((r) => r.run_id === runId);
  if (!run) throw new QuarryError("not_found:run", `Run ${runId} not found.`);
  res.json(run);
}

/**
 * The thread's runs that Quarry keeps track of: the one running now, and the last one that ran
 * (`client.runs.list`, e.g. to find a run to cancel or rejoin).
 */
async function listRuns(req: Request, res: Response): Promise<void> {
  const { uid } = callerOf(req);
  const threadId = parse(ThreadIdParam, req.params.threadId, "path");
  const q = parse(ListRunsQuery, req.query, "query");
  const doc = await (await threadStore()).get(threadId, uid);
  const runs = runsOf(threadId, doc).filter((r) => !q.status || r.status === q.status);
  res.json(runs.slice(q.offset, q.offset + q.limit));
}

function runsOf(threadId: string, doc: ThreadDoc) {
  const at = doc.updatedAt.toDate().toISOString();
  const run = (runId: string, status: string) => ({
    run_id: runId,
    thread_id: threadId,
    assistant_id: ASSISTANT_ID,
    status,
    metadata: {},
    multitask_strategy: "reject",
    created_at: at,
    updated_at: at,
  });
  const out = [];
  const running = doc.run && doc.run.expiresAt.toMillis() > Date.now() ? doc.run.runId : undefined;
  if (running) out.push(run(running, "running"));
  if (doc.lastRunId && doc.lastRunId !== running) {
    out.push(
      run(
        doc.lastRunId,
        doc.status === "error" ? "error" : doc.status === "interrupted" ? "interrupted" : "success",
      ),
    );
  }
  return out;
}

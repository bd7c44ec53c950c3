/**
 * Starting a run, shared by every way of asking for one (streamed, background, waited on): the
 * request is validated, the thread read with its metadata document, the lease claimed with the
 * run's first checkpoint, and the run executed (executor.ts).
 */
import { randomUUID } from "node:crypto";
import type { CheckpointTuple } from "@langchain/langgraph-checkpoint";
import type { DocumentSnapshot, Timestamp } from "firebase-admin/firestore";
import * as logger from "firebase-functions/logger";
import { config } from "../../config";
import { QuarryError } from "../../errors";
import { checkpointSaver, graphFactory, threadStore } from "../runtime";
import { ASSISTANT_ID, type StreamMode } from "../../contract/protocol";
import { RunStreamBody, parse, questionText } from "../schemas";
import type { RunOutput } from "../sse";
import { within } from "../within";
import { leaseHolder, type ThreadDoc, type ThreadStore } from "../thread-store";
import { RunCheckpointer, hasPendingTasks } from "./checkpointer";
import { RunLogWriter, runLog } from "./event-log";
import { executeRun, storageError, type RunOutcome } from "./executor";

/** A run request, validated: what to run and how. */
export interface CheckedRun {
  body: RunStreamBody;
  resume: unknown;
  checkpointId: string | undefined;
  question: string;
  modes: StreamMode[];
}

/** Validates a run request's body (the same for streamed, background and waited-on runs); 4xx otherwise. */
export function checkRun(raw: unknown): CheckedRun {
  const body = parse(RunStreamBody, raw ?? {}, "body");
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
  return { body, resume, checkpointId, question, modes };
}

/**
 * Starts a run: reads the thread, takes the lease (404 / 409 before anything runs) and executes the
 * run into `out` — an SSE stream, or nothing for a run whose client does not listen (background,
 * waited on): its events still go to the run's log.
 */
export async function startRun(
  uid: string,
  threadId: string,
  { body, resume, checkpointId: fromCheckpoint, question, modes }: CheckedRun,
  out: RunOutput,
  runId: string = randomUUID(),
): Promise<RunOutcome> {
  const [store, saver, build, { Timestamp }] = await Promise.all([
    threadStore(),
    checkpointSaver(),
    graphFactory(),
    import("firebase-admin/firestore"),
  ]);
  const leaseMs = config().runLeaseSeconds * 1000;
  let checkpointId = fromCheckpoint;
  if (body.if_not_exists === "create") await ensureThread(store, threadId, uid);
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
  // multitask_strategy: a busy thread's run is stopped first ("interrupt": what it did stays;
  // "rollback": the new run starts from the checkpoint before it), instead of a 409 ("reject").
  const thread = along[0].data() as ThreadDoc | undefined;
  const busyWith = leaseHolder(thread) ? thread?.run : undefined;
  const strategy = body.multitask_strategy ?? "reject";
  if (strategy !== "reject" && busyWith) {
    if (!(await store.requestCancel(threadId, uid, busyWith.runId))) {
      throw new QuarryError("not_found:thread", `Thread ${threadId} not found.`);
    }
    await store.waitForRelease(threadId, busyWith.runId, leaseMs);
    // A rollback of a thread's very first run has nothing to go back to: it is an interrupt.
    if (strategy === "rollback" && busyWith.from) checkpointId = busyWith.from;
    ({ tuple, along } = await read());
  }
  const from = tuple?.config.configurable?.checkpoint_id as string | undefined;
  const claim = { runId, leaseMs, question, strategy, ...(from ? { from } : {}) };
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
  return executeRun(out, store, runSaver, build(runSaver), {
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
          log: new RunLogWriter(runLog(store.runRef(threadId, runId)), {
            ttlMs: config().runLogTtlHours * 3_600_000,
            timestamp: Timestamp,
            onError: (err) => logger.warn("run log write failed", { threadId, runId, err: String(err) }),
          }),
        }
      : {}),
  });
}

/**
 * Agent Server's if_not_exists "create": a run on a thread id that does not exist yet creates it
 * (the caller's; someone else's id stays refused). One more round trip, only when asked.
 */
export async function ensureThread(store: ThreadStore, threadId: string, uid: string): Promise<void> {
  const leaseMs = config().runLeaseSeconds * 1000;
  await within(leaseMs, store.create(threadId, uid, {}, "do_nothing"), "creating the thread").catch(
    (err: unknown) => {
      throw err instanceof QuarryError ? err : storageError(err);
    },
  );
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

/**
 * Starting a run, shared by every way of asking for one (streamed, background, waited on): the
 * request is validated, the thread read with its metadata document, the lease claimed with the
 * run's first checkpoint, and the run executed (executor.ts).
 */
import { randomUUID } from "node:crypto";
import type { CheckpointTuple } from "@langchain/langgraph-checkpoint";
import type { DocumentSnapshot, Timestamp } from "firebase-admin/firestore";
import * as logger from "firebase-functions/logger";
import { config } from "../config";
import { QuarryError } from "../errors";
import { personScope } from "../identity";
import { checkpointSaver, graphFactory, runStore, threadStore } from "./runtime";
import type { MultitaskStrategy } from "../contract/protocol";
import type { RunStreamBody } from "./schemas";
import { answerText, type CheckedRun } from "./check";
import type { RunOutput } from "./output";
import { storageError, within } from "../storage";
import { leaseHolder, textOf, type RunClaim, type ThreadDoc } from "./thread-doc";
import type { ThreadStore } from "./thread-store";
import type { RunStore } from "./run-store";
import { RunCheckpointer, holdsBack, rootCommit } from "./checkpointer";
import { executeRun, type RunResult } from "./executor";
import { admit, chargeAlong, refuseEmptyScope, runPerson, type RunCaller } from "./admission";
import { HOLDER, type Durability } from "./durable";
import { queueWatchdog } from "./watchdog-queue";
import { openRunLog } from "./open-log";

type Checkpointer = Awaited<ReturnType<typeof checkpointSaver>>;

/**
 * Reads the thread's checkpoint (the latest, or `checkpointId`) with its metadata document, in
 * getTuple's two round trips. If the document changed after the checkpoint was read (a run
 * finishing, say), both are read again; a thread changing all the time is a 409.
 */
async function readThread(store: ThreadStore, saver: Checkpointer, threadId: string, checkpointId?: string) {
  const leaseMs = config().runLeaseMs;
  const config_ = {
    configurable: {
      thread_id: threadId,
      checkpoint_ns: "",
      ...(checkpointId ? { checkpoint_id: checkpointId } : {}),
    },
  };
  for (let attempt = 0; ; attempt++) {
    const read = await within(
      leaseMs,
      saver.getTupleAlong(config_, [store.ref(threadId)]),
      "reading the thread",
    ).catch((err: unknown) => {
      throw storageError(err);
    });
    if (!changedSince(read.along[0], read.readTime)) return read;
    if (attempt === 2)
      throw new QuarryError("conflict:run", `Thread ${threadId} is changing right now: send it again.`);
  }
}

/**
 * multitask_strategy: a busy thread's run is stopped first ("interrupt": what it did stays;
 * "rollback": the new run starts from the checkpoint before it) instead of a 409 ("reject").
 * Returns the checkpoint to start from when a rollback has one (a thread's very first run has
 * nothing to go back to: it is an interrupt), or undefined when nothing was stopped.
 */
async function stopBusyRun(
  runs: RunStore,
  uid: string,
  threadId: string,
  thread: ThreadDoc | undefined,
  strategy: MultitaskStrategy,
): Promise<{ from?: string } | undefined> {
  const busyWith = leaseHolder(thread) ? thread?.run : undefined;
  if (strategy === "reject" || !busyWith) return undefined;
  if (!(await runs.requestCancel(threadId, uid, busyWith.runId))) {
    throw new QuarryError("not_found:thread", `Thread ${threadId} not found.`);
  }
  await runs.waitForRelease(threadId, busyWith.runId, config().runLeaseMs);
  return strategy === "rollback" && busyWith.from ? { from: busyWith.from } : {};
}

/**
 * Starts a run: reads the thread, takes the lease (404 / 409 before anything runs) and executes the
 * run into `out` — an SSE stream, or nothing for a run whose client does not listen (background,
 * waited on): its events still go to the run's log.
 */
export async function startRun(
  caller: RunCaller,
  threadId: string,
  { body, resume, checkpointId: asked, question: asking, rerun, modes }: CheckedRun,
  out: RunOutput,
  runId: string = randomUUID(),
): Promise<RunResult> {
  const { uid } = caller;
  refuseEmptyScope(caller.access.scope);
  // A fresh instance builds its graph (modules, the warehouse, the context) while the thread is
  // read and the quota checked, not before: and a Firestore that cannot be reached is a 503 within
  // the lease time, whatever the build still waits for.
  const building = graphFactory();
  building.catch(() => {}); // awaited below, once the run may start; observed now
  const [store, runs, saver] = await Promise.all([threadStore(), runStore(), checkpointSaver()]);
  const leaseMs = config().runLeaseMs;
  // User identity mode: consent checked (auth:bigquery_consent before anything runs) and the scope
  // narrowed to the tables the person's own credentials can read. Service mode: the group scope.
  const scope = await personScope(uid, caller.access.scope);
  if (body.if_not_exists === "create") await ensureThread(store, saver, threadId, uid);
  // The person's quota is checked (and the question counted) beside the thread's read: one more
  // round trip at most, none when the read takes longer. 429 before anything runs.
  const [admission, read] = await Promise.all([admit(caller), readThread(store, saver, threadId, asked)]);
  const strategy = body.multitask_strategy ?? "reject";
  const { tuple, along, checkpointId } = await afterBusyRun(
    runs,
    store,
    saver,
    uid,
    threadId,
    strategy,
    read,
    asked,
  );
  const from = tuple?.config.configurable?.checkpoint_id as string | undefined;
  const question = rerun ? rerunQuestion(threadId, tuple) : asking;
  const message = body.input?.messages[0];
  // The question's id, the client's or ours: the same in the checkpoint and in the thread's values.
  const messageId = message ? (message.id ?? randomUUID()) : undefined;
  const questionId = rerun ? undefined : messageId;
  const claim = claimOf(caller, modes, { runId, leaseMs, question, strategy, from, questionId });
  claim.scopeKey = scope.key;
  runs.refuseUnclaimable(threadId, along[0], uid, claim); // 404 / 409 now, before anything runs
  if (resume !== undefined && !waitingForAnswer(tuple)) {
    throw new QuarryError(
      "conflict:no_interrupt",
      `Thread ${threadId} is not waiting for an answer (it asked nothing, or the question was already ` +
        "answered): send a new question as input instead.",
    );
  }
  const build = await building;
  const runSaver = new RunCheckpointer(
    saver,
    { threadId, checkpointId, tuple },
    (put) => runs.claimLease(threadId, uid, claim, along[0], put),
    // A rerun holds back too: its steps are folded like a turn's, into one checkpoint after the one it ran on from.
    rerun || holdsBack({ resume: resume !== undefined, tuple }),
  );
  // A rerun has no first checkpoint before its first model call: its lease is taken now, alone.
  if (rerun) await runSaver.claimAlone((along) => runs.commitAlone(along));
  const durable = watchFromStart(runSaver, saver, { threadId, runId, attempt: 0 });
  return executeRun(out, runs, runSaver, build(runSaver), {
    threadId,
    uid,
    runId,
    leaseMs,
    modes,
    input: message
      ? questionInput(message.content, messageId!, body.input?.investigate)
      : rerunOrAnswer(rerun, resume),
    checkpointId,
    cancelOnDisconnect: cancelsOnDisconnect(body),
    person: runPerson(caller, scope, admission.bytesLeft, along[0].data() as ThreadDoc | undefined),
    ...(config().runLog ? { log: await openRunLog(runs, threadId, runId) } : {}),
    ...(durable ? { durable } : {}),
    // Charged with the release (a run handed to a task is charged there).
    charge: await chargeAlong(caller),
  });
}

/** What the run's lease records: the claim, with what a continuation needs to run it the same way. */
function claimOf(caller: RunCaller, modes: string[], claim: RunClaim): RunClaim {
  const { runOrphanMs } = config();
  return {
    ...claim,
    ...{ holder: HOLDER, modes, ...(runOrphanMs ? { graceMs: runOrphanMs } : {}) },
    ...(caller.via ? { via: caller.via } : {}),
    ...(caller.schedule ? { schedule: caller.schedule } : {}),
  };
}

/**
 * A durable run (continuations on): its watchdog is queued once its lease is taken (beside the
 * first commit, never holding it up; a run refused before that needs none). Returns the run's
 * durability, or undefined when continuations are off.
 */
function watchFromStart(
  saver: RunCheckpointer,
  checkpoints: Durability["checkpoints"],
  task: { threadId: string; runId: string; attempt: number },
): Durability | undefined {
  if (!config().runOrphanMs) return undefined;
  saver.started.then(
    () =>
      queueWatchdog(task).catch((err: unknown) =>
        logger.warn("run watchdog not queued: the run is not continued if its instance stops", {
          ...task,
          err: String(err),
        }),
      ),
    () => {},
  );
  return { attempt: 0, ttlMs: config().runLogTtlMs, checkpoints };
}

/**
 * The thread as the run starts from it: as read, or — when the multitask strategy stopped a busy
 * run first — read again after it let go (from the checkpoint before it, for a rollback).
 */
async function afterBusyRun(
  runs: RunStore,
  store: ThreadStore,
  saver: Checkpointer,
  uid: string,
  threadId: string,
  strategy: MultitaskStrategy,
  read: Awaited<ReturnType<typeof readThread>>,
  asked: string | undefined,
) {
  const stopped = await stopBusyRun(
    runs,
    uid,
    threadId,
    read.along[0].data() as ThreadDoc | undefined,
    strategy,
  );
  if (!stopped) return { ...read, checkpointId: asked };
  const checkpointId = stopped.from ?? asked;
  return { ...(await readThread(store, saver, threadId, checkpointId)), checkpointId };
}

/**
 * Agent Server's if_not_exists "create": a run on a thread id that does not exist yet creates it
 * (the caller's; someone else's id stays refused). One more round trip, only when asked.
 */
export async function ensureThread(
  store: ThreadStore,
  saver: Checkpointer,
  threadId: string,
  uid: string,
): Promise<void> {
  const leaseMs = config().runLeaseMs;
  const created = store.create(threadId, uid, {}, "do_nothing", rootCommit(saver, threadId));
  await within(leaseMs, created, "creating the thread").catch((err: unknown) => {
    throw err instanceof QuarryError ? err : storageError(err);
  });
}

/**
 * The question a rerun answers again: the last human message in its checkpoint. A checkpoint with
 * none (a thread's empty start) has nothing to run on: 400.
 */
function rerunQuestion(threadId: string, tuple: CheckpointTuple | undefined): string {
  const messages = (tuple?.checkpoint.channel_values?.messages ?? []) as {
    content?: unknown;
    _getType?: () => string;
    type?: string;
  }[];
  const human = [...messages].reverse().find((m) => (m._getType?.() ?? m.type) === "human");
  const text = textOf(human?.content);
  if (!text.trim()) {
    throw new QuarryError(
      "bad_request:body",
      `Checkpoint ${String(tuple?.config.configurable?.checkpoint_id ?? "")} of thread ${threadId} holds no ` +
        "question to run on from: send input (a question) with it.",
    );
  }
  return text;
}

/** Whether the checkpoint stopped at an `interrupt()` (a question to the user) not answered yet. */
function waitingForAnswer(tuple: CheckpointTuple | undefined): boolean {
  return (tuple?.pendingWrites ?? []).some(([, channel]) => channel === "__interrupt__");
}

/** A new question as the run's input; `investigate` answers it with an investigation. */
function questionInput(content: unknown, id: string, investigate: boolean | undefined) {
  return { type: "human" as const, content, id, ...(investigate ? { investigate: true } : {}) };
}

/** A run without a question: a rerun from its checkpoint, or the answer to the graph's question. */
function rerunOrAnswer(rerun: boolean, resume: unknown): { rerun: true } | { resume: string } {
  return rerun ? { rerun: true } : { resume: answerText(resume) };
}

/** A resumable stream outlives its connection: the client rejoins it (Location, Last-Event-ID). */
function cancelsOnDisconnect(body: RunStreamBody): boolean {
  return body.on_disconnect === "cancel" || (body.on_disconnect !== "continue" && !body.stream_resumable);
}

/** Whether a document was updated after `readTime` (false when either is unknown or it is missing). */
function changedSince(snap: DocumentSnapshot, readTime: Timestamp | undefined): boolean {
  const u = snap.updateTime;
  if (!readTime || !u) return false;
  return (
    u.seconds > readTime.seconds || (u.seconds === readTime.seconds && u.nanoseconds > readTime.nanoseconds)
  );
}

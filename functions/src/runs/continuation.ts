/**
 * Durable runs: a run whose instance stops holding its lease before the end (a crash, scale-in, a
 * deploy, a client gone for good) is continued by a task from its last stored step, once.
 *
 * Every attempt of a run has a watchdog task (`runWatchdog`, functions/src/index.ts), queued when
 * its lease is taken and first delivered at the lease's length (plus one watchdog interval). It
 * reads the thread document: while the lease is held the task fails on purpose, and the queue
 * delivers it again one interval later (its retry backoff: the Cloud Tasks emulator honours it
 * and ignores a schedule time). Once the lease has lapsed the watchdog takes the run over as the
 * next attempt (takeover.ts: one transaction, fenced) and finishes it in this delivery — from the
 * run's progress checkpoint, so no finished step is done twice — with the event log going on
 * under the next attempt's ids. After `QUARRY_RUN_CONTINUATIONS` continuations the run ends with
 * `unavailable:run` and the thread keeps its last checkpoint.
 */
import type { CheckpointTuple } from "@langchain/langgraph-checkpoint";
import * as logger from "firebase-functions/logger";
import { config } from "../config";
import { QuarryError, toErrorBody } from "../errors";
import { accessStores, resolveAccess } from "../access/gate";
import { personScope } from "../identity";
import { adminAuth } from "../services";
import { STREAM_MODES, type RunOutcome, type StreamMode, type ThreadStatus } from "../contract/protocol";
import { checkpointSaver, graphFactory, runStore } from "./runtime";
import { NO_OUTPUT } from "./output";
import { watchVerdict, type ThreadDoc } from "./thread-doc";
import { PROGRESS_NS, RunCheckpointer, type ProgressMark } from "./checkpointer";
import { executeRun } from "./executor";
import { openRunLog } from "./open-log";
import { queueWatchdog, type WatchTask } from "./watchdog-queue";
import { chargeAlong, runPerson, type RunCaller } from "./admission";
import { HOLDER } from "./durable";
import { takeOver } from "./takeover";
import type { RunStore } from "./run-store";

/** Thrown while the run is still held: the queue delivers the task again one interval later. */
class StillHeld extends Error {
  constructor() {
    super("the run still holds its lease: looking again later");
    this.name = "StillHeld";
  }
}

/** The watchdog function's body: looks at the run, and continues or closes it once its lease lapsed. */
export async function watchRun(task: WatchTask): Promise<void> {
  const runs = await runStore();
  const doc = await runs.threadDoc(task.threadId);
  const verdict = watchVerdict(doc, task.runId, task.attempt, config().runContinuations);
  if (verdict === "done") return;
  if (verdict === "held") throw new StillHeld();
  if (verdict === "continue") return continueRun(runs, task, doc!);
  const closing = verdict === "cancelled" ? "cancelled" : "error";
  await closeRun(runs, task, closing);
}

/** Takes the lapsed run over and finishes it from its progress, in this delivery. */
async function continueRun(runs: RunStore, task: WatchTask, doc: ThreadDoc): Promise<void> {
  const { threadId, runId } = task;
  const { runLeaseMs: leaseMs, runLogTtlMs: ttlMs, runLog } = config();
  const taken = await take(runs, task, false);
  if (!taken) return;
  const attempt = taken.attempt;
  logger.info("continuing a run whose instance stopped", { threadId, runId, attempt });
  // The next attempt's watchdog, before anything runs: this delivery's instance may stop too.
  await queueWatchdog({ threadId, runId, attempt });
  const [saver, build] = await Promise.all([checkpointSaver(), graphFactory()]);
  const from = await progressOf(saver, threadId, runId);
  const runSaver = new RunCheckpointer(saver, { threadId, tuple: from.tuple }, () => Promise.resolve());
  runSaver.continueFrom(from.kept);
  const caller = await ownerOf(threadId, doc);
  const lease = doc.run!;
  const result = await executeRun(NO_OUTPUT, runs, runSaver, build(runSaver), {
    threadId,
    uid: doc.owner,
    runId,
    leaseMs,
    modes: (lease.modes as StreamMode[] | undefined) ?? [...STREAM_MODES],
    input: { rerun: true },
    cancelOnDisconnect: false,
    person: runPerson(caller, caller.access.scope, await bytesLeft(caller), doc),
    ...(runLog ? { log: await openRunLog(runs, threadId, runId, { attempt, nextDoc: taken.nextDoc }) } : {}),
    durable: { attempt, ttlMs, checkpoints: saver },
    // The whole turn (the steps it resumed from included), charged with the release, once.
    charge: await chargeAlong(caller),
  });
  if (result.handedOver) return;
  await backgroundStatus(runs, threadId, runId, result.status, result.error);
}

/**
 * Where the run goes on from: its progress checkpoint (the latest step it finished), else the
 * thread's latest checkpoint — the run's own first one, stored with its lease.
 */
async function progressOf(
  saver: Awaited<ReturnType<typeof checkpointSaver>>,
  threadId: string,
  runId: string,
): Promise<{ tuple: CheckpointTuple | undefined; kept: string }> {
  const progress = await saver.getTuple({
    configurable: { thread_id: threadId, checkpoint_ns: PROGRESS_NS, checkpoint_id: runId },
  });
  const mark = (progress?.metadata as { quarry_run?: ProgressMark } | undefined)?.quarry_run;
  if (progress && mark?.runId === runId) {
    // Served as the thread's latest: LangGraph resumes it (no input, no checkpoint id) and runs
    // the steps after it; its own id again, so its children name it as LangGraph made it.
    const config = { configurable: { thread_id: threadId, checkpoint_ns: "", checkpoint_id: mark.id } };
    return {
      tuple: { ...progress, config, checkpoint: { ...progress.checkpoint, id: mark.id } },
      kept: mark.kept,
    };
  }
  const latest = await saver.getTuple({ configurable: { thread_id: threadId, checkpoint_ns: "" } });
  const kept = latest?.config.configurable?.checkpoint_id as string | undefined;
  if (!latest || !kept) throw new Error(`thread ${threadId} has no checkpoint to continue run ${runId} from`);
  return { tuple: latest, kept };
}

/** The thread's owner as a run's caller, with access resolved again now (someone removed does not run). */
async function ownerOf(threadId: string, doc: ThreadDoc): Promise<RunCaller> {
  const uid = doc.owner;
  const user = await (await adminAuth()).getUser(uid).catch(() => undefined);
  const email = user?.email ?? null;
  const access = await resolveAccess(
    { uid, email: email ?? undefined, emailVerified: user?.emailVerified === true },
    { fresh: true },
  );
  const scope = await personScope(uid, access.scope);
  const lease = doc.run;
  if (!scope.all && !scope.entries.length)
    throw new QuarryError("forbidden:no_scope", `The owner of thread ${threadId} no longer sees any data.`);
  return {
    uid,
    email,
    access: { ...access, scope },
    ...(lease?.via ? { via: lease.via } : {}),
    ...(lease?.schedule ? { schedule: lease.schedule } : {}),
  };
}

/** What is left of the owner's bytes today (no question is counted again: it was counted when asked). */
async function bytesLeft(caller: RunCaller): Promise<number> {
  const { quotas } = await accessStores();
  const figures = await quotas.figures(caller.uid, caller.access.limits);
  return Math.max(figures.bytesPerDay.limit - figures.bytesPerDay.used, 0);
}

/** A background run's document (if it has one) says how it ended. */
async function backgroundStatus(
  runs: RunStore,
  threadId: string,
  runId: string,
  status: RunOutcome,
  error?: unknown,
): Promise<void> {
  if (!(await runs.readRun(threadId, runId))) return;
  await runs.setStatus(threadId, runId, status, error ? { error } : {});
}

/**
 * Ends a lapsed run without running it: cancelled (someone asked it to stop), or after its last
 * continuation with the worded error. It is taken over like a continuation (so no lapsed attempt
 * can still write), its log ends in-band, and the thread keeps its last checkpoint — never a
 * half-written turn.
 */
async function closeRun(runs: RunStore, task: WatchTask, outcome: "cancelled" | "error"): Promise<void> {
  const { threadId, runId } = task;
  const { runLog, runContinuations } = config();
  const taken = await take(runs, task, true);
  if (!taken) return;
  const error =
    outcome === "error"
      ? toErrorBody(
          new QuarryError(
            "unavailable:run",
            `This answer could not be finished: the servers running it stopped ${runContinuations + 1} times. ` +
              "Your question is saved in the conversation: ask it again.",
          ),
        ).body
      : undefined;
  if (runLog) {
    const log = await openRunLog(runs, threadId, runId, { attempt: taken.attempt, nextDoc: taken.nextDoc });
    log.append("metadata", { run_id: runId, attempt: taken.attempt + 1 });
    if (error) log.append("error", error);
    await log.close({ status: outcome });
  }
  const saver = await checkpointSaver();
  await saver
    .checkpointRef(threadId, PROGRESS_NS, runId)
    .delete()
    .catch(() => {});
  const status: ThreadStatus = outcome === "error" ? "error" : "idle";
  await runs.releaseLease(threadId, runId, status, undefined, undefined, outcome, taken.attempt);
  await backgroundStatus(runs, threadId, runId, outcome, error);
  logger.warn("run closed without finishing", { threadId, runId, outcome, attempts: taken.attempt });
}

/**
 * Takes attempt `task.attempt` of the lapsed run over (to run it on, or — `closing` — to close it).
 * Undefined when it is not this watchdog's to take: another took it, or the attempt had finished
 * and only failed to let go (then it is let go for it).
 */
async function take(runs: RunStore, task: WatchTask, closing: boolean) {
  const { runLeaseMs: leaseMs, runLogTtlMs: ttlMs, runLog } = config();
  const taken = await takeOver(runs, {
    ...task,
    from: task.attempt,
    leaseMs,
    holder: HOLDER,
    ttlMs,
    log: runLog,
    ...(closing ? { closing } : {}),
  });
  if (taken === "lost") return undefined;
  if (taken === "fenced" || "ended" in taken) return void (await finishedAlready(runs, task, taken));
  return taken;
}

/**
 * The lapsed attempt had finished — committed the run's last checkpoint (the fence is its), or
 * written its log's end — and stopped before letting go of the thread: it is let go for it.
 */
async function finishedAlready(
  runs: RunStore,
  { threadId, runId, attempt }: WatchTask,
  how: "fenced" | { ended: RunOutcome },
): Promise<void> {
  const outcome = how === "fenced" ? "success" : how.ended;
  const status: ThreadStatus = outcome === "error" ? "error" : "idle";
  await runs.releaseLease(threadId, runId, status, undefined, undefined, outcome, attempt);
  logger.info("run had finished before its instance stopped: released", { threadId, runId, outcome });
}

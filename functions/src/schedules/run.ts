/**
 * A scheduled run (the `scheduledRun` task-queue function's body): the claimed schedule's saved
 * question runs as its owner — their Firebase account read and access checked again, fresh (a deleted,
 * disabled or revoked account's or a removed member's schedule stops), the
 * owner's scope, identity mode and quotas (over quota: skipped, and recorded so) — on the
 * schedule's own conversation, through the run lifecycle of every other run (lease, checkpoints,
 * event log, audit). Its planner runs the saved SQL without a model call (agent/nodes/planner.ts),
 * so a run costs one query and the generator's short answer. Then the alert is evaluated on the
 * rows, the outcome recorded on the schedule (MAX_CONSECUTIVE_FAILURES in a row pause it), and the owner told
 * (notification, webhook, mail), and the answer posted to the schedule's chat room as the app.
 */
import { randomUUID } from "node:crypto";
import * as logger from "firebase-functions/logger";
import { currentAccount, revokedSince, type Account, type AccountGone } from "../access/account";
import { resolveAccess, type Access } from "../access/gate";
import { ASSISTANT_ID, STREAM_MODES } from "../contract/protocol";
import { QuarryError } from "../errors";
import { agentGraph, checkpointSaver, threadStore } from "../runs/runtime";
import { rootCommit } from "../runs/checkpointer";
import { startRun } from "../runs/start";
import { checkRun } from "../runs/check";
import { NO_OUTPUT } from "../runs/output";
import type { TurnResult } from "../agent/state";
import type { RoomAnswer, RoomDelivery } from "../runs/room-delivery";
import { evaluate, type AlertOutcome } from "./alerts";
import { deliver, mail, notify, type RunNews } from "./delivery";
import type { ScheduledTask } from "./queue";
import type { LastRun, ScheduleDoc } from "./doc";
import { MAX_CONSECUTIVE_FAILURES, scheduleStore, type ScheduleStore } from "./store";
import { firstProseLine } from "./answer-text";

/** What one scheduled run came to (for the schedule's `lastRun`, and for tests). */
export interface ScheduledRunReport {
  outcome: LastRun["outcome"] | "not_run";
  summary?: string;
  fired?: boolean;
  error?: string;
  /** Set when the schedule paused itself with this run. */
  paused?: boolean;
  runId?: string;
}

/** What a scheduled run may be given, as the tick is (tests: their own store, account and gate). */
export interface ScheduledRunOptions {
  store?: Pick<ScheduleStore, "takeClaim" | "recordRun" | "recordDelivery">;
  /** The owner's Firebase account as it is now (default: access/account.ts, read fresh). */
  account?: (uid: string) => Promise<Account | AccountGone>;
  /** The access gate's decision, past its cache (default: access/gate.ts). */
  access?: (who: { uid: string; email?: string; emailVerified: boolean }) => Promise<Access>;
  /** How an answer reaches the schedule's chat room (index.ts gives the chat channel's). */
  rooms?: RoomDelivery;
}

/** Runs a claimed schedule once; a task whose claim was taken already (or paused since) does nothing. */
export async function runScheduled(
  task: ScheduledTask,
  opts: ScheduledRunOptions = {},
): Promise<ScheduledRunReport> {
  const store = opts.store ?? (await scheduleStore());
  const doc = await store.takeClaim(task.scheduleId, task.claim);
  if (!doc) return { outcome: "not_run" };
  const id = task.scheduleId;
  const owner = await ownerNow(doc, {
    account: opts.account ?? ((uid) => currentAccount(uid, { fresh: true })),
    access: opts.access ?? ((who) => resolveAccess(who, { fresh: true })),
  });
  if ("error" in owner && owner.transient) {
    await store.recordRun(id, {
      outcome: "skipped",
      summary: "not run",
      fired: false,
      figure: null,
      error: `skipped: ${owner.error}`,
    });
    return { outcome: "skipped", error: owner.error };
  }
  if ("error" in owner) {
    // The owner may no longer use Quarry: the schedule stops (an admin or the owner, re-admitted, resumes it).
    const error = `its owner may no longer use Quarry (${owner.error})`;
    await store.recordRun(
      id,
      { outcome: "skipped", summary: "not run", fired: false, figure: null, error },
      { pause: `paused: ${error}` },
    );
    return { outcome: "skipped", error, paused: true };
  }
  const runId = randomUUID();
  const ran = await execute(doc, id, owner, runId);
  return finish(store, { ...doc, ownerEmail: owner.email }, id, { ...ran, runId }, opts.rooms);
}

/** The schedule's owner as they stand now: their account's email and what the access gate decides. */
interface Owner {
  email: string | null;
  access: Access;
}

/**
 * Reads the owner's Firebase account before each run (access/account.ts, as MCP's tokens do), then
 * the access gate on its current email, fresh: a deleted or disabled account, sessions revoked since
 * the schedule was last saved, or a member removed — each is an error that pauses the schedule.
 */
async function ownerNow(
  doc: ScheduleDoc,
  read: Required<Pick<ScheduledRunOptions, "account" | "access">>,
): Promise<Owner | { error: string; transient?: true }> {
  try {
    const account = await read.account(doc.owner);
    if ("gone" in account) return { error: `the account was ${account.gone}` };
    if (revokedSince(account, (doc.ownerSavedAt ?? doc.createdAt).toMillis()))
      return {
        error: "the account's sessions were revoked after the schedule was saved: save it again to resume it",
      };
    const access = await read.access({
      uid: doc.owner,
      email: account.email,
      emailVerified: account.emailVerified,
    });
    return { email: account.email ?? null, access };
  } catch (err) {
    if (err instanceof QuarryError) return { error: err.message };
    // Auth or Firestore could not be read: not the owner's doing, so not a pause — this run is skipped.
    logger.error("scheduled run: the owner could not be read", { uid: doc.owner, err: String(err) });
    return { error: "the owner's account could not be read now", transient: true };
  }
}

interface Ran {
  outcome: LastRun["outcome"];
  error?: string;
  result?: NonNullable<RoomAnswer["result"]>;
  answer?: string;
  questionId?: string;
}

/** The run itself, on the schedule's conversation; a refusal before it started is a skip or a failure. */
async function execute(doc: ScheduleDoc, id: string, owner: Owner, runId: string): Promise<Ran> {
  const questionId = randomUUID();
  const checked = checkRun({
    assistant_id: ASSISTANT_ID,
    input: { messages: [{ type: "human", content: doc.question, id: questionId }] },
  });
  try {
    await ensureScheduleThread(doc, id);
    const result = await startRun(
      { uid: doc.owner, email: owner.email, access: owner.access, schedule: { id, sql: doc.sql } },
      doc.scheduleThreadId,
      { ...checked, modes: [...STREAM_MODES] },
      NO_OUTPUT,
      runId,
    );
    const { turnResults, finalAnswer } = await turnOf(doc.scheduleThreadId);
    if (result.status === "cancelled") return { outcome: "skipped", error: "skipped: the run was stopped" };
    if (result.status === "error")
      return { outcome: "failed", error: result.error?.message ?? "the run failed" };
    const query = [...turnResults].reverse().find((r) => r.tool === "bq_query");
    if (!query) return { outcome: "failed", error: "the saved query did not run", answer: finalAnswer };
    if (query.artifact.kind === "error")
      return {
        outcome: "failed",
        error: `the saved query failed: ${query.artifact.message}`,
        answer: finalAnswer,
      };
    if (query.artifact.kind !== "query")
      return { outcome: "failed", error: "the saved query gave no result" };
    return { outcome: "ok", result: query.artifact.result, answer: finalAnswer, questionId };
  } catch (err) {
    const quarry = err instanceof QuarryError ? err : undefined;
    const message = err instanceof QuarryError ? err.message : "the run could not start";
    if (!(err instanceof QuarryError))
      logger.error("scheduled run failed to start", { id, err: String(err) });
    // Over quota, or its conversation busy with another run: not the schedule's fault, not counted.
    if (quarry?.area === "quota" || quarry?.code === "conflict:run")
      return { outcome: "skipped", error: `skipped: ${message}` };
    return { outcome: "failed", error: message };
  }
}

/**
 * The schedule's own conversation, created by its first run: the owner's, titled with the
 * schedule's name, its metadata naming the schedule (the page can tell it from asked ones).
 */
async function ensureScheduleThread(doc: ScheduleDoc, id: string): Promise<void> {
  const [store, saver] = await Promise.all([threadStore(), checkpointSaver()]);
  const threadId = doc.scheduleThreadId;
  await store.create(
    threadId,
    doc.owner,
    { title: doc.name, scheduleId: id },
    "do_nothing",
    rootCommit(saver, threadId),
  );
}

/** The schedule conversation's turn as the checkpoint holds it: tool results and the answer. */
async function turnOf(threadId: string): Promise<{ turnResults: TurnResult[]; finalAnswer: string }> {
  const graph = await agentGraph();
  const snap = await graph.getState({ configurable: { thread_id: threadId } });
  const values = snap.values as { turnResults?: TurnResult[]; finalAnswer?: string };
  return { turnResults: values.turnResults ?? [], finalAnswer: values.finalAnswer ?? "" };
}

/** Evaluates the alert, records the run on the schedule, and tells the owner. */
async function finish(
  store: Pick<ScheduleStore, "recordRun" | "recordDelivery">,
  doc: ScheduleDoc,
  id: string,
  ran: Ran & { runId: string },
  rooms: RoomDelivery | undefined,
): Promise<ScheduledRunReport> {
  const alert: AlertOutcome | undefined =
    ran.outcome === "ok" && doc.alert
      ? evaluate(doc.alert, ran.result?.rows ?? [], doc.lastRun?.figure)
      : undefined;
  const summary = ran.error ?? alert?.summary ?? firstProseLine(ran.answer ?? "");
  const fired = alert?.fired === true;
  const recorded = await store.recordRun(id, {
    outcome: ran.outcome,
    summary,
    fired,
    figure: alert?.figure ?? (doc.alert?.kind === "change" ? (doc.lastRun?.figure ?? null) : null),
    error: ran.error ?? null,
  });
  const paused = recorded?.paused === true && !doc.paused;
  const news: RunNews = {
    uid: doc.owner,
    email: doc.ownerEmail,
    scheduleId: id,
    threadId: doc.scheduleThreadId,
    name: doc.name,
    title:
      ran.outcome === "failed"
        ? `${doc.name}: the scheduled run failed${paused ? " and the schedule paused" : ""}`
        : `${doc.name}: ${summary}`,
    body:
      ran.outcome === "failed"
        ? paused
          ? `${ran.error}. ${pauseNote()}`
          : (ran.error ?? "")
        : (ran.answer ?? summary),
    fired,
  };
  // The owner hears of a fired alert, and of a run that failed or was skipped (over quota, say).
  if (fired || ran.outcome !== "ok") {
    await notify(news).catch((err: unknown) =>
      logger.error("notification not written", { id, err: String(err) }),
    );
    await mail(news).catch((err: unknown) => logger.error("mail not queued", { id, err: String(err) }));
  }
  // The webhook and the room hear fired alerts, or every answer of a schedule without an alert.
  if (ran.outcome === "ok" && (fired || !doc.alert) && (doc.webhook || doc.room)) {
    const problems = await deliver(doc, id, ran, fired && alert ? alert.summary : undefined, rooms);
    // The schedule may have been deleted meanwhile: nothing left to show the failure on.
    await store
      .recordDelivery(id, problems.length ? problems.join("; and ") : null)
      .catch((err: unknown) => logger.warn("delivery not recorded", { id, err: String(err) }));
  }
  return {
    outcome: ran.outcome,
    summary,
    fired,
    ...(ran.error ? { error: ran.error } : {}),
    paused,
    runId: ran.runId,
  };
}

function pauseNote(): string {
  return `The schedule paused after ${MAX_CONSECUTIVE_FAILURES} failed runs in a row: fix its SQL (save a new answer's SQL) and resume it.`;
}

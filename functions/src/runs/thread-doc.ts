/**
 * The thread metadata document (`threads/{threadId}`) and what is read from it: owner, title,
 * status, timestamps, usage totals, and the run lease that allows one run per thread across all
 * instances. Pure: the store (thread-store.ts) reads and writes it.
 */
import type { UploadRef } from "../tools/uploads/types";
import type { ScheduledTurn, Via } from "../tools/person";
import type { DocumentSnapshot, Timestamp } from "firebase-admin/firestore";
import { ZERO_USAGE, type Usage } from "../contract/events";
import {
  ASSISTANT_ID,
  type MultitaskStrategy,
  type RunOutcome,
  type ThreadStatus,
} from "../contract/protocol";
import { QuarryError } from "../errors";

/** The run that wants the thread's lease. */
export interface RunClaim {
  runId: string;
  leaseMs: number;
  /** The run's question: the title of a thread that has none yet, and its first `values`. */
  question: string;
  /** The question's message id as the client sent it (kept in the thread's first `values`). */
  questionId?: string;
  /** The asker's scope key (`tools/scope.ts`): whom the thread's question may be shown to as a team question. */
  scopeKey?: string;
  /** The checkpoint the run starts from, if the thread has one. */
  from?: string;
  strategy?: MultitaskStrategy;
  /** The process taking it (`host:pid`). */
  holder?: string;
  /** How long past its expiry the lease still holds while the run is continued (`LeaseRecord.graceMs`). */
  graceMs?: number;
  /** The stream modes the run logs. */
  modes?: string[];
  /** How the run came and whose schedule it runs (a continuation runs it the same way). */
  via?: Via;
  schedule?: ScheduledTurn;
}

/** The agent's usage counters summed over the thread's runs, plus the number of runs. */
export interface UsageTotals extends Usage {
  runs: number;
}

/** The lease of the run that currently owns the thread. */
interface LeaseRecord {
  runId: string;
  /** Lease end; a crashed instance's lease simply runs out. */
  expiresAt: Timestamp;
  /** Set by the cancel endpoint (any instance); the running instance watches it. */
  cancel: boolean;
  /** The checkpoint the run started from (where multitask_strategy "rollback" starts again). */
  from?: string;
  /** What the run asked a busy thread to do (the run object's `multitask_strategy`). */
  strategy?: MultitaskStrategy;
  /**
   * Which attempt holds it: 0 for the run as started, k for its k-th continuation
   * (runs/continuation.ts). Renewals and the release compare it, so an instance that lost the run
   * to a continuation can no longer touch it.
   */
  attempt?: number;
  /** The process holding it (`host:pid`): logs, and the tests that stop it. */
  holder?: string;
  /**
   * How long past `expiresAt` the run still counts as running (its watchdog continues it within
   * this): readers wait and new runs are refused. 0 or absent: a lapsed lease holds nothing.
   */
  graceMs?: number;
  /** The stream modes the run logs (a continuation logs the same). */
  modes?: string[];
  /** The instance let the run go on purpose (its client left for good): a task continues it now. */
  handoff?: boolean;
  via?: Via;
  schedule?: ScheduledTurn;
}

export interface ThreadDoc {
  owner: string;
  title: string;
  status: ThreadStatus;
  metadata: Record<string, unknown>;
  createdAt: Timestamp;
  updatedAt: Timestamp;
  usage: UsageTotals;
  run: LeaseRecord | null;
  lastRunId?: string;
  /** How many runs have taken the thread's lease: `lastRunId`'s number (v2 event seq, v2/events.ts). */
  runNo?: number;
  /** How the last run that let go of the thread ended (what its log's end marker says too). */
  lastRunEnd?: { runId: string; outcome: RunOutcome; strategy?: MultitaskStrategy };
  /** Set when a delete has begun: no new run may start. */
  deleting?: boolean;
  /** What search and GET show of the thread's state (threadValues), as of its last run. */
  values?: ThreadValues;
  /** The scope its first question was asked in: only people who see all of it are offered that question. */
  scopeKey?: string;
  /**
   * The conversation's uploaded tables by name (files.ts): what a run carries so the warehouse,
   * the gate and the prompt see them; the full record is `files/{name}` under the thread.
   */
  uploads?: Record<string, UploadRef & { expiresAt: Timestamp }>;
}

/** The thread's uploads that have not expired, as a run carries them. */
export function uploadsOf(doc: ThreadDoc | undefined, now = Date.now()): UploadRef[] {
  return Object.values(doc?.uploads ?? {})
    .filter((u) => u.expiresAt.toMillis() > now)
    .map(({ expiresAt: _e, ...ref }) => ref)
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** A thread's conversation as search and GET show it: questions and answers, trimmed. */
export interface ThreadValues {
  messages: { type: string; id?: string; content: string }[];
}

/** How much of a conversation a thread's `values` keep: the first question and the latest messages, each cut. */
const THREAD_VALUES = { messages: 12, chars: 500 } as const;

/** A message's content as text (a string, or the text parts of a list). */
export const textOf = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content.map((p: { text?: unknown }) => (typeof p?.text === "string" ? p.text : "")).join("")
      : "";

/**
 * The `values` a thread's search result and GET carry, from its messages (plain dicts): the
 * questions and the answers (no tool calls or tool results, which need the thread's state), the
 * first question always (clients label a thread with it) and the latest ones, each cut to
 * THREAD_VALUES.chars. Stored on the thread document when a run lets go of it, so a search reads
 * nothing more than the documents it lists.
 */
export function threadValues(messages: unknown[]): ThreadValues {
  const said = (
    messages as { type?: string; id?: string; content?: unknown; tool_calls?: unknown[] }[]
  ).filter(
    (m) => m?.type === "human" || (m?.type === "ai" && !m.tool_calls?.length && textOf(m.content).trim()),
  );
  const n = THREAD_VALUES.messages;
  const kept = said.length <= n ? said : [said[0], ...said.slice(-(n - 1))];
  return {
    messages: kept.map((m) => {
      const text = textOf(m.content);
      return {
        type: m.type!,
        ...(m.id ? { id: m.id } : {}),
        content: text.length > THREAD_VALUES.chars ? `${text.slice(0, THREAD_VALUES.chars - 1)}…` : text,
      };
    }),
  };
}

export const ZERO_TOTALS: UsageTotals = Object.freeze({ ...ZERO_USAGE, runs: 0 });

export const notFound = (id: string) => new QuarryError("not_found:thread", `Thread ${id} not found.`);

/**
 * The thread as read in `snap` if `uid` owns it; else 404 — another person's thread looks exactly
 * like a missing one. The one owner check of every thread route.
 */
export function ownedBy(id: string, snap: DocumentSnapshot, uid: string): ThreadDoc {
  const doc = snap.data() as ThreadDoc | undefined;
  if (!doc || doc.owner !== uid) throw notFound(id);
  return doc;
}

/** Agent Server thread shape. */
export function toThread(id: string, doc: ThreadDoc) {
  return {
    thread_id: id,
    created_at: doc.createdAt.toDate().toISOString(),
    updated_at: doc.updatedAt.toDate().toISOString(),
    metadata: {
      ...doc.metadata,
      owner: doc.owner,
      title: doc.title,
      graph_id: ASSISTANT_ID,
      assistant_id: ASSISTANT_ID,
    },
    status: doc.status,
    values: (doc.values ?? null) as ThreadValues | null,
    interrupts: {},
    usage: doc.usage,
  };
}

/**
 * Until when the lease holds the thread: its expiry, plus the grace in which a lapsed run is
 * continued by its watchdog (none once a cancel was asked for: a stopped run is not continued).
 */
export function leaseEnd(run: LeaseRecord): number {
  return run.expiresAt.toMillis() + (run.cancel ? 0 : (run.graceMs ?? 0));
}

/**
 * The run holding the thread's lease now, if any: a lease that ran out holds nothing, unless its
 * run is within its grace (it is being continued: runs/continuation.ts).
 */
export function leaseHolder(doc: ThreadDoc | undefined, now = Date.now()): string | undefined {
  return doc?.run && leaseEnd(doc.run) > now ? doc.run.runId : undefined;
}

/** What a run's watchdog (attempt `attempt` of run `runId`) finds on the thread. */
export type WatchVerdict =
  /** The run ended, was replaced, or a later attempt has it (with a watchdog of its own). */
  | "done"
  /** Its instance still holds it: look again later. */
  | "held"
  /** It lapsed after a cancel: close it as cancelled. */
  | "cancelled"
  /** It lapsed and has continuations left: take it over and finish it. */
  | "continue"
  /** It lapsed after its last continuation: end it with the worded error. */
  | "give-up";

/** The watchdog's decision, from the thread document alone. Pure. */
export function watchVerdict(
  doc: ThreadDoc | undefined,
  runId: string,
  attempt: number,
  limit: number,
  now = Date.now(),
): WatchVerdict {
  const run = doc?.run;
  if (!run || run.runId !== runId || (run.attempt ?? 0) !== attempt) return "done";
  if (run.expiresAt.toMillis() > now && !run.handoff) return "held";
  if (run.cancel) return "cancelled";
  return attempt >= limit ? "give-up" : "continue";
}

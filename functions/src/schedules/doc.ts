/**
 * The schedule document (`schedules/{id}`) and what the API shows of it. Pure: the store
 * (store.ts) reads and writes it.
 */
import type { Timestamp } from "firebase-admin/firestore";
import type { AlertCondition } from "./alerts";
import type { Schedule } from "./cadence";
import type { ScheduleView } from "../contract/schedules";

/** How a scheduled run ended. */
type RunOutcomeKind = "ok" | "failed" | "skipped";

/** What a schedule's last run did. */
export interface LastRun {
  at: Timestamp;
  outcome: RunOutcomeKind;
  /** One line: the alert's summary, or the answer's first line. */
  summary: string;
  fired: boolean;
  /** The figure a change alert compares next run. */
  figure: number | null;
  /** Why it failed or was skipped, in words. */
  error: string | null;
}

/** `schedules/{id}`. */
export interface ScheduleDoc {
  owner: string;
  ownerEmail: string | null;
  /** As the owner's token said at creation: access is resolved again, fresh, at every run. */
  ownerEmailVerified: boolean;
  name: string;
  question: string;
  sql: string;
  /** The conversation the question was saved from. */
  threadId: string;
  /** The schedule's own conversation (the owner's), created by its first run. */
  scheduleThreadId: string;
  schedule: Schedule;
  cron: string;
  timeZone: string;
  alert: AlertCondition | null;
  webhook: string | null;
  /** The chat room the app posts each answer to (absent on older documents: none). */
  room?: string | null;
  paused: boolean;
  pausedReason: string | null;
  /** Paused by an admin: only an admin resumes it (absent on older documents: false). */
  pausedByAdmin?: boolean;
  nextRunAt: Timestamp;
  lastRun: LastRun | null;
  /** Consecutive failed runs. */
  failures: number;
  /** The last delivery (webhook or room) that failed (cleared by the next that succeeds). */
  deliveryError: { at: Timestamp; message: string } | null;
  /** The tick claim whose run has not started yet (a task delivered twice runs once). */
  pendingClaim: string | null;
  claimedBy: string | null;
  claimedAt: Timestamp | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
  /**
   * When its owner last created or changed it (a run or an admin's pause does not count): sessions
   * revoked after this stop it until the owner saves it again. Absent on schedules made before the
   * field: `createdAt` stands for it.
   */
  ownerSavedAt?: Timestamp;
}

/** What a person gives (validated) when creating a schedule. */
export interface NewSchedule {
  name: string;
  question: string;
  sql: string;
  threadId: string;
  schedule: Schedule;
  cron: string;
  alert: AlertCondition | null;
  webhook: string | null;
  room: string | null;
  nextRunAt: Date;
}

/** The fields a `PATCH` may change (already validated; `nextRunAt` recomputed when the cadence changes). */
export type ScheduleChanges = Partial<
  Pick<
    ScheduleDoc,
    "name" | "question" | "sql" | "schedule" | "cron" | "timeZone" | "alert" | "webhook" | "room"
  >
> & { paused?: boolean; nextRunAt?: Date };

/** The owner as the store records them. */
export interface ScheduleOwner {
  uid: string;
  email: string | null;
  emailVerified: boolean;
}

/** A schedule as the API answers it: timestamps as ISO strings, the claim bookkeeping left out. */
export function scheduleView(id: string, doc: ScheduleDoc): ScheduleView {
  const iso = (t: Timestamp | null | undefined) => (t ? t.toDate().toISOString() : null);
  return {
    id,
    owner: doc.owner,
    ownerEmail: doc.ownerEmail,
    name: doc.name,
    question: doc.question,
    sql: doc.sql,
    threadId: doc.threadId,
    scheduleThreadId: doc.scheduleThreadId,
    schedule: doc.schedule,
    cron: doc.cron,
    timeZone: doc.timeZone,
    alert: doc.alert,
    webhook: doc.webhook,
    room: doc.room ?? null,
    paused: doc.paused,
    pausedReason: doc.pausedReason,
    pausedByAdmin: doc.paused && doc.pausedByAdmin === true,
    nextRunAt: iso(doc.nextRunAt),
    lastRun: doc.lastRun ? { ...doc.lastRun, at: iso(doc.lastRun.at) } : null,
    failures: doc.failures,
    deliveryError: doc.deliveryError ? { ...doc.deliveryError, at: iso(doc.deliveryError.at) } : null,
    createdAt: iso(doc.createdAt),
    updatedAt: iso(doc.updatedAt),
  };
}

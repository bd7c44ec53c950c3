/**
 * Scheduled questions as the API answers them (`/schedules`, `/admin/schedules`) and the
 * notification documents the page's bell reads live from Firestore (`notifications/{id}`, rules:
 * the person's own, `where("uid", "==", uid)`; they may set `read`). The request bodies are
 * validated by `functions/src/schedules/schema.ts`; these are the answers' shapes.
 */

/** A cadence, as sent and answered. */
export type ScheduleCadence =
  | { kind: "daily"; time: string; timeZone: string }
  | {
      kind: "weekly";
      days: ("mon" | "tue" | "wed" | "thu" | "fri" | "sat" | "sun")[];
      time: string;
      timeZone: string;
    }
  | { kind: "monthly"; day: number | "last"; time: string; timeZone: string };

/** An alert condition, as sent and answered. */
export type ScheduleAlert =
  | {
      kind: "threshold";
      column: string;
      op: ">" | ">=" | "<" | "<=" | "==" | "!=";
      value: number;
      row?: "any" | "all" | "first";
    }
  | { kind: "change"; column: string; direction: "down" | "up" | "either"; percent: number }
  | { kind: "rows"; when: "any" | "none" };

/** A schedule as `GET /schedules/:id` answers it (times as ISO strings). */
export interface ScheduleView {
  id: string;
  owner: string;
  ownerEmail: string | null;
  name: string;
  question: string;
  sql: string;
  /** The conversation it was saved from. */
  threadId: string;
  /** The schedule's own conversation, where its answers are written. */
  scheduleThreadId: string;
  schedule: ScheduleCadence;
  /** Derived, for display. */
  cron: string;
  timeZone: string;
  alert: ScheduleAlert | null;
  /** The owner's URL; for admins, only its origin (`https://host/…`). */
  webhook: string | null;
  paused: boolean;
  /** Why it is paused, in words (its owner, an admin, three failures, its owner's access). */
  pausedReason: string | null;
  /** An admin paused it: only an admin resumes it. */
  pausedByAdmin: boolean;
  nextRunAt: string | null;
  lastRun: {
    at: string | null;
    outcome: "ok" | "failed" | "skipped";
    summary: string;
    fired: boolean;
    figure: number | null;
    error: string | null;
  } | null;
  /** Failed runs in a row (three pause it). */
  failures: number;
  /** The last webhook delivery that failed, until one succeeds. */
  deliveryError: { at: string | null; message: string } | null;
  createdAt: string | null;
  updatedAt: string | null;
}

/** `notifications/{id}`: a fired alert, or a scheduled run that failed or was skipped. */
export interface NotificationDoc {
  uid: string;
  scheduleId: string;
  /** The schedule's conversation (the page's `/t/<threadId>`). */
  threadId: string;
  title: string;
  /** The answer's or the error's first line. */
  body: string;
  fired: boolean;
  read: boolean;
  /** A Firestore Timestamp. */
  createdAt: unknown;
}

/**
 * Scheduled questions as the API answers about them (`/schedules`, `/admin/schedules`,
 * docs/schedules.md) and the notification documents the page's bell reads live from Firestore
 * (`notifications/{id}`). The routes' schemas (functions/src/schedules/) are checked against these
 * shapes where they answer, so a change on one side fails the typecheck of the other.
 */

/** Weekday names as a weekly schedule lists them (Monday first). */
export const SCHEDULE_WEEKDAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"] as const;
export type ScheduleWeekday = (typeof SCHEDULE_WEEKDAYS)[number];

/** The last day of the month a monthly schedule may name; later days are "last". */
export const SCHEDULE_MAX_MONTH_DAY = 28;

/** When a schedule runs: a wall-clock time (HH:MM, 24-hour) in an IANA time zone. */
export type ScheduleCadence =
  | { kind: "daily"; time: string; timeZone: string }
  | { kind: "weekly"; days: ScheduleWeekday[]; time: string; timeZone: string }
  | { kind: "monthly"; day: number | "last"; time: string; timeZone: string };

/** Comparison operators of a threshold alert. */
export const ALERT_OPS = [">", ">=", "<", "<=", "==", "!="] as const;
export type AlertOp = (typeof ALERT_OPS)[number];

/** An alert condition on a scheduled run's rows, evaluated without a model. */
export type ScheduleAlert =
  | { kind: "threshold"; column: string; op: AlertOp; value: number; row?: "any" | "all" | "first" }
  | { kind: "change"; column: string; direction: "down" | "up" | "either"; percent: number }
  | { kind: "rows"; when: "any" | "none" };

/** `POST /schedules`'s body. */
export interface NewScheduleBody {
  threadId: string;
  question: string;
  sql: string;
  schedule: ScheduleCadence;
  alert?: ScheduleAlert;
  webhook?: string;
  /** A Slack channel or Google Chat space the app posts each answer to (CHAT_ROOM). */
  room?: string;
  name?: string;
}

/** `PATCH /schedules/:id`'s body: what it names is replaced; `alert: null`, `webhook: null` and `room: null` remove them. */
export interface PatchScheduleBody {
  question?: string;
  sql?: string;
  schedule?: ScheduleCadence;
  alert?: ScheduleAlert | null;
  webhook?: string | null;
  room?: string | null;
  name?: string;
  paused?: boolean;
}

/** What a schedule's last run did (`lastRun` of a schedule). */
export interface ScheduleLastRun {
  at: string | null;
  outcome: "ok" | "failed" | "skipped";
  /** One line: the alert's summary, or the answer's first line. */
  summary: string;
  fired: boolean;
  figure: number | null;
  error: string | null;
}

/** A schedule as `GET /schedules`, `GET /schedules/:id` and the admin list answer it. */
export interface ScheduleView {
  id: string;
  owner: string;
  ownerEmail: string | null;
  name: string;
  question: string;
  sql: string;
  /** The conversation the question was saved from. */
  threadId: string;
  /** The schedule's own conversation, where its answers arrive (exists after its first run). */
  scheduleThreadId: string;
  schedule: ScheduleCadence;
  cron: string;
  timeZone: string;
  alert: ScheduleAlert | null;
  /** The owner's URL; for admins, only its origin (`https://host/…`). */
  webhook: string | null;
  /** The Slack channel or Google Chat space the app posts its answers to. */
  room: string | null;
  paused: boolean;
  /** Why it is paused, in words (its owner, an admin, three failures, its owner's access). */
  pausedReason: string | null;
  /** An admin paused it: only an admin resumes it. */
  pausedByAdmin: boolean;
  nextRunAt: string | null;
  lastRun: ScheduleLastRun | null;
  /** Consecutive failed runs. */
  failures: number;
  /** The last delivery (webhook or room) that failed, until one succeeds. */
  deliveryError: { at: string | null; message: string } | null;
  createdAt: string | null;
  updatedAt: string | null;
}

/** `GET /schedules` and `GET /admin/schedules`. */
export interface SchedulesAnswer {
  schedules: ScheduleView[];
}

/** The notifications collection (rules: its person reads, and may change `read` only). */
export const NOTIFICATIONS_COLLECTION = "notifications";

/**
 * `notifications/{id}`: a fired alert or a failed run, for its person. `T` is the timestamp's type
 * (the Admin SDK's on the server, the web SDK's in the page).
 */
export interface ScheduleNotification<T = unknown> {
  uid: string;
  scheduleId: string;
  /** The schedule's conversation. */
  threadId: string;
  title: string;
  /** The answer's or the error's first line. */
  body: string;
  fired: boolean;
  read: boolean;
  createdAt: T;
}

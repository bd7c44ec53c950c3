/**
 * The "Schedule…" dialog's state, its checks and the `POST /schedules` body it becomes (or, changing
 * a saved schedule, the `PATCH` body). Pure, so
 * the body and the checks are unit-tested without a page (test/unit/web-schedules.test.ts). The
 * server checks everything again and answers 400 naming the field; these checks only save a
 * round trip for what the form itself can see (a missing day, a threshold that is not a number).
 */
import {
  SCHEDULE_MAX_MONTH_DAY,
  type AlertOp,
  type NewScheduleBody,
  type PatchScheduleBody,
  type ScheduleAlert,
  type ScheduleCadence,
  type ScheduleView,
  type ScheduleWeekday,
} from "@quarry/functions/contract";

/** The longest name the API takes. */
const MAX_NAME_CHARS = 100;

/** Which alert, if any, the form sets. */
type AlertChoice = "none" | "threshold" | "change" | "rows-any" | "rows-none";

export interface ScheduleForm {
  name: string;
  cadence: ScheduleCadence["kind"];
  days: ScheduleWeekday[];
  /** "1" … "28" or "last". */
  monthDay: string;
  /** HH:MM, 24-hour. */
  time: string;
  timeZone: string;
  alert: AlertChoice;
  column: string;
  op: AlertOp;
  /** As typed: checked to be a number. */
  value: string;
  /** Which rows a threshold is checked on: it fires when any (or all, or the first) crosses it. */
  row: "any" | "all" | "first";
  direction: "down" | "up" | "either";
  percent: string;
  webhook: string;
  /** A chat room the Quarry app posts each answer to (`slack:<team>:<channel>` or `google_chat:spaces/<id>`). */
  room: string;
}

/** Where the question comes from: the answer being scheduled. */
export interface ScheduleSource {
  threadId: string;
  question: string;
  sql: string;
  /** The answer's result columns (what an alert may watch). */
  columns: string[];
}

/** A problem with one field of the form, in words. */
export interface FormProblem {
  field: keyof ScheduleForm;
  message: string;
}

/** The form as it opens: the question as the name, daily at 09:00 in `timeZone`, no alert. */
export function defaultForm(source: ScheduleSource, timeZone: string): ScheduleForm {
  return {
    name: source.question.trim().slice(0, MAX_NAME_CHARS),
    cadence: "daily",
    days: ["mon"],
    monthDay: "1",
    time: "09:00",
    timeZone,
    alert: "none",
    column: source.columns[0] ?? "",
    op: ">",
    value: "",
    row: "any",
    direction: "down",
    percent: "20",
    webhook: "",
    room: "",
  };
}

/** A number as a person types it ("1,250.5", " 20 "), or undefined when it is not one. */
export function parseNumber(text: string): number | undefined {
  const t = text.replace(/[\s,_]/g, "");
  if (!/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(t)) return undefined;
  const n = Number(t);
  return Number.isFinite(n) ? n : undefined;
}

function alertProblems(form: ScheduleForm, columns: readonly string[]): FormProblem[] {
  if (form.alert !== "threshold" && form.alert !== "change") return [];
  const out: FormProblem[] = [];
  if (!form.column) out.push({ field: "column", message: "Choose the column the alert watches." });
  else if (columns.length && !columns.includes(form.column))
    out.push({ field: "column", message: `The answer has no column "${form.column}".` });
  if (form.alert === "threshold" && parseNumber(form.value) === undefined)
    out.push({ field: "value", message: "The threshold must be a number, like 1000 or 2.5." });
  if (form.alert === "change") {
    const pct = parseNumber(form.percent);
    if (pct === undefined || pct <= 0)
      out.push({ field: "percent", message: "The change must be a number of percent above 0, like 20." });
  }
  return out;
}

/** What is wrong with the form, field by field; empty when it can be sent. */
export function formProblems(form: ScheduleForm, columns: readonly string[]): FormProblem[] {
  const out: FormProblem[] = [];
  if (form.name.trim().length > MAX_NAME_CHARS)
    out.push({ field: "name", message: `The name may be at most ${MAX_NAME_CHARS} characters.` });
  if (form.cadence === "weekly" && form.days.length === 0)
    out.push({ field: "days", message: "Tick at least one day of the week." });
  if (!/^([01]\d|2[0-3]):[0-5]\d$/.test(form.time))
    out.push({ field: "time", message: "The time must be HH:MM on a 24-hour clock, like 09:00." });
  if (!form.timeZone.trim())
    out.push({ field: "timeZone", message: 'Give a time zone, like "Europe/Berlin" or "UTC".' });
  return [...out, ...alertProblems(form, columns)];
}

function cadenceOf(form: ScheduleForm): ScheduleCadence {
  const at = { time: form.time, timeZone: form.timeZone.trim() };
  if (form.cadence === "weekly") return { kind: "weekly", days: [...form.days], ...at };
  if (form.cadence === "monthly") {
    const day = form.monthDay === "last" ? "last" : Number(form.monthDay);
    return {
      kind: "monthly",
      day: day === "last" ? day : Math.min(Math.max(day, 1), SCHEDULE_MAX_MONTH_DAY),
      ...at,
    };
  }
  return { kind: "daily", ...at };
}

function alertOf(form: ScheduleForm): ScheduleAlert | undefined {
  switch (form.alert) {
    case "threshold":
      return {
        kind: "threshold",
        column: form.column,
        op: form.op,
        value: parseNumber(form.value) ?? NaN,
        row: form.row,
      };
    case "change":
      return {
        kind: "change",
        column: form.column,
        direction: form.direction,
        percent: parseNumber(form.percent) ?? NaN,
      };
    case "rows-any":
      return { kind: "rows", when: "any" };
    case "rows-none":
      return { kind: "rows", when: "none" };
    case "none":
      return undefined;
  }
}

/**
 * What a saved schedule's form is made from: its question and SQL. Its result's columns are not
 * kept, so an alert's column is typed (the run says so when the result has no such column).
 */
export function sourceOfSchedule(s: ScheduleView): ScheduleSource {
  return { threadId: s.threadId, question: s.question, sql: s.sql, columns: [] };
}

/** The form showing a saved schedule, to change it. */
export function formOfSchedule(s: ScheduleView): ScheduleForm {
  const c = s.schedule;
  const form: ScheduleForm = {
    ...defaultForm(sourceOfSchedule(s), c.timeZone),
    name: s.name,
    cadence: c.kind,
    time: c.time,
    webhook: s.webhook ?? "",
    room: s.room ?? "",
  };
  if (c.kind === "weekly") form.days = [...c.days];
  if (c.kind === "monthly") form.monthDay = String(c.day);
  const a = s.alert;
  if (a?.kind === "threshold") {
    Object.assign(form, {
      alert: "threshold",
      column: a.column,
      op: a.op,
      value: String(a.value),
      row: a.row ?? "any",
    });
  } else if (a?.kind === "change") {
    Object.assign(form, {
      alert: "change",
      column: a.column,
      direction: a.direction,
      percent: String(a.percent),
    });
  } else if (a?.kind === "rows") form.alert = a.when === "any" ? "rows-any" : "rows-none";
  return form;
}

/** The `PATCH /schedules/:id` body for a changed form: everything it shows (no alert, webhook or room: removed). */
export function scheduleChanges(form: ScheduleForm): PatchScheduleBody {
  const name = form.name.trim();
  return {
    schedule: cadenceOf(form),
    alert: alertOf(form) ?? null,
    webhook: form.webhook.trim() || null,
    room: form.room.trim() || null,
    ...(name ? { name } : {}),
  };
}

/** The `POST /schedules` body for a form that has no problems ({@link formProblems}). */
export function scheduleBody(form: ScheduleForm, source: ScheduleSource): NewScheduleBody {
  const alert = alertOf(form);
  const name = form.name.trim();
  const webhook = form.webhook.trim();
  const room = form.room.trim();
  return {
    threadId: source.threadId,
    question: source.question,
    sql: source.sql,
    schedule: cadenceOf(form),
    ...(alert ? { alert } : {}),
    ...(webhook ? { webhook } : {}),
    ...(room ? { room } : {}),
    ...(name ? { name } : {}),
  };
}

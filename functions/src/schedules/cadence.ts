/**
 * A schedule as a person gives it (daily, weekly on chosen days, monthly on a day or the last day,
 * at a wall-clock time in their IANA time zone), validated, turned into a cron string, and its next
 * fire time computed with cron-parser in that zone.
 *
 * Only these structured cadences are accepted; a raw cron string is never taken from a person, so
 * the minimum interval holds by construction (daily is the most frequent) and every schedule can be
 * shown back in words. The cron string is derived, kept for display and for Cloud Scheduler-style
 * tooling, never parsed from input. The next fire time is in `next-run.ts`, which loads cron-parser
 * and luxon: request validation here stays light (the routes load on first request).
 */
import { z } from "zod";
import { parse } from "../runs/schemas";

/** Weekday names in the order the page lists them (Monday first). */
const WEEKDAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"] as const;
type Weekday = (typeof WEEKDAYS)[number];

/** Cron's day-of-week number (Sunday is 0). */
const CRON_DOW: Record<Weekday, number> = { sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6 };

/** Days 29–31 do not exist in every month; "last" covers the end of the month instead. */
const MAX_MONTH_DAY = 28;

/**
 * The built-in minimum interval between two runs, in minutes: a day. Daily is the most frequent
 * cadence offered; the interval is nominal (a daily schedule on a 23-hour daylight-saving day is
 * still daily).
 */
export const MIN_INTERVAL_MINUTES = 24 * 60;

const KINDS = "daily, weekly or monthly";

const time = z
  .string({ message: "time must be a time of day as HH:MM on a 24-hour clock, like 09:00" })
  .regex(/^([01]\d|2[0-3]):[0-5]\d$/, "time must be HH:MM on a 24-hour clock, like 09:00 or 17:30");

/**
 * An IANA zone name ("Europe/Berlin", "America/New_York", "UTC"). Fixed offsets ("+02:00") are
 * refused: they never follow daylight saving, so "09:00" would drift by an hour half the year.
 */
const timeZone = z
  .string({ message: 'timeZone must be an IANA time zone name, like "Europe/Berlin" or "UTC"' })
  .refine((zone) => !/^[+-]/.test(zone) && knownZone(zone), {
    message:
      'timeZone is not a known IANA time zone: use a name like "Europe/Berlin", "America/New_York" or "UTC"',
  });

/** Whether the runtime's time zone data knows the name (what luxon's `IANAZone.isValidZone` asks too). */
function knownZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return zone.length > 0;
  } catch {
    return false;
  }
}

const days = z
  .array(z.enum(WEEKDAYS, { message: `each day must be one of ${WEEKDAYS.join(", ")}` }), {
    message: `days must be a list of weekdays (${WEEKDAYS.join(", ")})`,
  })
  .min(1, "days must name at least one weekday")
  .refine((list) => new Set(list).size === list.length, { message: "days lists a weekday twice" });

const MONTH_DAY = `day must be a day of the month from 1 to ${MAX_MONTH_DAY}, or "last" (29–31 do not exist in every month)`;
const monthDay = z.union(
  [z.literal("last"), z.number().int(MONTH_DAY).min(1, MONTH_DAY).max(MAX_MONTH_DAY, MONTH_DAY)],
  { message: MONTH_DAY },
);

/** A schedule as the API takes it (`schedule` in `POST /schedules`), strict: an unknown field is named. */
export const ScheduleSpec = z.discriminatedUnion(
  "kind",
  [
    z.strictObject({ kind: z.literal("daily"), time, timeZone }),
    z.strictObject({ kind: z.literal("weekly"), days, time, timeZone }),
    z.strictObject({ kind: z.literal("monthly"), day: monthDay, time, timeZone }),
  ],
  {
    error: (issue) => {
      const input: unknown = issue.input;
      if (typeof input !== "object" || input === null)
        return `the schedule must be an object with kind (${KINDS})`;
      const kind = (input as { kind?: unknown }).kind;
      const got = kind === undefined ? "it is missing" : `got ${JSON.stringify(kind)}`;
      return `kind must be ${KINDS} (${got}); a raw cron string is not accepted`;
    },
  },
);
export type Schedule = z.infer<typeof ScheduleSpec>;

/** The schedule, checked; throws a 400 (`bad_request:body`) naming each field to fix. */
export function validateSchedule(input: unknown): Schedule {
  return parse(ScheduleSpec, input, "schedule");
}

/** The cron string (`minute hour day-of-month month day-of-week`) read in the schedule's time zone. */
export function toCron(schedule: Schedule): string {
  const [hour, minute] = schedule.time.split(":").map(Number);
  const at = `${minute} ${hour}`;
  switch (schedule.kind) {
    case "daily":
      return `${at} * * *`;
    case "weekly": {
      const dow = [...new Set(schedule.days.map((d) => CRON_DOW[d]))].sort((a, b) => a - b);
      return `${at} * * ${dow.join(",")}`;
    }
    case "monthly":
      return `${at} ${schedule.day === "last" ? "L" : schedule.day} * *`;
  }
}

/** The shortest nominal gap between two runs of a cadence, in days (for the minimum-interval rule). */
function shortestGapDays(schedule: Schedule): number {
  switch (schedule.kind) {
    case "daily":
      return 1;
    case "weekly": {
      const order = [...new Set(schedule.days.map((d) => WEEKDAYS.indexOf(d)))].sort((a, b) => a - b);
      // The gap around the week's end (Sunday → next Monday) counts too; one day alone is 7.
      const gaps = order.map((d, i) => (i === 0 ? d + 7 - order[order.length - 1] : d - order[i - 1]));
      return Math.min(...gaps);
    }
    case "monthly":
      // February: the 28th to 28 March, or 31 January to 28 February for "last".
      return 28;
  }
}

/**
 * Whether a schedule respects a minimum interval (minutes; {@link MIN_INTERVAL_MINUTES} unless a
 * deployment sets a longer one). Every structured cadence meets the built-in day; a longer
 * deployment minimum (a week, say) refuses daily schedules.
 */
export function minIntervalOk(schedule: Schedule, minMinutes = MIN_INTERVAL_MINUTES): boolean {
  return shortestGapDays(schedule) * 24 * 60 >= minMinutes;
}

/** The 400 message for a schedule that runs more often than the minimum, saying what to choose. */
export function minIntervalMessage(minMinutes = MIN_INTERVAL_MINUTES): string {
  const days = minMinutes / (24 * 60);
  const span = Number.isInteger(days) ? `${days} day${days === 1 ? "" : "s"}` : `${minMinutes} minutes`;
  return `schedule: runs may be at most once every ${span} here; choose fewer days or a longer cadence`;
}

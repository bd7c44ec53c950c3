/**
 * Schedules and alerts in words for the page: "Every Monday and Friday at 09:00 (Europe/Berlin)",
 * "when orders falls by 20 % or more". Pure, unit-tested (test/unit/web-schedules.test.ts).
 */
import type { ScheduleAlert, ScheduleCadence, ScheduleWeekday } from "@quarry/functions/contract";
import { SCHEDULE_WEEKDAYS } from "@quarry/functions/contract";

const DAY_NAMES: Record<ScheduleWeekday, string> = {
  mon: "Monday",
  tue: "Tuesday",
  wed: "Wednesday",
  thu: "Thursday",
  fri: "Friday",
  sat: "Saturday",
  sun: "Sunday",
};

const OP_WORDS: Record<string, string> = {
  ">": "is above",
  ">=": "is at or above",
  "<": "is below",
  "<=": "is at or below",
  "==": "equals",
  "!=": "is not",
};

/** "a", "a and b", "a, b and c". */
function list(items: string[]): string {
  return items.length <= 1 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
}

/** 1st, 2nd, 3rd, 4th … 21st, 22nd, 23rd, 28th. */
export function ordinal(n: number): string {
  const tens = n % 100;
  const suffix =
    tens >= 11 && tens <= 13 ? "th" : n % 10 === 1 ? "st" : n % 10 === 2 ? "nd" : n % 10 === 3 ? "rd" : "th";
  return `${n}${suffix}`;
}

function daysInWords(days: readonly ScheduleWeekday[]): string {
  const set = new Set(days);
  if (set.size === 7) return "Every day";
  const weekdays = SCHEDULE_WEEKDAYS.slice(0, 5);
  if (set.size === 5 && weekdays.every((d) => set.has(d))) return "Every weekday";
  if (set.size === 2 && set.has("sat") && set.has("sun")) return "Every Saturday and Sunday";
  return `Every ${list(SCHEDULE_WEEKDAYS.filter((d) => set.has(d)).map((d) => DAY_NAMES[d]))}`;
}

/** When a schedule runs, in words, with its time zone. */
export function cadenceInWords(s: ScheduleCadence): string {
  const at = `at ${s.time} (${s.timeZone})`;
  switch (s.kind) {
    case "daily":
      return `Every day ${at}`;
    case "weekly":
      return `${daysInWords(s.days)} ${at}`;
    case "monthly":
      return `Monthly on the ${s.day === "last" ? "last day" : ordinal(s.day)} ${at}`;
  }
}

/** A figure as people read it: grouped thousands. */
function fmt(n: number): string {
  return n.toLocaleString("en-US", { maximumFractionDigits: 6 });
}

/** When an alert fires, in words ("when orders falls by 20 % or more"). */
export function alertInWords(a: ScheduleAlert): string {
  switch (a.kind) {
    case "threshold": {
      const which = a.row === "all" ? " in every row" : a.row === "first" ? " in the first row" : "";
      return `when ${a.column} ${OP_WORDS[a.op] ?? a.op} ${fmt(a.value)}${which}`;
    }
    case "change": {
      const verb = a.direction === "down" ? "falls" : a.direction === "up" ? "rises" : "changes";
      return `when ${a.column} ${verb} by ${fmt(a.percent)} % or more since the last run`;
    }
    case "rows":
      return a.when === "any" ? "when the query returns any row" : "when the query returns no row";
  }
}

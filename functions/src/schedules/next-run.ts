/**
 * When a schedule fires next, computed by cron-parser (which uses luxon) in the schedule's time
 * zone. Kept apart from `cadence.ts` so validating a request does not load either library.
 */
import { CronExpressionParser } from "cron-parser";
import { IANAZone } from "luxon";
import { toCron, type Schedule } from "./cadence";

/**
 * The first fire strictly after `after`, in the schedule's time zone.
 *
 * Daylight saving, as cron-parser 5.10.6 does it and as the tests pin:
 * - a wall-clock time that does not exist (02:30 on a spring-forward day) fires once, an hour later
 *   (03:30 local, the same instant 02:30 would be in the old offset);
 * - a wall-clock time that happens twice (02:30 on an autumn day in Europe) fires once, at its first
 *   occurrence. cron-parser alone would also return the second occurrence when `after` falls between
 *   the two (a late tick), so that one is skipped here: a wall-clock time fires once a day.
 */
export function nextRunAt(schedule: Schedule, after: Date): Date {
  const times = CronExpressionParser.parse(toCron(schedule), {
    tz: schedule.timeZone,
    currentDate: after,
  });
  // At most one candidate is skipped (the second pass of a repeated hour), so two suffice.
  const first = times.next().toDate();
  const earlier = earlierSameWallTime(first, schedule.timeZone);
  if (earlier !== undefined && earlier <= after.getTime()) return times.next().toDate();
  return first;
}

/**
 * The earlier instant with the same local wall-clock time as `at`, when `at` is in the second pass
 * of a repeated hour (clocks went back within the last three hours); otherwise undefined.
 */
function earlierSameWallTime(at: Date, zoneName: string): number | undefined {
  const zone = IANAZone.create(zoneName);
  const ms = at.getTime();
  const offsetAt = zone.offset(ms);
  const offsetBefore = zone.offset(ms - 3 * 3_600_000);
  if (offsetBefore <= offsetAt) return undefined;
  const earlier = ms - (offsetBefore - offsetAt) * 60_000;
  // Same wall time when the earlier instant is still on the old (larger) offset.
  return zone.offset(earlier) === offsetBefore ? earlier : undefined;
}

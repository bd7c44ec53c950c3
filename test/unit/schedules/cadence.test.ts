import { describe, expect, it } from "vitest";
import { QuarryError } from "../../../functions/src/errors";
import {
  MIN_INTERVAL_MINUTES,
  minIntervalMessage,
  minIntervalOk,
  toCron,
  validateSchedule,
  type Schedule,
} from "../../../functions/src/schedules/cadence";
import { nextRunAt } from "../../../functions/src/schedules/next-run";

const daily = (time: string, timeZone: string): Schedule => ({ kind: "daily", time, timeZone });

/** The next `n` fires, each computed from the previous one (as the tick advances a schedule). */
function fires(schedule: Schedule, after: string, n: number): string[] {
  const out: string[] = [];
  let at = new Date(after);
  for (let i = 0; i < n; i++) {
    at = nextRunAt(schedule, at);
    out.push(at.toISOString());
  }
  return out;
}

function problem(input: unknown): string {
  try {
    validateSchedule(input);
  } catch (err) {
    expect(err).toBeInstanceOf(QuarryError);
    expect((err as QuarryError).code).toBe("bad_request:body");
    expect((err as QuarryError).status).toBe(400);
    return (err as QuarryError).message;
  }
  throw new Error(`accepted ${JSON.stringify(input)}`);
}

describe("toCron", () => {
  it("writes minute hour day-of-month month day-of-week for each cadence", () => {
    expect(toCron(daily("09:00", "UTC"))).toBe("0 9 * * *");
    expect(toCron(daily("00:05", "UTC"))).toBe("5 0 * * *");
    expect(toCron({ kind: "weekly", days: ["sun", "mon", "fri"], time: "17:30", timeZone: "UTC" })).toBe(
      "30 17 * * 0,1,5",
    );
    expect(toCron({ kind: "monthly", day: 15, time: "23:59", timeZone: "UTC" })).toBe("59 23 15 * *");
    expect(toCron({ kind: "monthly", day: "last", time: "08:00", timeZone: "UTC" })).toBe("0 8 L * *");
  });
});

describe("nextRunAt", () => {
  it("is strictly after the given instant", () => {
    const s = daily("09:00", "UTC");
    expect(nextRunAt(s, new Date("2026-03-05T09:00:00.000Z")).toISOString()).toBe("2026-03-06T09:00:00.000Z");
    expect(nextRunAt(s, new Date("2026-03-05T08:59:59.500Z")).toISOString()).toBe("2026-03-05T09:00:00.000Z");
    expect(nextRunAt(s, new Date("2026-03-05T09:00:00.001Z")).toISOString()).toBe("2026-03-06T09:00:00.000Z");
  });

  it("keeps a daily 09:00 at 09:00 local across both Berlin changes of 2026", () => {
    const s = daily("09:00", "Europe/Berlin");
    // 29 March: CET (+1) → CEST (+2); 25 October: back to CET.
    expect(fires(s, "2026-03-27T12:00:00Z", 3)).toEqual([
      "2026-03-28T08:00:00.000Z",
      "2026-03-29T07:00:00.000Z",
      "2026-03-30T07:00:00.000Z",
    ]);
    expect(fires(s, "2026-10-23T12:00:00Z", 3)).toEqual([
      "2026-10-24T07:00:00.000Z",
      "2026-10-25T08:00:00.000Z",
      "2026-10-26T08:00:00.000Z",
    ]);
  });

  it("keeps a daily 09:00 at 09:00 local across both New York changes of 2026", () => {
    const s = daily("09:00", "America/New_York");
    expect(fires(s, "2026-03-06T20:00:00Z", 3)).toEqual([
      "2026-03-07T14:00:00.000Z",
      "2026-03-08T13:00:00.000Z",
      "2026-03-09T13:00:00.000Z",
    ]);
    expect(fires(s, "2026-10-30T20:00:00Z", 3)).toEqual([
      "2026-10-31T13:00:00.000Z",
      "2026-11-01T14:00:00.000Z",
      "2026-11-02T14:00:00.000Z",
    ]);
  });

  it("fires a time skipped by spring-forward once, an hour later (03:30 local)", () => {
    expect(fires(daily("02:30", "Europe/Berlin"), "2026-03-28T12:00:00Z", 2)).toEqual([
      "2026-03-29T01:30:00.000Z", // 03:30 CEST
      "2026-03-30T00:30:00.000Z", // 02:30 CEST
    ]);
    expect(fires(daily("02:30", "America/New_York"), "2026-03-07T12:00:00Z", 2)).toEqual([
      "2026-03-08T07:30:00.000Z", // 03:30 EDT
      "2026-03-09T06:30:00.000Z",
    ]);
  });

  it("fires a time repeated by the autumn change once, at its first occurrence", () => {
    expect(fires(daily("02:30", "Europe/Berlin"), "2026-10-24T12:00:00Z", 2)).toEqual([
      "2026-10-25T00:30:00.000Z", // 02:30 CEST, the first pass
      "2026-10-26T01:30:00.000Z", // 02:30 CET the next day, not 02:30 CET on the 25th
    ]);
    expect(fires(daily("01:30", "America/New_York"), "2026-10-31T12:00:00Z", 2)).toEqual([
      "2026-11-01T05:30:00.000Z", // 01:30 EDT
      "2026-11-02T06:30:00.000Z",
    ]);
  });

  it("does not fire the second pass of a repeated hour when a late tick asks from inside it", () => {
    // 01:15Z on 25 October is 02:15 CET, after the first 02:30 (00:30Z) already passed.
    const late = nextRunAt(daily("02:30", "Europe/Berlin"), new Date("2026-10-25T01:15:00Z"));
    expect(late.toISOString()).toBe("2026-10-26T01:30:00.000Z");
    const ny = nextRunAt(daily("01:30", "America/New_York"), new Date("2026-11-01T06:10:00Z"));
    expect(ny.toISOString()).toBe("2026-11-02T06:30:00.000Z");
    // Between midnight and the first pass, the first pass is next.
    const early = nextRunAt(daily("02:30", "Europe/Berlin"), new Date("2026-10-24T23:00:00Z"));
    expect(early.toISOString()).toBe("2026-10-25T00:30:00.000Z");
  });

  it("runs weekly on the chosen days in the person's zone", () => {
    const s: Schedule = { kind: "weekly", days: ["wed", "mon"], time: "09:00", timeZone: "America/New_York" };
    // Thursday 5 March 2026 → Monday 9 March (EDT since the 8th), Wednesday 11, Monday 16.
    expect(fires(s, "2026-03-05T20:00:00Z", 3)).toEqual([
      "2026-03-09T13:00:00.000Z",
      "2026-03-11T13:00:00.000Z",
      "2026-03-16T13:00:00.000Z",
    ]);
    const sunday: Schedule = { kind: "weekly", days: ["sun"], time: "09:00", timeZone: "Europe/Berlin" };
    expect(fires(sunday, "2026-03-20T00:00:00Z", 2)).toEqual([
      "2026-03-22T08:00:00.000Z",
      "2026-03-29T07:00:00.000Z", // the change's own Sunday
    ]);
    expect(fires({ ...sunday, timeZone: "UTC" }, "2026-03-20T00:00:00Z", 1)).toEqual([
      "2026-03-22T09:00:00.000Z",
    ]);
  });

  it('runs monthly on a day, and on "last" at the end of February in common and leap years', () => {
    const last: Schedule = { kind: "monthly", day: "last", time: "09:00", timeZone: "UTC" };
    expect(fires(last, "2026-01-31T12:00:00Z", 3)).toEqual([
      "2026-02-28T09:00:00.000Z",
      "2026-03-31T09:00:00.000Z",
      "2026-04-30T09:00:00.000Z",
    ]);
    expect(fires(last, "2028-02-01T00:00:00Z", 1)).toEqual(["2028-02-29T09:00:00.000Z"]);
    // 23:30 on 29 February 2028 in New York is already 1 March in UTC.
    expect(
      fires({ ...last, time: "23:30", timeZone: "America/New_York" }, "2028-02-15T00:00:00Z", 1),
    ).toEqual(["2028-03-01T04:30:00.000Z"]);
    const fifteenth: Schedule = { kind: "monthly", day: 15, time: "09:00", timeZone: "Europe/Berlin" };
    expect(fires(fifteenth, "2026-03-01T00:00:00Z", 2)).toEqual([
      "2026-03-15T08:00:00.000Z",
      "2026-04-15T07:00:00.000Z",
    ]);
  });
});

describe("validateSchedule", () => {
  it("accepts each cadence", () => {
    expect(validateSchedule({ kind: "daily", time: "09:00", timeZone: "Europe/Berlin" })).toEqual({
      kind: "daily",
      time: "09:00",
      timeZone: "Europe/Berlin",
    });
    expect(validateSchedule({ kind: "weekly", days: ["mon"], time: "23:59", timeZone: "UTC" }).kind).toBe(
      "weekly",
    );
    expect(validateSchedule({ kind: "monthly", day: "last", time: "00:00", timeZone: "UTC" }).kind).toBe(
      "monthly",
    );
  });

  it("names the field to fix", () => {
    expect(problem({ kind: "hourly", time: "09:00", timeZone: "UTC" })).toMatch(
      /kind: kind must be daily, weekly or monthly \(got "hourly"\)/,
    );
    expect(problem({ time: "09:00", timeZone: "UTC" })).toMatch(
      /kind must be daily, weekly or monthly \(it is missing\)/,
    );
    expect(problem("0 9 * * *")).toMatch(/schedule must be an object with kind/);
    expect(problem({ kind: "daily", time: "9am", timeZone: "UTC" })).toMatch(/time: time must be HH:MM/);
    expect(problem({ kind: "daily", time: "24:00", timeZone: "UTC" })).toMatch(/time: time must be HH:MM/);
    expect(problem({ kind: "daily", time: "09:00", timeZone: "Mars/Olympus" })).toMatch(
      /timeZone: timeZone is not a known IANA time zone/,
    );
    expect(problem({ kind: "daily", time: "09:00", timeZone: "+02:00" })).toMatch(/timeZone: /);
    expect(problem({ kind: "weekly", days: [], time: "09:00", timeZone: "UTC" })).toMatch(
      /days: days must name at least one/,
    );
    expect(problem({ kind: "weekly", days: ["monday"], time: "09:00", timeZone: "UTC" })).toMatch(
      /days\.0: each day must be one of mon, tue/,
    );
    expect(problem({ kind: "weekly", days: ["mon", "mon"], time: "09:00", timeZone: "UTC" })).toMatch(
      /days: days lists a weekday twice/,
    );
    expect(problem({ kind: "monthly", day: 31, time: "09:00", timeZone: "UTC" })).toMatch(
      /day: day must be a day of the month from 1 to 28, or "last"/,
    );
    expect(problem({ kind: "monthly", day: 0, time: "09:00", timeZone: "UTC" })).toMatch(
      /day: day must be a day/,
    );
    expect(problem({ kind: "monthly", day: 2.5, time: "09:00", timeZone: "UTC" })).toMatch(
      /day: day must be a day/,
    );
    expect(problem({ kind: "monthly", day: "first", time: "09:00", timeZone: "UTC" })).toMatch(
      /day: day must be a day/,
    );
    expect(problem({ kind: "daily", time: "09:00", timeZone: "UTC", cron: "* * * * *" })).toMatch(
      /unknown field\(s\) "cron"/,
    );
  });
});

describe("minimum interval", () => {
  it("holds for every structured cadence at the built-in day", () => {
    expect(MIN_INTERVAL_MINUTES).toBe(1440);
    expect(minIntervalOk(daily("09:00", "UTC"))).toBe(true);
    expect(minIntervalOk({ kind: "weekly", days: ["mon", "tue"], time: "09:00", timeZone: "UTC" })).toBe(
      true,
    );
  });

  it("refuses what runs more often than a longer deployment minimum, counting the week's wrap", () => {
    const week = 7 * 1440;
    expect(minIntervalOk(daily("09:00", "UTC"), week)).toBe(false);
    expect(minIntervalOk({ kind: "weekly", days: ["mon"], time: "09:00", timeZone: "UTC" }, week)).toBe(true);
    // Saturday and Monday are two days apart across the weekend.
    const satMon: Schedule = { kind: "weekly", days: ["mon", "sat"], time: "09:00", timeZone: "UTC" };
    expect(minIntervalOk(satMon, 2 * 1440)).toBe(true);
    expect(minIntervalOk(satMon, 3 * 1440)).toBe(false);
    expect(minIntervalOk({ kind: "monthly", day: "last", time: "09:00", timeZone: "UTC" }, week)).toBe(true);
    expect(minIntervalMessage(week)).toMatch(/at most once every 7 days/);
  });
});

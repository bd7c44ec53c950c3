/**
 * The page's schedules, pure parts: cadences and alerts in words, the "Schedule…" dialog's form
 * turned into a `POST /schedules` body (checked against the server's own strict schema, so a body
 * the page builds is one the API takes), the form's checks, which answer can be scheduled, the
 * bell's unread count, and the schedule error codes shown in the server's words.
 */
import { describe, expect, it } from "vitest";
import type { ScheduleCadence, ScheduleView } from "../../functions/src/contract";
import { scheduleBodies } from "../../functions/src/schedules/schema";
import { alertInWords, cadenceInWords, ordinal } from "../../web/src/schedules/words";
import {
  defaultForm,
  formOfSchedule,
  formProblems,
  parseNumber,
  scheduleBody,
  scheduleChanges,
  sourceOfSchedule,
  type ScheduleForm,
  type ScheduleSource,
} from "../../web/src/schedules/form";
import { canSchedule, scheduleSourceOf } from "../../web/src/schedules/source";
import {
  MAX_NOTIFICATIONS,
  plainLine,
  unreadCount,
  unreadLabel,
} from "../../web/src/schedules/notifications";
import { errorInWords } from "../../web/src/data/format";
import type { Turn } from "../../web/src/chat/model";

const THREAD = "3f2b8c1e-9a4d-4c5e-8f6a-1b2c3d4e5f60";
const SOURCE: ScheduleSource = {
  threadId: THREAD,
  question: "How many orders were placed?",
  sql: "SELECT COUNT(*) AS orders FROM shop.orders",
  columns: ["orders"],
};

const form = (patch: Partial<ScheduleForm> = {}): ScheduleForm => ({
  ...defaultForm(SOURCE, "Europe/Berlin"),
  ...patch,
});

/** What the API's strict schema makes of a body: the parsed body, or its messages. */
function serverSays(body: unknown) {
  const parsed = scheduleBodies().create.safeParse(body);
  return parsed.success
    ? { ok: true as const, body: parsed.data }
    : { ok: false as const, issues: parsed.error.issues };
}

describe("cadence in words", () => {
  const at = { time: "09:00", timeZone: "Europe/Berlin" };
  it.each<[ScheduleCadence, string]>([
    [{ kind: "daily", ...at }, "Every day at 09:00 (Europe/Berlin)"],
    [{ kind: "weekly", days: ["fri", "mon"], ...at }, "Every Monday and Friday at 09:00 (Europe/Berlin)"],
    [
      { kind: "weekly", days: ["wed", "mon", "fri"], ...at },
      "Every Monday, Wednesday and Friday at 09:00 (Europe/Berlin)",
    ],
    [
      { kind: "weekly", days: ["mon", "tue", "wed", "thu", "fri"], ...at },
      "Every weekday at 09:00 (Europe/Berlin)",
    ],
    [
      { kind: "weekly", days: ["sun", "sat", "fri", "thu", "wed", "tue", "mon"], ...at },
      "Every day at 09:00 (Europe/Berlin)",
    ],
    [{ kind: "weekly", days: ["sun"], ...at }, "Every Sunday at 09:00 (Europe/Berlin)"],
    [{ kind: "monthly", day: 1, ...at }, "Monthly on the 1st at 09:00 (Europe/Berlin)"],
    [{ kind: "monthly", day: 22, time: "17:30", timeZone: "UTC" }, "Monthly on the 22nd at 17:30 (UTC)"],
    [{ kind: "monthly", day: "last", ...at }, "Monthly on the last day at 09:00 (Europe/Berlin)"],
  ])("%j → %s", (cadence, words) => {
    expect(cadenceInWords(cadence)).toBe(words);
  });

  it("writes ordinals, 11th–13th included", () => {
    expect([1, 2, 3, 4, 11, 12, 13, 21, 23, 28].map(ordinal)).toEqual([
      "1st",
      "2nd",
      "3rd",
      "4th",
      "11th",
      "12th",
      "13th",
      "21st",
      "23rd",
      "28th",
    ]);
  });

  it("says when an alert fires", () => {
    expect(alertInWords({ kind: "change", column: "revenue", direction: "down", percent: 20 })).toBe(
      "when revenue falls by 20 % or more since the last run",
    );
    expect(alertInWords({ kind: "threshold", column: "orders", op: ">=", value: 1500 })).toBe(
      "when orders is at or above 1,500",
    );
    expect(alertInWords({ kind: "rows", when: "none" })).toBe("when the query returns no row");
  });
});

describe("the dialog's body", () => {
  it("opens with the question as the name, daily at 09:00 in the browser's zone, no alert", () => {
    const f = defaultForm({ ...SOURCE, question: "x".repeat(150) }, "America/New_York");
    expect(f).toMatchObject({ cadence: "daily", time: "09:00", timeZone: "America/New_York", alert: "none" });
    expect(f.name).toHaveLength(100);
  });

  it("builds a daily schedule without alert or webhook, which the API takes", () => {
    const body = scheduleBody(form(), SOURCE);
    expect(body).toEqual({
      threadId: THREAD,
      question: SOURCE.question,
      sql: SOURCE.sql,
      schedule: { kind: "daily", time: "09:00", timeZone: "Europe/Berlin" },
      name: SOURCE.question,
    });
    expect(serverSays(body).ok).toBe(true);
  });

  it("builds weekly days, monthly days and each alert kind as the API's schema reads them", () => {
    const cases: [Partial<ScheduleForm>, object][] = [
      [
        {
          cadence: "weekly",
          days: ["mon", "thu"],
          alert: "change",
          column: "orders",
          direction: "down",
          percent: "20",
        },
        {
          schedule: { kind: "weekly", days: ["mon", "thu"], time: "09:00", timeZone: "Europe/Berlin" },
          alert: { kind: "change", column: "orders", direction: "down", percent: 20 },
        },
      ],
      [
        { cadence: "monthly", monthDay: "last", alert: "threshold", op: "<", value: "1,250.5" },
        {
          schedule: { kind: "monthly", day: "last", time: "09:00", timeZone: "Europe/Berlin" },
          alert: { kind: "threshold", column: "orders", op: "<", value: 1250.5, row: "any" },
        },
      ],
      [
        { alert: "threshold", op: ">=", value: "10", row: "all" },
        { alert: { kind: "threshold", column: "orders", op: ">=", value: 10, row: "all" } },
      ],
      [
        { cadence: "monthly", monthDay: "15", alert: "rows-any" },
        { schedule: { kind: "monthly", day: 15 }, alert: { kind: "rows", when: "any" } },
      ],
      [
        { alert: "rows-none", webhook: " https://chat.googleapis.com/v1/spaces/x/messages?key=k " },
        {
          alert: { kind: "rows", when: "none" },
          webhook: "https://chat.googleapis.com/v1/spaces/x/messages?key=k",
        },
      ],
    ];
    for (const [patch, expected] of cases) {
      const f = form(patch);
      expect(formProblems(f, SOURCE.columns), JSON.stringify(patch)).toEqual([]);
      const body = scheduleBody(f, SOURCE);
      expect(body).toMatchObject(expected);
      const server = serverSays(body);
      expect(server.ok, JSON.stringify(server)).toBe(true);
    }
  });

  it("leaves out an empty name, so the API names the schedule after the question", () => {
    expect(scheduleBody(form({ name: "  " }), SOURCE)).not.toHaveProperty("name");
  });
});

describe("changing a saved schedule", () => {
  const view = (patch: Partial<ScheduleView>): ScheduleView => ({
    id: "s1",
    owner: "u1",
    ownerEmail: "a@example.com",
    name: "Orders",
    question: SOURCE.question,
    sql: SOURCE.sql,
    threadId: THREAD,
    scheduleThreadId: THREAD,
    schedule: { kind: "daily", time: "09:00", timeZone: "Europe/Berlin" },
    cron: "0 9 * * *",
    timeZone: "Europe/Berlin",
    alert: null,
    webhook: null,
    room: null,
    paused: false,
    pausedReason: null,
    pausedByAdmin: false,
    nextRunAt: null,
    lastRun: null,
    failures: 0,
    deliveryError: null,
    createdAt: null,
    updatedAt: null,
    ...patch,
  });
  const patchSays = (body: unknown) => scheduleBodies().patch.safeParse(body);

  it("opens the dialog with what is saved, and unchanged sends the same schedule back", () => {
    const saved: [Partial<ScheduleView>, Partial<ScheduleForm>][] = [
      [
        {
          schedule: { kind: "weekly", days: ["mon", "thu"], time: "07:30", timeZone: "Asia/Tokyo" },
          alert: { kind: "threshold", column: "orders", op: "<", value: 1250.5, row: "all" },
          webhook: "https://chat.googleapis.com/v1/spaces/x/messages?key=k",
          room: "slack:T0123:C0456",
        },
        {
          cadence: "weekly",
          days: ["mon", "thu"],
          time: "07:30",
          timeZone: "Asia/Tokyo",
          alert: "threshold",
          value: "1250.5",
          row: "all",
        },
      ],
      [
        {
          schedule: { kind: "monthly", day: "last", time: "18:00", timeZone: "UTC" },
          alert: { kind: "change", column: "revenue", direction: "either", percent: 5 },
        },
        {
          cadence: "monthly",
          monthDay: "last",
          alert: "change",
          column: "revenue",
          direction: "either",
          percent: "5",
        },
      ],
      [{ alert: { kind: "rows", when: "none" } }, { alert: "rows-none", webhook: "" }],
    ];
    for (const [patch, expected] of saved) {
      const v = view(patch);
      const f = formOfSchedule(v);
      expect(f).toMatchObject({ name: "Orders", ...expected });
      expect(formProblems(f, sourceOfSchedule(v).columns)).toEqual([]);
      const body = scheduleChanges(f);
      expect(body).toEqual({
        name: "Orders",
        schedule: v.schedule,
        alert: v.alert,
        webhook: v.webhook,
        room: v.room,
      });
      expect(patchSays(body).success, JSON.stringify(patchSays(body))).toBe(true);
    }
  });

  it("removes an alert and a webhook the form no longer has, and takes a typed column", () => {
    const v = view({
      alert: { kind: "rows", when: "any" },
      webhook: "https://hooks.slack.com/services/x",
    });
    const cleared = scheduleChanges({ ...formOfSchedule(v), alert: "none", webhook: " ", room: "" });
    expect(cleared).toMatchObject({ alert: null, webhook: null, room: null });
    expect(patchSays(cleared).success).toBe(true);
    const typed = { ...formOfSchedule(v), alert: "change" as const, column: "revenue", percent: "10" };
    expect(formProblems(typed, sourceOfSchedule(v).columns)).toEqual([]);
    expect(scheduleChanges(typed).alert).toEqual({
      kind: "change",
      column: "revenue",
      direction: "down",
      percent: 10,
    });
    expect(formProblems({ ...typed, column: "" }, []).map((p) => p.field)).toEqual(["column"]);
  });
});

describe("the dialog's checks", () => {
  const fields = (patch: Partial<ScheduleForm>) =>
    formProblems(form(patch), SOURCE.columns).map((p) => p.field);

  it("refuses a threshold that is not a number, and names the field", () => {
    const problems = formProblems(form({ alert: "threshold", value: "lots" }), SOURCE.columns);
    expect(problems).toEqual([{ field: "value", message: expect.stringMatching(/must be a number/) }]);
    expect(fields({ alert: "threshold", value: "" })).toEqual(["value"]);
    expect(fields({ alert: "threshold", value: "1e3" })).toEqual([]);
  });

  it("refuses a change of 0 % or less, or not a number", () => {
    expect(fields({ alert: "change", percent: "0" })).toEqual(["percent"]);
    expect(fields({ alert: "change", percent: "-5" })).toEqual(["percent"]);
    expect(fields({ alert: "change", percent: "ten" })).toEqual(["percent"]);
    expect(fields({ alert: "change", percent: "12.5" })).toEqual([]);
  });

  it("refuses a column the answer does not have, but a rows alert needs none", () => {
    expect(fields({ alert: "change", column: "revenue" })).toEqual(["column"]);
    expect(fields({ alert: "threshold", column: "", value: "1" })).toEqual(["column"]);
    expect(fields({ alert: "rows-any", column: "revenue" })).toEqual([]);
  });

  it("needs a weekday for weekly, a 24-hour time and a time zone", () => {
    expect(fields({ cadence: "weekly", days: [] })).toEqual(["days"]);
    expect(fields({ time: "9am" })).toEqual(["time"]);
    expect(fields({ time: "24:00" })).toEqual(["time"]);
    expect(fields({ timeZone: " " })).toEqual(["timeZone"]);
  });

  it("reads numbers as people type them", () => {
    expect(["1,000", " 20 ", "-3.5", ".5", "1_000"].map(parseNumber)).toEqual([1000, 20, -3.5, 0.5, 1000]);
    expect(["", "abc", "1.2.3", "Infinity", "NaN"].map(parseNumber)).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });
});

describe("which answer can be scheduled", () => {
  const turn = (patch: Partial<Turn>): Turn => ({
    key: "q1",
    question: "How many orders were placed?",
    answer: "There were 1,500 orders.",
    queries: [],
    retries: [],
    status: "done",
    ...patch,
  });
  const result = (column: string) => ({
    columns: [{ name: column, type: "BIGINT" }],
    rows: [{ [column]: 1 }],
    totalRows: 1,
    truncated: false,
    bytesProcessed: 0,
    bytesBilled: 0,
    cacheHit: false,
  });

  it("offers the SQL of the last query that answered, with its columns", () => {
    const t = turn({
      queries: [
        {
          id: "a",
          tool: "bq_query",
          sql: "SELECT bad",
          status: "failed",
          error: { category: "x", message: "no" },
        },
        {
          id: "b",
          tool: "bq_query",
          sql: "SELECT COUNT(*) AS orders FROM shop.orders",
          status: "done",
          result: result("orders"),
        },
      ],
    });
    expect(canSchedule(t)).toBe(true);
    expect(scheduleSourceOf(t, THREAD)).toEqual({
      threadId: THREAD,
      question: "How many orders were placed?",
      sql: "SELECT COUNT(*) AS orders FROM shop.orders",
      columns: ["orders"],
    });
  });

  it("offers nothing for an answer without SQL, with failed queries only, or still streaming", () => {
    const failed = { id: "a", tool: "bq_query", sql: "SELECT 1", status: "failed" as const };
    expect(canSchedule(turn({}))).toBe(false);
    expect(canSchedule(turn({ queries: [failed] }))).toBe(false);
    const ok = { id: "b", tool: "bq_query", sql: "SELECT 1", status: "done" as const, result: result("x") };
    expect(canSchedule(turn({ queries: [ok], status: "streaming" }))).toBe(false);
    expect(scheduleSourceOf(turn({ queries: [failed] }), THREAD)).toBeUndefined();
  });
});

describe("the bell", () => {
  it("lists an answer's first line without its Markdown marks", () => {
    expect(
      plainLine("Here is what I found (1 rows) with `SELECT COUNT(*) AS n_orders FROM shop.orders`."),
    ).toBe("Here is what I found (1 rows) with SELECT COUNT(*) AS n_orders FROM shop.orders.");
    expect(plainLine("**Revenue** fell, see [the docs](https://example.com)")).toBe(
      "Revenue fell, see the docs",
    );
  });

  it("counts the unread ones", () => {
    expect(unreadCount([])).toBe(0);
    expect(unreadCount([{ read: false }, { read: true }, { read: false }])).toBe(2);
  });

  it("shows nothing at 0, the count, or 20+ when every listed one is unread", () => {
    expect(unreadLabel(0, 5)).toBe("");
    expect(unreadLabel(3, 5)).toBe("3");
    expect(unreadLabel(MAX_NOTIFICATIONS, MAX_NOTIFICATIONS)).toBe(`${MAX_NOTIFICATIONS}+`);
    expect(unreadLabel(19, MAX_NOTIFICATIONS)).toBe("19");
  });
});

describe("schedule errors in words", () => {
  const http = (status: number, error: string, message: string) =>
    Object.assign(new Error(`HTTP ${status}: ${JSON.stringify({ error, message })}`), { status });

  it.each([
    [404, "not_found:schedule", "Schedule 1f0e… not found."],
    [
      409,
      "conflict:schedule",
      "You already have 20 schedules, the most allowed (QUARRY_MAX_SCHEDULES = 20): delete one you no longer need first.",
    ],
    [
      400,
      "bad_request:schedule",
      "sql: the saved SQL does not run as you: no such column. Save the SQL of an answer you got.",
    ],
    [
      400,
      "bad_request:body",
      "Invalid body: webhook must use https:// (a Google Chat or Slack incoming-webhook URL)",
    ],
  ])("%i %s is shown as the server wrote it", (status, code, message) => {
    expect(errorInWords(http(status, code, message))).toBe(message);
  });

  it("keeps a conversation's 404 in the conversation's words", () => {
    expect(errorInWords(http(404, "not_found:thread", "Thread t not found."))).toMatch(
      /conversation no longer exists/,
    );
  });
});

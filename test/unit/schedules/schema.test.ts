import { describe, expect, it } from "vitest";
import { QuarryError } from "../../../functions/src/errors";
import { parse } from "../../../functions/src/runs/schemas";
import { privateAddress, scheduleBodies } from "../../../functions/src/schedules/schema";

const production = scheduleBodies();
const tests = scheduleBodies({ allowLoopbackWebhook: true });

const body = {
  threadId: "6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b",
  question: "Revenue last week against the week before?",
  sql: "SELECT SUM(revenue) AS revenue FROM shop.orders",
  schedule: { kind: "weekly", days: ["mon"], time: "09:00", timeZone: "Europe/Berlin" },
  alert: { kind: "change", column: "revenue", direction: "down", percent: 20 },
  webhook: "https://chat.googleapis.com/v1/spaces/AAA/messages?key=k&token=t",
  name: "Weekly revenue",
};

function refusal(schema: Parameters<typeof parse>[0], value: unknown): string {
  try {
    parse(schema, value, "body");
  } catch (err) {
    expect(err).toBeInstanceOf(QuarryError);
    expect((err as QuarryError).status).toBe(400);
    return (err as QuarryError).message;
  }
  throw new Error(`accepted ${JSON.stringify(value)}`);
}

describe("POST /schedules body", () => {
  it("parses a valid body", () => {
    expect(parse(production.create, body, "body")).toEqual(body);
    const { alert: _a, webhook: _w, name: _n, ...bare } = body;
    expect(parse(production.create, bare, "body")).toEqual(bare);
  });

  it("refuses a webhook that is not https, naming the field", () => {
    expect(refusal(production.create, { ...body, webhook: "http://hooks.slack.com/services/x" })).toMatch(
      /webhook: webhook must use https:\/\//,
    );
    expect(refusal(production.create, { ...body, webhook: "hooks.slack.com/x" })).toMatch(
      /webhook: webhook must be a full URL/,
    );
    expect(refusal(production.create, { ...body, webhook: "https://u:p@hooks.slack.com/x" })).toMatch(
      /user name or password/,
    );
    expect(refusal(production.create, { ...body, webhook: "https://169.254.169.254/x" })).toMatch(
      /public host/,
    );
    expect(refusal(production.create, { ...body, webhook: "https://localhost/x" })).toMatch(/public host/);
    expect(refusal(production.create, { ...body, webhook: "https://[::1]/x" })).toMatch(/public host/);
  });

  it("refuses every special-use address a webhook host may be or resolve to, and no public one", () => {
    const special = [
      "10.1.2.3",
      "100.64.0.1", // carrier-grade NAT
      "100.127.255.254",
      "127.0.0.1",
      "169.254.169.254",
      "172.31.0.1",
      "192.0.0.8",
      "192.0.2.1",
      "192.168.1.1",
      "198.18.0.1",
      "198.51.100.7",
      "203.0.113.9",
      "224.0.0.1",
      "240.0.0.1",
      "255.255.255.255",
      "0.0.0.0",
      "::",
      "::1",
      "::ffff:10.0.0.1",
      "64:ff9b::a00:1", // NAT64 of 10.0.0.1
      "64:ff9b:1::a00:1",
      "2001:db8::1",
      "2002:a00:1::1", // 6to4 of 10.0.0.1
      "2001:0:4136:e378:8000:63bf:3fff:fdd2", // Teredo
      "fc00::1",
      "fd12:3456::1",
      "fe80::1",
      "ff02::1",
    ];
    for (const a of special) expect(privateAddress(a), a).toBe(true);
    for (const a of ["8.8.8.8", "100.128.0.1", "142.250.74.46", "2607:f8b0:4004:c07::64", "2600::1"])
      expect(privateAddress(a), a).toBe(false);
    expect(privateAddress("hooks.slack.com")).toBe(false);
    expect(refusal(production.create, { ...body, webhook: "https://[64:ff9b::a00:1]/x" })).toMatch(
      /public host/,
    );
    expect(refusal(production.create, { ...body, webhook: "https://100.64.1.1/x" })).toMatch(/public host/);
  });

  it("allows an http loopback webhook only with the option", () => {
    const loopback = { ...body, webhook: "http://127.0.0.1:43111/hook" };
    expect(refusal(production.create, loopback)).toMatch(/webhook: webhook must use https:\/\//);
    expect(parse(tests.create, loopback, "body").webhook).toBe("http://127.0.0.1:43111/hook");
    // The option opens loopback only, not plain http elsewhere.
    expect(refusal(tests.create, { ...body, webhook: "http://10.0.0.5/hook" })).toMatch(/must use https/);
  });

  it("says what to fix for a threshold that is not a number, an unknown cadence or time zone", () => {
    const threshold = { kind: "threshold", column: "revenue", op: "<", value: "lots" };
    expect(refusal(production.create, { ...body, alert: threshold })).toMatch(
      /alert\.value: value must be a number/,
    );
    expect(refusal(production.create, { ...body, schedule: { ...body.schedule, kind: "hourly" } })).toMatch(
      /schedule\.kind: kind must be daily, weekly or monthly/,
    );
    expect(
      refusal(production.create, { ...body, schedule: { ...body.schedule, timeZone: "Berlin" } }),
    ).toMatch(/schedule\.timeZone: timeZone is not a known IANA time zone/);
    expect(refusal(production.create, { ...body, threadId: "t1" })).toMatch(/threadId: must be a UUID/);
    expect(refusal(production.create, { ...body, sql: "  " })).toMatch(/sql: sql is empty/);
    expect(refusal(production.create, { ...body, cron: "* * * * *" })).toMatch(/unknown field\(s\) "cron"/);
  });
});

describe("PATCH /schedules/:id body", () => {
  it("takes any subset, pause, and null to remove an alert or webhook", () => {
    expect(parse(production.patch, { paused: true }, "body")).toEqual({ paused: true });
    expect(parse(production.patch, { alert: null, webhook: null }, "body")).toEqual({
      alert: null,
      webhook: null,
    });
    expect(
      parse(production.patch, { schedule: { kind: "daily", time: "07:00", timeZone: "UTC" } }, "body")
        .schedule?.kind,
    ).toBe("daily");
  });

  it("refuses an empty patch, a bad pause flag, a thread change and an http webhook", () => {
    expect(refusal(production.patch, {})).toMatch(/send at least one field to change/);
    expect(refusal(production.patch, { paused: "yes" })).toMatch(/paused: paused must be true or false/);
    expect(refusal(production.patch, { threadId: body.threadId })).toMatch(/unknown field\(s\) "threadId"/);
    expect(refusal(production.patch, { webhook: "http://127.0.0.1:1/x" })).toMatch(
      /webhook: webhook must use https/,
    );
    expect(parse(tests.patch, { webhook: "http://127.0.0.1:1/x" }, "body").webhook).toBe(
      "http://127.0.0.1:1/x",
    );
  });
});

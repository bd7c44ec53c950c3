/**
 * Scheduled questions (#33), the API: the schedules routes served from source in this process (on
 * the Firestore and Auth emulators and the DuckDB sample warehouse) — create, list, change, pause,
 * delete, bad input, another person, the limit, admins, members only, the person's scope.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Timestamp } from "@google-cloud/firestore";
import { signUp } from "../../support/auth-emulator";
import { call } from "../../support/api-client";
import { stackEnv } from "../../support/stack-env";
import {
  DAILY,
  SQL,
  create,
  mine,
  newThread,
  schedules,
  startScheduleFixture,
  type ScheduleFixture,
} from "../../support/schedules";

let f: ScheduleFixture;

beforeAll(async () => {
  f = await startScheduleFixture();
}, 120_000);

afterAll(async () => {
  await f?.close();
});

describe("the schedules API", () => {
  it("creates, lists, reads, pauses, resumes, renames and deletes a person's schedule", async () => {
    const made = await create(f.ann, { name: "Orders daily" });
    expect(made.status).toBe(201);
    const s = made.json as Record<string, unknown>;
    expect(s).toMatchObject({
      name: "Orders daily",
      sql: SQL,
      cron: "0 9 * * *",
      timeZone: "Europe/Berlin",
      paused: false,
    });
    // 09:00 on the wall clock in Berlin, in the future.
    const next = new Date(String(s.nextRunAt));
    expect(next.getTime()).toBeGreaterThan(Date.now());
    const berlin = new Intl.DateTimeFormat("en-GB", {
      timeZone: "Europe/Berlin",
      hour: "2-digit",
      minute: "2-digit",
    });
    expect(berlin.format(next)).toBe("09:00");
    const id = String(s.id);
    expect(await mine(f.ann)).toContain(id);
    expect((await call(f.api, `/schedules/${id}`, { token: f.ann.idToken })).json).toMatchObject({
      id,
      name: "Orders daily",
    });

    const paused = await call(f.api, `/schedules/${id}`, {
      method: "PATCH",
      token: f.ann.idToken,
      body: { paused: true, name: "Orders" },
    });
    expect(paused.json).toMatchObject({ paused: true, name: "Orders", pausedReason: "paused by its owner" });
    const resumed = await call(f.api, `/schedules/${id}`, {
      method: "PATCH",
      token: f.ann.idToken,
      body: { paused: false },
    });
    expect(resumed.json).toMatchObject({ paused: false, pausedReason: null });
    // The owner's own change is a save: it stamps ownerSavedAt (scheduled runs check revocation against it).
    const stamped = (await schedules().doc(id).get()).get("ownerSavedAt") as Timestamp;
    expect(stamped.toMillis()).toBeGreaterThanOrEqual(
      ((await schedules().doc(id).get()).get("createdAt") as Timestamp).toMillis(),
    );
    expect(stamped.isEqual((await schedules().doc(id).get()).get("updatedAt") as Timestamp)).toBe(true);

    expect((await call(f.api, `/schedules/${id}`, { method: "DELETE", token: f.ann.idToken })).status).toBe(
      204,
    );
    const gone = await call(f.api, `/schedules/${id}`, { token: f.ann.idToken });
    expect(gone.status).toBe(404);
    expect(gone.json.error).toBe("not_found:schedule");
  });

  it("refuses bad input with 400 naming the field, and stores nothing", async () => {
    const before = await mine(f.ann);
    const cases: [Record<string, unknown>, RegExp][] = [
      [
        { schedule: { kind: "hourly", time: "09:00", timeZone: "UTC" } },
        /kind must be daily, weekly or monthly/,
      ],
      [{ schedule: { kind: "daily", time: "09:00", timeZone: "Mars/Olympus" } }, /timeZone/],
      [{ schedule: { kind: "daily", time: "9am", timeZone: "UTC" } }, /time must be HH:MM/],
      [
        { alert: { kind: "threshold", column: "n_orders", op: ">", value: "lots" } },
        /value must be a number/,
      ],
      [{ webhook: "http://chat.example.com/hook" }, /webhook must use https/],
      [{ sql: "" }, /sql is empty/],
      [{ extra: 1 }, /extra/],
    ];
    for (const [over, why] of cases) {
      const res = await create(f.ann, over);
      expect(res.status, JSON.stringify(over)).toBe(400);
      expect(String(res.json.message)).toMatch(why);
    }
    // SQL that does not run (a column that does not exist): refused by the dry run.
    const broken = await create(f.ann, { sql: "SELECT no_such_column FROM shop.orders" });
    expect(broken.status).toBe(400);
    expect(broken.json.error).toBe("bad_request:schedule");
    expect(await mine(f.ann)).toEqual(before);
  });

  it("is for members only", async () => {
    const outsider = await signUp(stackEnv().urls.auth!, `outsider-${Date.now()}@elsewhere.test`);
    const res = await call(f.api, "/schedules", {
      method: "POST",
      token: outsider.idToken,
      body: { threadId: randomUUID(), question: "q", sql: SQL, schedule: DAILY },
    });
    expect(res.status).toBe(403);
    expect(res.json.error).toBe("forbidden:not_member");
    expect((await call(f.api, "/schedules", { token: outsider.idToken })).status).toBe(403);
  });

  it("answers 404 to another person on every route, and refuses their thread", async () => {
    const id = String((await create(f.ann)).json.id);
    const routes: [string, string, unknown?][] = [
      ["GET", `/schedules/${id}`],
      ["PATCH", `/schedules/${id}`, { paused: true }],
      ["DELETE", `/schedules/${id}`],
      ["POST", `/schedules/${id}/run`],
    ];
    for (const [method, path, body] of routes) {
      const res = await call(f.api, path, { method, token: f.bob.idToken, ...(body ? { body } : {}) });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.json.error).toBe("not_found:schedule");
    }
    expect(await mine(f.bob)).not.toContain(id);
    const annThread = await newThread(f.ann);
    const onHers = await call(f.api, "/schedules", {
      method: "POST",
      token: f.bob.idToken,
      body: { threadId: annThread, question: "q", sql: SQL, schedule: DAILY },
    });
    expect(onHers.status).toBe(404);
    expect((await schedules().doc(id).get()).get("paused")).toBe(false);
    await call(f.api, `/schedules/${id}`, { method: "DELETE", token: f.ann.idToken });
  });

  it("refuses a schedule over the person's limit (QUARRY_MAX_SCHEDULES)", async () => {
    const carol = await signUp(stackEnv().urls.auth!);
    for (let i = 0; i < 2; i++) expect((await create(carol)).status).toBe(201);
    // Two at once for the last place: one is created, the other refused (counted in a transaction).
    const both = await Promise.all([create(carol), create(carol)]);
    expect(both.map((r) => r.status).sort()).toEqual([201, 409]);
    const over = await create(carol);
    expect(over.status).toBe(409);
    expect(over.json.error).toBe("conflict:schedule");
    expect(await mine(carol)).toHaveLength(3);
  });

  it("lets admins list every schedule and pause one (only an admin resumes it); members may not", async () => {
    const hook = "https://chat.example.com/v1/spaces/room/messages?key=secret-key";
    const id = String((await create(f.bob, { webhook: hook })).json.id);
    const savedByOwner = (await schedules().doc(id).get()).get("ownerSavedAt") as Timestamp;
    expect(savedByOwner).toBeDefined();
    expect((await call(f.api, "/admin/schedules", { token: f.bob.idToken })).status).toBe(403);
    const all = (await call(f.api, "/admin/schedules", { token: f.admin.idToken })).json.schedules as {
      id: string;
    }[];
    expect(all.map((s) => s.id)).toContain(id);
    // The webhook URL is its room's credential: admins see its host only.
    expect(all.find((s) => s.id === id)).toMatchObject({ webhook: "https://chat.example.com/…" });
    expect(JSON.stringify(all)).not.toContain("secret-key");
    const paused = await call(f.api, `/admin/schedules/${id}`, {
      method: "PATCH",
      token: f.admin.idToken,
      body: { paused: true },
    });
    expect(paused.json).toMatchObject({ paused: true, pausedReason: "paused by an admin" });
    expect((await call(f.api, `/schedules/${id}`, { token: f.bob.idToken })).json).toMatchObject({
      paused: true,
      pausedByAdmin: true,
    });
    // Only an admin resumes it: its owner may neither resume it nor run it now.
    for (const [method, path, body] of [
      ["PATCH", `/schedules/${id}`, { paused: false }],
      ["POST", `/schedules/${id}/run`, undefined],
    ] as const) {
      const refused = await call(f.api, path, { method, token: f.bob.idToken, ...(body ? { body } : {}) });
      expect(refused.status, `${method} ${path}`).toBe(409);
      expect(refused.json.error).toBe("conflict:schedule");
    }
    const resumed = await call(f.api, `/admin/schedules/${id}`, {
      method: "PATCH",
      token: f.admin.idToken,
      body: { paused: false },
    });
    expect(resumed.json).toMatchObject({ paused: false, pausedByAdmin: false });
    // An admin's pause and resume are not the owner saving it (a revoked owner stays stopped).
    expect(((await schedules().doc(id).get()).get("ownerSavedAt") as Timestamp).isEqual(savedByOwner)).toBe(
      true,
    );
    expect(((await schedules().doc(id).get()).get("nextRunAt") as Timestamp).toMillis()).toBeGreaterThan(
      Date.now(),
    );
    const audit = await f.db.collection("audit").where("target", "==", id).get();
    expect(audit.docs.map((d) => d.get("action"))).toEqual(
      expect.arrayContaining(["schedule.pause", "schedule.resume"]),
    );
    await call(f.api, `/schedules/${id}`, { method: "DELETE", token: f.bob.idToken });
  });
});

// Last: groups make a member in none see nothing, so they exist only for this test.
describe("scope", () => {
  const GROUP = "sched-shop-only";

  afterAll(async () => {
    await f.db.collection("groups").doc(GROUP).delete();
  });

  it("refuses SQL outside the person's scope when the schedule is saved", async () => {
    const dave = await signUp(stackEnv().urls.auth!);
    const finance = "SELECT count(*) AS people FROM finance.salaries";
    // An admin sees everything: the same SQL is fine for them (the table exists here).
    expect((await create(f.admin, { sql: finance })).status).toBe(201);
    const now = new Date().toISOString();
    await f.db
      .collection("groups")
      .doc(GROUP)
      .set({ name: GROUP, datasets: ["shop"], createdBy: "test", createdAt: now, updatedAt: now });
    await f.db
      .collection("members")
      .doc(dave.email)
      .set({
        email: dave.email,
        role: "member",
        groups: [GROUP],
        addedBy: "test",
        addedAt: now,
        updatedAt: now,
      });
    // The function reads groups and members through a short cache: wait until it scopes dave.
    await expect
      .poll(async () =>
        (
          (await call(f.api, "/me", { token: dave.idToken })).json.scope as { datasets: string[] }
        )?.datasets?.join(),
      )
      .toBe("shop");
    const before = await mine(dave);
    const refused = await create(dave, { sql: finance });
    expect(refused.status).toBe(400);
    expect(refused.json.error).toBe("bad_request:schedule");
    expect(await mine(dave)).toEqual(before);
    expect((await create(dave)).status).toBe(201);
  });
});

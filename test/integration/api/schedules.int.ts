/**
 * Scheduled questions (#33) on the integration stack: the schedules API served from source in this
 * process (on the Firestore and Auth emulators, the DuckDB sample warehouse and the model
 * stand-in), the tick and the scheduled run called as the functions call them, a loopback webhook
 * receiver. The sample data does not change while the stack runs (DuckDB copies its file tables at
 * start-up), so the alert tests set the figure the previous run stored, as a previous run would.
 */
import { randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Firestore, Timestamp } from "@google-cloud/firestore";
import { signUp, type TestUser } from "../../support/auth-emulator";
import { call, sdkClient } from "../../support/api-client";
import { HOLD_URL_ENV, holdClient, type Holds } from "../../support/hold-control";
import { startInProcessApp, type InProcessApp } from "../../support/in-process-app";
import { stackEnv } from "../../support/stack-env";

const MAIL = "mail-schedules-test";
const SQL = "SELECT count(*) AS n_orders FROM shop.orders";
const DAILY = { kind: "daily", time: "09:00", timeZone: "Europe/Berlin" };

let app: InProcessApp;
let api: string;
let db: Firestore;
let holds: Holds;
let ann: TestUser;
let bob: TestUser;
let admin: TestUser;
let receiver: Receiver;

interface Receiver {
  url: string;
  got: { text: string; keys: string[] }[];
  status: number;
  close(): Promise<void>;
}

/** A chat webhook stand-in on 127.0.0.1: records every message, answers `status`. */
async function startReceiver(): Promise<Receiver> {
  const r: Partial<Receiver> = { got: [], status: 200 };
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      const json = JSON.parse(body) as Record<string, string>;
      r.got!.push({ text: json.text, keys: Object.keys(json) });
      res.writeHead(r.status!).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  r.close = () => new Promise((resolve) => server.close(() => resolve()));
  return r as Receiver;
}

beforeAll(async () => {
  const stack = stackEnv();
  // This process's function configuration: a small limit, loopback webhooks, mail (read once, on first use).
  Object.assign(process.env, {
    QUARRY_MAX_SCHEDULES: "3",
    QUARRY_SCHEDULE_LOOPBACK_WEBHOOK: "true",
    QUARRY_MAIL_COLLECTION: MAIL,
    QUARRY_APP_URL: "https://quarry.example.test",
  });
  app = await startInProcessApp();
  api = app.url;
  holds = holdClient(stack.env[HOLD_URL_ENV]);
  db = new Firestore({
    projectId: stack.env.GCLOUD_PROJECT,
    host: stack.env.FIRESTORE_EMULATOR_HOST,
    ssl: false,
  });
  [ann, bob, admin] = await Promise.all([1, 2, 3].map(() => signUp(stack.urls.auth!)));
  const now = new Date().toISOString();
  await db
    .collection("members")
    .doc(admin.email)
    .set({ email: admin.email, role: "admin", addedBy: "test", addedAt: now, updatedAt: now });
  receiver = await startReceiver();
}, 120_000);

afterAll(async () => {
  await receiver?.close();
  await app?.close();
  await db?.terminate();
});

async function newThread(u: TestUser): Promise<string> {
  return (await sdkClient(api, u).threads.create()).thread_id;
}

async function create(u: TestUser, over: Record<string, unknown> = {}) {
  const body = {
    threadId: await newThread(u),
    question: "How many orders?",
    sql: SQL,
    schedule: DAILY,
    ...over,
  };
  return call(api, "/schedules", { method: "POST", token: u.idToken, body });
}

async function mine(u: TestUser) {
  return ((await call(api, "/schedules", { token: u.idToken })).json.schedules as { id: string }[]).map(
    (s) => s.id,
  );
}

const schedules = () => db.collection("schedules");

/** Makes a schedule due, ticks (queue collected here), and runs its task as the task-queue function would. */
async function runOnce(id: string) {
  const { runScheduleTick } = await import("../../../functions/src/schedules/tick");
  const { runScheduled } = await import("../../../functions/src/schedules/run");
  await schedules()
    .doc(id)
    .update({ nextRunAt: Timestamp.fromMillis(Date.now() - 60_000) });
  const tasks: { scheduleId: string; claim: string }[] = [];
  await runScheduleTick({ enqueue: async (t) => void tasks.push(t) });
  const task = tasks.find((t) => t.scheduleId === id);
  expect(task, "the tick claimed the schedule").toBeDefined();
  return runScheduled(task!);
}

describe("the schedules API", () => {
  it("creates, lists, reads, pauses, resumes, renames and deletes a person's schedule", async () => {
    const made = await create(ann, { name: "Orders daily" });
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
    expect(await mine(ann)).toContain(id);
    expect((await call(api, `/schedules/${id}`, { token: ann.idToken })).json).toMatchObject({
      id,
      name: "Orders daily",
    });

    const paused = await call(api, `/schedules/${id}`, {
      method: "PATCH",
      token: ann.idToken,
      body: { paused: true, name: "Orders" },
    });
    expect(paused.json).toMatchObject({ paused: true, name: "Orders", pausedReason: "paused by its owner" });
    const resumed = await call(api, `/schedules/${id}`, {
      method: "PATCH",
      token: ann.idToken,
      body: { paused: false },
    });
    expect(resumed.json).toMatchObject({ paused: false, pausedReason: null });

    expect((await call(api, `/schedules/${id}`, { method: "DELETE", token: ann.idToken })).status).toBe(204);
    const gone = await call(api, `/schedules/${id}`, { token: ann.idToken });
    expect(gone.status).toBe(404);
    expect(gone.json.error).toBe("not_found:schedule");
  });

  it("refuses bad input with 400 naming the field, and stores nothing", async () => {
    const before = await mine(ann);
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
      const res = await create(ann, over);
      expect(res.status, JSON.stringify(over)).toBe(400);
      expect(String(res.json.message)).toMatch(why);
    }
    // SQL that does not run (a column that does not exist): refused by the dry run.
    const broken = await create(ann, { sql: "SELECT no_such_column FROM shop.orders" });
    expect(broken.status).toBe(400);
    expect(broken.json.error).toBe("bad_request:schedule");
    expect(await mine(ann)).toEqual(before);
  });

  it("answers 404 to another person on every route, and refuses their thread", async () => {
    const id = String((await create(ann)).json.id);
    const routes: [string, string, unknown?][] = [
      ["GET", `/schedules/${id}`],
      ["PATCH", `/schedules/${id}`, { paused: true }],
      ["DELETE", `/schedules/${id}`],
      ["POST", `/schedules/${id}/run`],
    ];
    for (const [method, path, body] of routes) {
      const res = await call(api, path, { method, token: bob.idToken, ...(body ? { body } : {}) });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.json.error).toBe("not_found:schedule");
    }
    expect(await mine(bob)).not.toContain(id);
    const annThread = await newThread(ann);
    const onHers = await call(api, "/schedules", {
      method: "POST",
      token: bob.idToken,
      body: { threadId: annThread, question: "q", sql: SQL, schedule: DAILY },
    });
    expect(onHers.status).toBe(404);
    expect((await schedules().doc(id).get()).get("paused")).toBe(false);
    await call(api, `/schedules/${id}`, { method: "DELETE", token: ann.idToken });
  });

  it("refuses a schedule over the person's limit (QUARRY_MAX_SCHEDULES)", async () => {
    const carol = await signUp(stackEnv().urls.auth!);
    for (let i = 0; i < 3; i++) expect((await create(carol)).status).toBe(201);
    const over = await create(carol);
    expect(over.status).toBe(409);
    expect(over.json.error).toBe("conflict:schedule");
    expect(await mine(carol)).toHaveLength(3);
  });

  it("lets admins list every schedule and pause one; members may not", async () => {
    const id = String((await create(bob)).json.id);
    expect((await call(api, "/admin/schedules", { token: bob.idToken })).status).toBe(403);
    const all = (await call(api, "/admin/schedules", { token: admin.idToken })).json.schedules as {
      id: string;
    }[];
    expect(all.map((s) => s.id)).toContain(id);
    const paused = await call(api, `/admin/schedules/${id}`, {
      method: "PATCH",
      token: admin.idToken,
      body: { paused: true },
    });
    expect(paused.json).toMatchObject({ paused: true, pausedReason: "paused by an admin" });
    expect((await call(api, `/schedules/${id}`, { token: bob.idToken })).json).toMatchObject({
      paused: true,
    });
    const audit = await db.collection("audit").where("target", "==", id).get();
    expect(audit.docs.map((d) => d.get("action"))).toContain("schedule.pause");
    await call(api, `/schedules/${id}`, { method: "DELETE", token: bob.idToken });
  });
});

describe("the tick", () => {
  it("claims each due schedule once when two ticks overlap; a schedule not due is left", async () => {
    const { runScheduleTick } = await import("../../../functions/src/schedules/tick");
    const due = String((await create(bob)).json.id);
    const later = String((await create(bob)).json.id);
    await schedules()
      .doc(due)
      .update({ nextRunAt: Timestamp.fromMillis(Date.now() - 60_000) });
    const queued: string[] = [];
    const enqueue = async (t: { scheduleId: string }) => void queued.push(t.scheduleId);
    // The first tick is held between its query and its claims until the second has finished.
    let release!: () => void;
    let reached!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const atHold = new Promise<void>((r) => (reached = r));
    const first = runScheduleTick({
      enqueue,
      afterQuery: async (ids) => {
        expect(ids).toContain(due);
        reached();
        await held;
      },
    });
    await atHold;
    const second = await runScheduleTick({ enqueue });
    release();
    const firstClaimed = await first;
    expect(second).toContain(due);
    expect(firstClaimed).not.toContain(due);
    expect(queued.filter((id) => id === due)).toHaveLength(1);
    expect(queued).not.toContain(later);
    // Two at once, no hold: still once.
    await schedules()
      .doc(due)
      .update({ nextRunAt: Timestamp.fromMillis(Date.now() - 60_000) });
    queued.length = 0;
    await Promise.all([runScheduleTick({ enqueue }), runScheduleTick({ enqueue })]);
    expect(queued.filter((id) => id === due)).toHaveLength(1);
    const next = (await schedules().doc(due).get()).get("nextRunAt") as Timestamp;
    expect(next.toMillis()).toBeGreaterThan(Date.now());
    for (const id of [due, later])
      await call(api, `/schedules/${id}`, { method: "DELETE", token: bob.idToken });
  });

  it("moves nextRunAt on in the person's time zone across a daylight-saving change", async () => {
    const { runScheduleTick } = await import("../../../functions/src/schedules/tick");
    const carolina = await signUp(stackEnv().urls.auth!);
    const id = String(
      (await create(carolina, { schedule: { kind: "daily", time: "09:00", timeZone: "America/New_York" } }))
        .json.id,
    );
    // Due at 09:00 EST on Saturday 7 March 2026; clocks go forward on Sunday 8 March.
    await schedules()
      .doc(id)
      .update({ nextRunAt: Timestamp.fromDate(new Date("2026-03-07T14:00:00Z")) });
    const claimed = await runScheduleTick({ now: new Date("2026-03-07T14:03:00Z"), enqueue: async () => {} });
    expect(claimed).toContain(id);
    const next = (await schedules().doc(id).get()).get("nextRunAt") as Timestamp;
    // 09:00 EDT (UTC-4), not 09:00 EST.
    expect(next.toDate().toISOString()).toBe("2026-03-08T13:00:00.000Z");
    await call(api, `/schedules/${id}`, { method: "DELETE", token: carolina.idToken });
  });
});

describe("scheduled runs", () => {
  it("runs the saved SQL with one model call, fires a change alert once, notifies, posts the webhook without rows, mails", async () => {
    const marker = `sched-${randomUUID().slice(0, 8)}`;
    const made = await create(ann, {
      question: `How many orders are there? ${marker}`,
      name: "Orders count",
      alert: { kind: "change", column: "n_orders", direction: "down", percent: 20 },
      webhook: receiver.url,
    });
    expect(made.status).toBe(201);
    const id = String(made.json.id);
    receiver.status = 200;
    const heardBefore = receiver.got.length;

    // First run: nothing to compare; the figure is kept for the next run.
    const first = await runOnce(id);
    expect(first).toMatchObject({ outcome: "ok", fired: false });
    expect(first.summary).toMatch(/^first run/);
    const figure = (await schedules().doc(id).get()).get("lastRun.figure") as number;
    expect(figure).toBeGreaterThan(0);

    // The previous run saw a quarter more orders: down 20 % → fires.
    await schedules()
      .doc(id)
      .update({ "lastRun.figure": figure * 1.25 });
    const fired = await runOnce(id);
    expect(fired).toMatchObject({ outcome: "ok", fired: true });
    expect(fired.summary).toMatch(/n_orders fell 20\.0 %/);

    // The previous run saw 5 % more: not enough → does not fire.
    await schedules()
      .doc(id)
      .update({ "lastRun.figure": figure * 1.05 });
    const quiet = await runOnce(id);
    expect(quiet).toMatchObject({ outcome: "ok", fired: false });

    // One webhook message, for the fired alert only: the summary and a link, no rows.
    const heard = receiver.got.slice(heardBefore);
    expect(heard).toHaveLength(1);
    expect(heard[0].keys).toEqual(["text"]);
    expect(heard[0].text).toMatch(/\*Orders count\* — alert: n_orders fell 20\.0 %/);
    const threadId = String(made.json.scheduleThreadId);
    expect(heard[0].text).toContain(`https://quarry.example.test/t/${threadId}`);
    expect(heard[0].text).not.toMatch(/^\|/m);

    // The owner's notification, for the fired alert only.
    const notes = await db.collection("notifications").where("scheduleId", "==", id).get();
    expect(notes.docs.map((d) => d.data())).toEqual([
      expect.objectContaining({ uid: ann.uid, threadId, fired: true, read: false }),
    ]);
    // Mail through the Trigger Email extension's collection.
    const mails = (await db.collection(MAIL).where("to", "==", ann.email).get()).docs.map((d) => d.data());
    expect(mails.some((m) => String(m.message.subject).includes("n_orders fell 20.0 %"))).toBe(true);

    // Each run: one model call (the generator), none to plan; the answers are turns of the schedule's thread.
    expect(await holds.prompts(marker)).toHaveLength(3);
    const state = await sdkClient(api, ann).threads.getState(threadId);
    const msgs = (state.values as { messages: { type: string }[] }).messages;
    expect(msgs.filter((m) => m.type === "human")).toHaveLength(3);

    // Every scheduled query is on the audit log, marked as scheduled.
    const audit = (await db.collection("audit").where("scheduleId", "==", id).get()).docs.map((d) =>
      d.data(),
    );
    expect(audit).toHaveLength(3);
    for (const a of audit)
      expect(a).toMatchObject({ kind: "query", scheduled: true, sql: SQL, uid: ann.uid, outcome: "ok" });
    await call(api, `/schedules/${id}`, { method: "DELETE", token: ann.idToken });
  });

  it("retries a webhook that answers 500, then records the failure on the schedule", async () => {
    const id = String((await create(bob, { webhook: receiver.url })).json.id);
    receiver.status = 500;
    const before = receiver.got.length;
    try {
      expect(await runOnce(id)).toMatchObject({ outcome: "ok" });
    } finally {
      receiver.status = 200;
    }
    expect(receiver.got.length - before).toBe(3);
    const shown = (await call(api, `/schedules/${id}`, { token: bob.idToken })).json;
    expect(String((shown.deliveryError as { message: string }).message)).toMatch(/HTTP 500/);
    // Delivered next time: the failure is cleared.
    expect(await runOnce(id)).toMatchObject({ outcome: "ok" });
    expect((await call(api, `/schedules/${id}`, { token: bob.idToken })).json.deliveryError).toBeNull();
    await call(api, `/schedules/${id}`, { method: "DELETE", token: bob.idToken });
  });

  it("records SQL that no longer runs, pauses after three failures in a row and tells the owner", async () => {
    const id = String((await create(bob, { name: "Renamed column" })).json.id);
    // The column was renamed after the schedule was saved.
    await schedules().doc(id).update({ sql: "SELECT sum(total_renamed) AS revenue FROM shop.orders" });
    for (const n of [1, 2, 3]) {
      const run = await runOnce(id);
      expect(run.outcome).toBe("failed");
      expect(run.error).toMatch(/saved query failed/);
      expect(run.paused).toBe(n === 3);
    }
    const shown = (await call(api, `/schedules/${id}`, { token: bob.idToken })).json;
    expect(shown).toMatchObject({ paused: true, failures: 3, lastRun: { outcome: "failed" } });
    expect(String(shown.pausedReason)).toMatch(/paused after 3 failed runs in a row/);
    const notes = (await db.collection("notifications").where("scheduleId", "==", id).get()).docs.map((d) =>
      d.data(),
    );
    expect(notes).toHaveLength(3);
    expect(notes.every((n) => n.uid === bob.uid && n.fired === false)).toBe(true);
    expect(notes.some((n) => /paused/.test(String(n.title)))).toBe(true);
    // Paused: no tick claims it.
    const { runScheduleTick } = await import("../../../functions/src/schedules/tick");
    await schedules()
      .doc(id)
      .update({ nextRunAt: Timestamp.fromMillis(Date.now() - 60_000) });
    expect(await runScheduleTick({ enqueue: async () => {} })).not.toContain(id);
    await call(api, `/schedules/${id}`, { method: "DELETE", token: bob.idToken });
  });

  it("does not run a removed member's schedule", async () => {
    const stack = stackEnv();
    const outsider = await signUp(stack.urls.auth!, `outsider-${Date.now()}@elsewhere.test`);
    await call(api, "/admin/members", {
      method: "POST",
      token: admin.idToken,
      body: { email: outsider.email },
    });
    const made = await create(outsider);
    expect(made.status).toBe(201);
    const id = String(made.json.id);
    await call(api, `/admin/members/${outsider.email}`, { method: "DELETE", token: admin.idToken });
    const run = await runOnce(id);
    expect(run).toMatchObject({ outcome: "skipped", paused: true });
    const doc = (await schedules().doc(id).get()).data()!;
    expect(doc.paused).toBe(true);
    expect(String(doc.pausedReason)).toMatch(/may no longer use Quarry/);
    expect((await db.collection("audit").where("scheduleId", "==", id).get()).size).toBe(0);
    expect((await db.collection("threads").doc(String(made.json.scheduleThreadId)).get()).exists).toBe(false);
  });
});

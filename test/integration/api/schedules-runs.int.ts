/**
 * Scheduled questions (#33), the tick and the runs: the tick and the scheduled run called as the
 * functions call them (and once through the emulated task queue), on the integration stack with a
 * loopback webhook receiver. The sample data does not change while the stack runs (DuckDB copies
 * its file tables at start-up), so the alert tests set the figure the previous run stored, as a
 * previous run would.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Timestamp } from "@google-cloud/firestore";
import { PASSWORD, signIn, signUp } from "../../support/auth-emulator";
import { call, sdkClient } from "../../support/api-client";
import { stackEnv } from "../../support/stack-env";
import {
  MAIL,
  SQL,
  create,
  schedules,
  runOnce,
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

describe("the tick", () => {
  it("claims each due schedule once when two ticks overlap; a schedule not due is left", async () => {
    const { runScheduleTick } = await import("../../../functions/src/schedules/tick");
    const due = String((await create(f.bob)).json.id);
    const later = String((await create(f.bob)).json.id);
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
      await call(f.api, `/schedules/${id}`, { method: "DELETE", token: f.bob.idToken });
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
    await call(f.api, `/schedules/${id}`, { method: "DELETE", token: carolina.idToken });
  });
});

describe("scheduled runs", () => {
  it("runs the saved SQL with one model call, fires a change alert once, notifies, posts the webhook without rows, mails", async () => {
    const marker = `sched-${randomUUID().slice(0, 8)}`;
    const made = await create(f.ann, {
      question: `How many orders are there? ${marker}`,
      name: "Orders count",
      alert: { kind: "change", column: "n_orders", direction: "down", percent: 20 },
      webhook: f.receiver.url,
    });
    expect(made.status).toBe(201);
    const id = String(made.json.id);
    f.receiver.status = 200;
    const heardBefore = f.receiver.got.length;

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
    const heard = f.receiver.got.slice(heardBefore);
    expect(heard).toHaveLength(1);
    expect(heard[0].keys).toEqual(["text"]);
    expect(heard[0].text).toMatch(/\*Orders count\* — alert: n_orders fell 20\.0 %/);
    const threadId = String(made.json.scheduleThreadId);
    expect(heard[0].text).toContain(`https://quarry.example.test/t/${threadId}`);
    expect(heard[0].text).not.toMatch(/^\|/m);

    // The owner's notification, for the fired alert only.
    const notes = await f.db.collection("notifications").where("scheduleId", "==", id).get();
    expect(notes.docs.map((d) => d.data())).toEqual([
      expect.objectContaining({ uid: f.ann.uid, threadId, fired: true, read: false }),
    ]);
    // Mail through the Trigger Email extension's collection.
    const mails = (await f.db.collection(MAIL).where("to", "==", f.ann.email).get()).docs.map((d) =>
      d.data(),
    );
    expect(mails.some((m) => String(m.message.subject).includes("n_orders fell 20.0 %"))).toBe(true);

    // Each run: one model call (the generator), none to plan; the answers are turns of the schedule's thread.
    expect(await f.holds.prompts(marker)).toHaveLength(3);
    const thread = await sdkClient(f.api, f.ann).threads.get(threadId);
    expect(thread.metadata).toMatchObject({ owner: f.ann.uid, title: "Orders count", scheduleId: id });
    const state = await sdkClient(f.api, f.ann).threads.getState(threadId);
    const msgs = (state.values as { messages: { type: string }[] }).messages;
    expect(msgs.filter((m) => m.type === "human")).toHaveLength(3);

    // Every scheduled query is on the audit log, marked as scheduled.
    const audit = (await f.db.collection("audit").where("scheduleId", "==", id).get()).docs.map((d) =>
      d.data(),
    );
    expect(audit).toHaveLength(3);
    for (const a of audit)
      expect(a).toMatchObject({ kind: "query", scheduled: true, sql: SQL, uid: f.ann.uid, outcome: "ok" });
    await call(f.api, `/schedules/${id}`, { method: "DELETE", token: f.ann.idToken });
  });

  it("retries a webhook that answers 500, then records the failure on the schedule", async () => {
    const id = String((await create(f.bob, { webhook: f.receiver.url })).json.id);
    f.receiver.status = 500;
    const before = f.receiver.got.length;
    try {
      expect(await runOnce(id)).toMatchObject({ outcome: "ok" });
    } finally {
      f.receiver.status = 200;
    }
    expect(f.receiver.got.length - before).toBe(3);
    const shown = (await call(f.api, `/schedules/${id}`, { token: f.bob.idToken })).json;
    expect(String((shown.deliveryError as { message: string }).message)).toMatch(/HTTP 500/);
    // Delivered next time: the failure is cleared.
    expect(await runOnce(id)).toMatchObject({ outcome: "ok" });
    expect((await call(f.api, `/schedules/${id}`, { token: f.bob.idToken })).json.deliveryError).toBeNull();
    await call(f.api, `/schedules/${id}`, { method: "DELETE", token: f.bob.idToken });
  });

  it("records SQL that no longer runs, pauses after three failures in a row and tells the owner", async () => {
    const id = String((await create(f.bob, { name: "Renamed column" })).json.id);
    // The column was renamed after the schedule was saved.
    await schedules().doc(id).update({ sql: "SELECT sum(total_renamed) AS revenue FROM shop.orders" });
    for (const n of [1, 2, 3]) {
      const run = await runOnce(id);
      expect(run.outcome).toBe("failed");
      expect(run.error).toMatch(/saved query failed/);
      expect(run.paused).toBe(n === 3);
    }
    const shown = (await call(f.api, `/schedules/${id}`, { token: f.bob.idToken })).json;
    expect(shown).toMatchObject({ paused: true, failures: 3, lastRun: { outcome: "failed" } });
    expect(String(shown.pausedReason)).toMatch(/paused after 3 failed runs in a row/);
    const notes = (await f.db.collection("notifications").where("scheduleId", "==", id).get()).docs.map((d) =>
      d.data(),
    );
    expect(notes).toHaveLength(3);
    expect(notes.every((n) => n.uid === f.bob.uid && n.fired === false)).toBe(true);
    expect(notes.some((n) => /paused/.test(String(n.title)))).toBe(true);
    // Paused: no tick claims it.
    const { runScheduleTick } = await import("../../../functions/src/schedules/tick");
    await schedules()
      .doc(id)
      .update({ nextRunAt: Timestamp.fromMillis(Date.now() - 60_000) });
    expect(await runScheduleTick({ enqueue: async () => {} })).not.toContain(id);
    await call(f.api, `/schedules/${id}`, { method: "DELETE", token: f.bob.idToken });
  });

  it("does not run a removed member's schedule", async () => {
    const stack = stackEnv();
    const outsider = await signUp(stack.urls.auth!, `outsider-${Date.now()}@elsewhere.test`);
    await call(f.api, "/admin/members", {
      method: "POST",
      token: f.admin.idToken,
      body: { email: outsider.email },
    });
    const made = await create(outsider);
    expect(made.status).toBe(201);
    const id = String(made.json.id);
    await call(f.api, `/admin/members/${outsider.email}`, { method: "DELETE", token: f.admin.idToken });
    const run = await runOnce(id);
    expect(run).toMatchObject({ outcome: "skipped", paused: true });
    const doc = (await schedules().doc(id).get()).data()!;
    expect(doc.paused).toBe(true);
    expect(String(doc.pausedReason)).toMatch(/may no longer use Quarry/);
    expect((await f.db.collection("audit").where("scheduleId", "==", id).get()).size).toBe(0);
    expect((await f.db.collection("threads").doc(String(made.json.scheduleThreadId)).get()).exists).toBe(
      false,
    );
  });

  it("stops the schedule of an owner whose account was deleted, disabled, or signed out everywhere since it was saved", async () => {
    const { initializeApp, deleteApp } = await import("firebase-admin/app");
    const { getAuth } = await import("firebase-admin/auth");
    const app = initializeApp({ projectId: stackEnv().env.GCLOUD_PROJECT }, `sched-owner-${Date.now()}`);
    const auth = getAuth(app);
    try {
      const cases: [string, (uid: string, id: string) => Promise<unknown>, RegExp][] = [
        ["deleted", (uid) => auth.deleteUser(uid), /the account was deleted/],
        ["disabled", (uid) => auth.updateUser(uid, { disabled: true }), /the account was disabled/],
        [
          "revoked",
          async (uid, id) => {
            // Saved a minute ago (revocation is recorded to the second): "sign out everywhere" happens now.
            await schedules()
              .doc(id)
              .update({ ownerSavedAt: Timestamp.fromMillis(Date.now() - 60_000) });
            await auth.revokeRefreshTokens(uid);
          },
          /sessions were revoked after the schedule was saved/,
        ],
      ];
      for (const [what, depart, reason] of cases) {
        const owner = await signUp(stackEnv().urls.auth!);
        const made = await create(owner);
        expect(made.status, what).toBe(201);
        const id = String(made.json.id);
        await depart(owner.uid, id);
        const run = await runOnce(id);
        expect(run, what).toMatchObject({ outcome: "skipped", paused: true });
        const doc = (await schedules().doc(id).get()).data()!;
        expect(doc.paused, what).toBe(true);
        expect(String(doc.pausedReason), what).toMatch(reason);
        // Nothing ran: no query audited, the schedule's conversation never made.
        expect((await f.db.collection("audit").where("scheduleId", "==", id).get()).size, what).toBe(0);
        expect(
          (await f.db.collection("threads").doc(String(made.json.scheduleThreadId)).get()).exists,
          what,
        ).toBe(false);
      }
      // An owner signed out everywhere who signs in and saves the schedule again afterwards runs again.
      const carl = await signUp(stackEnv().urls.auth!);
      const id = String((await create(carl)).json.id);
      await schedules()
        .doc(id)
        .update({ ownerSavedAt: Timestamp.fromMillis(Date.now() - 60_000) });
      await auth.revokeRefreshTokens(carl.uid);
      const again = await signIn(stackEnv().urls.auth!, carl.email, PASSWORD);
      const saved = await call(f.api, `/schedules/${id}`, {
        method: "PATCH",
        token: again.idToken,
        body: { paused: false },
      });
      expect(saved.status).toBe(200);
      expect(await runOnce(id)).toMatchObject({ outcome: "ok" });
    } finally {
      await deleteApp(app);
    }
  });
});

describe("scheduled runs, more", () => {
  it("skips a run over the owner's quota and says so, without counting it as a failure", async () => {
    const erin = await signUp(stackEnv().urls.auth!);
    const id = String((await create(erin)).json.id);
    const now = new Date().toISOString();
    await f.db
      .collection("members")
      .doc(erin.email)
      .set({
        email: erin.email,
        role: "member",
        quotas: { questionsPerMinute: 0 },
        addedBy: "test",
        addedAt: now,
        updatedAt: now,
      });
    const run = await runOnce(id);
    expect(run.outcome).toBe("skipped");
    expect(run.error).toMatch(/^skipped: /);
    const shown = (await call(f.api, `/schedules/${id}`, { token: erin.idToken })).json;
    expect(shown).toMatchObject({ paused: false, failures: 0, lastRun: { outcome: "skipped" } });
    const notes = (await f.db.collection("notifications").where("scheduleId", "==", id).get()).docs;
    expect(notes.map((d) => d.get("title"))).toEqual([expect.stringMatching(/skipped/)]);
    expect((await f.db.collection("audit").where("scheduleId", "==", id).get()).size).toBe(0);
  });

  it("runs now on the owner's request, paused or not, through the task queue of the emulated functions", async () => {
    const stack = stackEnv();
    const id = String((await create(f.ann)).json.id);
    // Paused, it does not run on its own, but its owner may still run it (to try a fix).
    await call(f.api, `/schedules/${id}`, { method: "PATCH", token: f.ann.idToken, body: { paused: true } });
    const queued = await call(stack.urls.api!, `/schedules/${id}/run`, {
      method: "POST",
      token: f.ann.idToken,
    });
    expect(queued.status).toBe(202);
    await expect
      .poll(async () => (await schedules().doc(id).get()).get("lastRun.outcome"), { timeout: 45_000 })
      .toBe("ok");
    const doc = (await schedules().doc(id).get()).data()!;
    expect(doc.pendingClaim).toBeNull();
    // The answer is a turn of the schedule's own conversation, the owner's.
    const state = await sdkClient(f.api, f.ann).threads.getState(String(doc.scheduleThreadId));
    expect((state.values as { messages: unknown[] }).messages.length).toBeGreaterThan(1);
    await call(f.api, `/schedules/${id}`, { method: "DELETE", token: f.ann.idToken });
  });
});

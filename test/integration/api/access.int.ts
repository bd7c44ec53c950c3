/**
 * Access through the functions emulator (the closed policy of the integration stack: verified
 * addresses of example.com are members, admin@quarry-admins.test is an admin): non-members are
 * refused on every route, with the SDK and raw HTTP; an admin adds and removes members; quotas are
 * atomic across instances; the audit log holds what ran and what admins did.
 */
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { Firestore } from "@google-cloud/firestore";
import { MEMBER_DOMAIN, TEST_ADMIN_EMAIL, signUp, type TestUser } from "../../support/auth-emulator";
import { call, sdkClient } from "../../support/api-client";
import { startInProcessApp, type InProcessApp } from "../../support/in-process-app";
import { stackEnv } from "../../support/stack-env";
import { accessSeenEverywhere } from "../../support/seed-access";

let api: string;
let authUrl: string;
let admin: TestUser;
let member: TestUser;
let db: Firestore;
const QUESTION = "How many orders were placed in total?";
const input = (content = QUESTION) => ({ messages: [{ type: "human", content }] });
let seq = 0;
const outsiderEmail = () => `outsider${Date.now()}-${seq++}@elsewhere.test`;

beforeAll(async () => {
  const stack = stackEnv();
  api = stack.urls.api!;
  authUrl = stack.urls.auth!;
  // The admin named in QUARRY_ADMINS (a fixed address: this file signs it up once per stack).
  admin = await signUp(authUrl, TEST_ADMIN_EMAIL);
  member = await signUp(authUrl);
  db = new Firestore({
    projectId: stack.env.GCLOUD_PROJECT,
    host: stack.env.FIRESTORE_EMULATOR_HOST,
    ssl: false,
  });
});
afterAll(async () => {
  await db?.terminate();
});

/** Every kind of route a person reaches data or a model through, as raw requests. */
function everyRoute(threadId: string, runId: string) {
  const run = { assistant_id: "quarry", input: input() };
  return [
    ["GET", "/me"],
    ["POST", "/threads", {}],
    ["POST", "/threads/search", {}],
    ["GET", `/threads/${threadId}`],
    ["GET", `/threads/${threadId}/state`],
    ["POST", `/threads/${threadId}/history`, {}],
    ["POST", `/threads/${threadId}/runs/stream`, run],
    ["POST", `/threads/${threadId}/runs`, run],
    ["POST", `/threads/${threadId}/runs/wait`, run],
    ["GET", `/threads/${threadId}/runs/${runId}/stream`],
    ["GET", `/threads/${threadId}/runs/${runId}/join`],
    ["POST", `/threads/${threadId}/runs/${runId}/cancel`],
    ["POST", `/threads/${threadId}/feedback`, { question_id: "q", score: 1 }],
    ["GET", "/admin/members"],
  ] as const;
}

describe("who may use Quarry", () => {
  it("refuses non-members on every route with 403 forbidden:not_member naming whom to ask", async () => {
    const memberClient = sdkClient(api, member);
    const thread = await memberClient.threads.create();
    const runId = "00000000-0000-4000-8000-000000000001";
    const unverified = await signUp(authUrl, `unverified${Date.now()}@${MEMBER_DOMAIN}`, { verified: false });
    const outside = await signUp(authUrl, outsiderEmail());
    for (const who of [unverified, outside]) {
      for (const [method, path, body] of everyRoute(thread.thread_id, runId)) {
        const res = await call(api, path, { method, token: who.idToken, ...(body ? { body } : {}) });
        expect([path, res.status, res.json?.error]).toEqual([path, 403, "forbidden:not_member"]);
        expect(String(res.json?.message)).toContain("data-team@example.com");
      }
      // The SDK's own requests, as a client would make them.
      const sdk = sdkClient(api, who);
      await expect(sdk.threads.create()).rejects.toMatchObject({ status: 403 });
      const stream = sdk.runs.stream(thread.thread_id, "quarry", { input: input() });
      await expect(stream.next()).rejects.toMatchObject({ status: 403 });
      await expect(sdk.runs.wait(thread.thread_id, "quarry", { input: input() })).rejects.toMatchObject({
        status: 403,
      });
      const joined = sdk.runs.joinStream(thread.thread_id, runId);
      await expect(joined.next()).rejects.toMatchObject({ status: 403 });
    }
  });

  it("lets a member through, with their role and quotas at /me, and keeps /admin for admins", async () => {
    const me = await call(api, "/me", { token: member.idToken });
    expect(me.status).toBe(200);
    expect(me.json).toMatchObject({ uid: member.uid, email: member.email, role: "member" });
    const q = (me.json as { quotas: Record<string, { used: number; limit: number; resetsAt: string }> })
      .quotas;
    expect(Object.keys(q).sort()).toEqual(["bytesPerDay", "questionsPerMinute", "tokensPerDay"]);
    expect(Date.parse(q.tokensPerDay.resetsAt)).toBeGreaterThan(Date.now());
    const thread = await sdkClient(api, member).threads.create();
    const values = (await sdkClient(api, member).runs.wait(thread.thread_id, "quarry", {
      input: input(),
    })) as {
      messages: { type: string }[];
    };
    expect(values.messages.at(-1)?.type).toBe("ai");
    for (const path of ["/admin/members", "/admin/usage", "/admin/audit", "/admin/proposals"]) {
      const res = await call(api, path, { token: member.idToken });
      expect([path, res.status, res.json?.error]).toEqual([path, 403, "forbidden:admin_only"]);
    }
    expect((await call(api, "/me", { token: admin.idToken })).json).toMatchObject({ role: "admin" });
  });

  it("an admin adds a member who can then ask, and removing them refuses them within the cache time", async () => {
    const outsider = await signUp(authUrl, outsiderEmail());
    expect((await call(api, "/me", { token: outsider.idToken })).status).toBe(403);
    const added = await call(api, "/admin/members", {
      method: "POST",
      token: admin.idToken,
      body: { email: outsider.email.toUpperCase(), role: "member" },
    });
    expect(added.status).toBe(201);
    expect(added.json).toMatchObject({ email: outsider.email, role: "member", addedBy: TEST_ADMIN_EMAIL });
    // Within the cache time (2 s in this stack) every instance sees it: one at once, the rest after it.
    await expect
      .poll(async () => (await call(api, "/me", { token: outsider.idToken })).status, { timeout: 10_000 })
      .toBe(200);
    await accessSeenEverywhere();
    const thread = await sdkClient(api, outsider).threads.create();
    await sdkClient(api, outsider).runs.wait(thread.thread_id, "quarry", { input: input() });
    const listed = await call(api, "/admin/members", { token: admin.idToken });
    expect((listed.json as { members: { email: string }[] }).members.map((m) => m.email)).toContain(
      outsider.email,
    );
    const removedAt = Date.now();
    expect(
      (await call(api, `/admin/members/${outsider.email}`, { method: "DELETE", token: admin.idToken }))
        .status,
    ).toBe(204);
    await expect
      .poll(async () => (await call(api, "/me", { token: outsider.idToken })).json?.error, {
        timeout: 10_000,
      })
      .toBe("forbidden:not_member");
    // Stated bound: QUARRY_ACCESS_CACHE_SECONDS (2 here) plus a request.
    expect(Date.now() - removedAt).toBeLessThan(10_000);
    const audit = await call(api, `/admin/audit?person=${encodeURIComponent(TEST_ADMIN_EMAIL)}&limit=50`, {
      token: admin.idToken,
    });
    const actions = (audit.json as { entries: { action?: string; target?: string }[] }).entries
      .filter((e) => e.target === outsider.email)
      .map((e) => e.action);
    expect(actions).toEqual(["member.remove", "member.add"]);
    // Paged, newest first, and filtered by date.
    const first = await call(api, `/admin/audit?person=${encodeURIComponent(TEST_ADMIN_EMAIL)}&limit=1`, {
      token: admin.idToken,
    });
    const page1 = first.json as { entries: { at: string; target?: string }[]; next?: string };
    expect(page1.entries).toHaveLength(1);
    expect(page1.next).toBeTruthy();
    const second = await call(
      api,
      `/admin/audit?person=${encodeURIComponent(TEST_ADMIN_EMAIL)}&limit=1&cursor=${page1.next}`,
      {
        token: admin.idToken,
      },
    );
    const page2 = second.json as { entries: { at: string }[] };
    expect(Date.parse(page2.entries[0].at)).toBeLessThanOrEqual(Date.parse(page1.entries[0].at));
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString();
    const none = await call(api, `/admin/audit?since=${tomorrow}`, { token: admin.idToken });
    expect((none.json as { entries: unknown[] }).entries).toEqual([]);
  });
});

describe("quotas", () => {
  let app: InProcessApp;
  beforeAll(async () => {
    app = await startInProcessApp();
  });
  afterAll(async () => {
    await app?.close();
  });

  it(
    "20 concurrent run starts against a limit of 5 admit exactly 5, across two instances; 429 with Retry-After",
    { timeout: 180_000 },
    async () => {
      const person = await signUp(authUrl);
      const set = await call(api, "/admin/members", {
        method: "POST",
        token: admin.idToken,
        body: { email: person.email, quotas: { questionsPerMinute: 5 } },
      });
      expect(set.status).toBe(201);
      // The emulated function and this process's instance both see the override (their caches expire).
      for (const base of [api, app.url]) {
        await expect
          .poll(
            async () =>
              (
                (await call(base, "/me", { token: person.idToken })).json as {
                  quotas?: { questionsPerMinute: { limit: number } };
                }
              )?.quotas?.questionsPerMinute.limit,
            { timeout: 10_000 },
          )
          .toBe(5);
      }
      const threads = await Promise.all(
        Array.from({ length: 20 }, () => sdkClient(api, person).threads.create()),
      );
      const results = await Promise.all(
        threads.map((t, i) =>
          // A quarter through the emulated function (each concurrent request starts a worker there),
          // the rest through this process's instance: two instances admitting from the same quota.
          call(i % 4 === 0 ? api : app.url, `/threads/${t.thread_id}/runs/wait`, {
            method: "POST",
            token: person.idToken,
            body: { assistant_id: "quarry", input: input() },
          }),
        ),
      );
      const statuses = results.map((r) => r.status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(5);
      expect(statuses.filter((s) => s === 429)).toHaveLength(15);
      const refused = results.find((r) => r.status === 429)!;
      expect(refused.json?.error).toBe("quota:questions");
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(String(refused.json?.message)).toMatch(/5 questions in the last minute; the limit is 5/);
      const me = await call(api, "/me", { token: person.idToken });
      expect(
        (me.json as { quotas: { questionsPerMinute: { used: number } } }).quotas.questionsPerMinute.used,
      ).toBe(5);
    },
  );

  it("a day's bytes used up refuses a question with quota:bytes, saying when it resets", async () => {
    const person = await signUp(authUrl);
    await call(api, "/admin/members", {
      method: "POST",
      token: admin.idToken,
      body: { email: person.email, quotas: { bytesPerDay: 0 } },
    });
    const thread = await sdkClient(api, person).threads.create();
    await expect
      .poll(
        async () => {
          const r = await call(api, `/threads/${thread.thread_id}/runs/stream`, {
            method: "POST",
            token: person.idToken,
            body: { assistant_id: "quarry", input: input() },
          });
          return [
            r.status,
            r.json?.error,
            Number(r.headers.get("retry-after")) > 0,
            /midnight UTC/.test(String(r.json?.message)),
          ];
        },
        { timeout: 10_000 },
      )
      .toEqual([429, "quota:bytes", true, true]);
  });

  it("over quota, the v2 run.start answers with the protocol's error and the quota's words, and starts nothing", async () => {
    const person = await signUp(authUrl);
    await call(api, "/admin/members", {
      method: "POST",
      token: admin.idToken,
      body: { email: person.email, quotas: { bytesPerDay: 0 } },
    });
    const threadId = crypto.randomUUID();
    await expect
      .poll(
        async () => {
          const r = await call(api, `/threads/${threadId}/commands`, {
            method: "POST",
            token: person.idToken,
            body: { id: 4, method: "run.start", params: { assistant_id: "quarry", input: input() } },
          });
          const b = r.json as { type?: string; id?: number; quarry_error?: string; message?: string };
          return [r.status, b.type, b.id, b.quarry_error, /midnight UTC/.test(String(b.message))];
        },
        { timeout: 10_000 },
      )
      .toEqual([200, "error", 4, "quota:bytes", true]);
    // Nothing ran on the thread: it holds no question.
    const state = await call(api, `/threads/${threadId}/state`, { token: person.idToken });
    const values = (state.json as { values?: { messages?: unknown[] } } | undefined)?.values;
    expect(values?.messages ?? []).toEqual([]);
  });

  it("bytes and tokens are charged as spent; a day's token quota used up refuses the next question", async () => {
    const person = await signUp(authUrl);
    const client = sdkClient(api, person);
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "quarry", { input: input() });
    await expect
      .poll(
        async () =>
          (
            (await call(api, "/me", { token: person.idToken })).json as {
              quotas: { tokensPerDay: { used: number } };
            }
          ).quotas.tokensPerDay.used,
      )
      .toBeGreaterThan(0);
    const used = (
      (await call(api, "/me", { token: person.idToken })).json as {
        quotas: { tokensPerDay: { used: number } };
      }
    ).quotas.tokensPerDay.used;
    await call(api, "/admin/members", {
      method: "POST",
      token: admin.idToken,
      body: { email: person.email, quotas: { tokensPerDay: used } },
    });
    // Every instance has the cap before the next question (one without it would run and charge it).
    await accessSeenEverywhere();
    await expect
      .poll(
        async () => {
          const r = await call(api, `/threads/${thread.thread_id}/runs/wait`, {
            method: "POST",
            token: person.idToken,
            body: { assistant_id: "quarry", input: input() },
          });
          return [r.status, r.json?.error, r.headers.get("retry-after") !== null];
        },
        { timeout: 10_000 },
      )
      .toEqual([429, "quota:tokens", true]);
    const usage = await call(api, "/admin/usage?days=1", { token: admin.idToken });
    const row = (
      usage.json as { people: { uid: string; today: { questions: number; tokens: number } }[] }
    ).people.find((p) => p.uid === person.uid);
    expect(row?.today.tokens).toBe(used);
    expect(row?.today.questions).toBeGreaterThanOrEqual(1);
  });
});

describe("audit", () => {
  it("holds exactly the queries a person's session ran, with bytes and outcome", async () => {
    const person = await signUp(authUrl);
    const client = sdkClient(api, person);
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "quarry", { input: input() });
    await client.runs.wait(thread.thread_id, "quarry", { input: input("What is the total revenue?") });
    const entries = async () =>
      (
        (await call(api, `/admin/audit?person=${person.uid}`, { token: admin.idToken })).json as {
          entries: { kind: string; threadId: string; sql: string; outcome: string; bytesBilled: number }[];
        }
      ).entries;
    // The queries that ran: the thread's tool messages that carry a query result.
    const state = await client.threads.getState(thread.thread_id);
    const ran = (
      state.values as { messages: { type: string; artifact?: { kind?: string; result?: { sql: string } } }[] }
    ).messages
      .filter((m) => m.type === "tool" && m.artifact?.kind === "query")
      .map((m) => m.artifact!.result!.sql);
    expect(ran.length).toBeGreaterThanOrEqual(2);
    await expect.poll(async () => (await entries()).length).toBe(ran.length);
    const got = await entries();
    expect(got.map((e) => e.sql).sort()).toEqual([...ran].sort());
    for (const e of got) {
      expect(e).toMatchObject({ kind: "query", threadId: thread.thread_id, outcome: "ok" });
      expect(typeof e.bytesBilled).toBe("number");
    }
    // Stored server-side only, under the person's uid.
    expect((await db.collection("audit").where("uid", "==", person.uid).get()).size).toBe(ran.length);
  });
});

describe("proposals in the admin API", () => {
  /** An answered question in the person's new thread, up-voted: a proposal. */
  async function proposed(person: TestUser, question = QUESTION): Promise<string> {
    const client = sdkClient(api, person);
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "quarry", { input: input(question) });
    const state = await client.threads.getState(thread.thread_id);
    const human = (state.values as { messages: { type: string; id: string }[] }).messages.find(
      (m) => m.type === "human",
    )!;
    const vote = await call(api, `/threads/${thread.thread_id}/feedback`, {
      method: "POST",
      token: person.idToken,
      body: { question_id: human.id, score: 1 },
    });
    expect(vote.json).toMatchObject({ status: "proposed" });
    return String(vote.json.feedback_id);
  }

  it("edits, refuses an approval whose SQL fails the dry run, approves into Firestore, rejects; each on the audit log", async () => {
    const person = await signUp(authUrl);
    const id = await proposed(person);
    const listed = await call(api, "/admin/proposals", { token: admin.idToken });
    expect((listed.json as { proposals: { id: string }[] }).proposals.map((p) => p.id)).toContain(id);
    const bad = await call(api, `/admin/proposals/${id}`, {
      method: "PATCH",
      token: admin.idToken,
      body: { sql: "SELECT nope FROM shop.nowhere" },
    });
    expect(bad.status).toBe(200);
    const refused = await call(api, `/admin/proposals/${id}/approve`, {
      method: "POST",
      token: admin.idToken,
    });
    expect(refused.status).toBe(400);
    expect(String(refused.json.message)).toMatch(/does not pass the dry run/);
    expect((await db.collection("approved_queries").doc(id).get()).exists).toBe(false);
    const good = "SELECT COUNT(*) AS orders FROM shop.orders";
    await call(api, `/admin/proposals/${id}`, {
      method: "PATCH",
      token: admin.idToken,
      body: { question: "How many orders in all?", sql: good },
    });
    const approved = await call(api, `/admin/proposals/${id}/approve`, {
      method: "POST",
      token: admin.idToken,
    });
    expect(approved.status).toBe(200);
    expect((await db.collection("approved_queries").doc(id).get()).data()).toMatchObject({
      question: "How many orders in all?",
      sql: good,
      approvedBy: TEST_ADMIN_EMAIL,
    });
    // Reviewed once: it leaves the list, and a second decision is a conflict.
    const again = await call(api, `/admin/proposals/${id}/reject`, { method: "POST", token: admin.idToken });
    expect([again.status, again.json.error]).toEqual([409, "conflict:proposal"]);
    const other = await proposed(person, "What is the total revenue?");
    expect(
      (await call(api, `/admin/proposals/${other}/reject`, { method: "POST", token: admin.idToken })).status,
    ).toBe(204);
    expect((await db.collection("approved_queries").doc(other).get()).exists).toBe(false);
    const after = await call(api, "/admin/proposals", { token: admin.idToken });
    expect((after.json as { proposals: { id: string }[] }).proposals.map((p) => p.id)).not.toContain(id);
    const audit = await call(api, `/admin/audit?person=${encodeURIComponent(TEST_ADMIN_EMAIL)}&limit=100`, {
      token: admin.idToken,
    });
    const mine = (audit.json as { entries: { action?: string; target?: string }[] }).entries.filter(
      (e) => e.target === id || e.target === other,
    );
    expect(mine.map((e) => `${e.action}:${e.target === id ? "a" : "b"}`)).toEqual([
      "proposal.reject:b",
      "proposal.approve:a",
      "proposal.edit:a",
      "proposal.edit:a",
    ]);
  });
});

describe("background runs", () => {
  it("a run queued by someone removed since does not run: its log says why", async () => {
    const app = await startInProcessApp(); // sets this process's configuration like the function's
    try {
      // A member queues a run, then is removed before its task starts.
      const outsider = await signUp(authUrl, outsiderEmail());
      await call(api, "/admin/members", {
        method: "POST",
        token: admin.idToken,
        body: { email: outsider.email },
      });
      await expect
        .poll(async () => (await call(api, "/me", { token: outsider.idToken })).status, { timeout: 10_000 })
        .toBe(200);
      const thread = await sdkClient(api, outsider).threads.create();
      await call(api, `/admin/members/${outsider.email}`, { method: "DELETE", token: admin.idToken });
      const { runInBackground } = await import("../../../functions/src/runs/background");
      const runId = "00000000-0000-4000-8000-0000000000aa";
      // Recorded as queued, as POST /threads/:id/runs records it before it queues the task.
      await db
        .collection("threads")
        .doc(thread.thread_id)
        .collection("runs")
        .doc(runId)
        .set({ status: "pending", uid: outsider.uid, strategy: "reject" });
      // The task's body, as the task queue hands it over (the members cache is not consulted).
      await runInBackground({
        threadId: thread.thread_id,
        uid: outsider.uid,
        runId,
        body: { assistant_id: "quarry", input: input() },
        identity: { email: outsider.email, emailVerified: true },
      });
      const threadDoc = db.collection("threads").doc(thread.thread_id);
      const run = await threadDoc.collection("runs").doc(runId).get();
      expect(run.get("status")).toBe("error");
      expect(run.get("error")).toMatchObject({ error: "forbidden:not_member" });
      // It never took the thread: no lease, no run recorded, no question stored (the only
      // checkpoint is the thread's empty start, written when it was created).
      expect((await threadDoc.get()).get("lastRunId")).toBeUndefined();
      expect(
        (await db.collection("checkpoints").doc(thread.thread_id).collection("checkpoints").limit(2).get())
          .size,
      ).toBe(1);
    } finally {
      await app.close();
    }
  });
});

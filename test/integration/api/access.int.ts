/**
 * Access through the functions emulator (the closed policy of the integration stack: verified
 * addresses of example.com are members, admin@quarry-admins.test is an admin): non-members are
 * refused on every route, with the SDK and raw HTTP; an admin adds and removes members; quotas are
 * atomic across instances; the audit log holds what ran and what admins did.
 */
import { Firestore } from "@google-cloud/firestore";
import { MEMBER_DOMAIN, TEST_ADMIN_EMAIL, signUp, type TestUser } from "../../support/auth-emulator";
import { call, sdkClient } from "../../support/api-client";
import { startInProcessApp, type InProcessApp } from "../../support/in-process-app";
import { stackEnv } from "../../support/stack-env";

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
    // Within the cache time (2 s in this stack) every instance sees it.
    await expect
      .poll(async () => (await call(api, "/me", { token: outsider.idToken })).status, { timeout: 10_000 })
      .toBe(200);
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

  it("20 concurrent run starts against a limit of 5 admit exactly 5, across two instances; 429 with Retry-After", async () => {
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
        call(i % 2 ? api : app.url, `/threads/${t.thread_id}/runs/wait`, {
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

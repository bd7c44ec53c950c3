/**
 * Answers a business user can trust, through the functions emulator with the model stand-in and
 * the real SDK client: every answer that ran SQL carries "how this was computed" (v1 custom event,
 * the stored answer message, the MCP `ask` result); an answer whose SQL is the sample's verified
 * query is marked verified and named, a written one is not; "Ask the data team to verify" files a
 * proposal that, once approved, makes the next identical question verified; a person's view is
 * kept by the server (bad input refused), defaults to their group's, and the MCP text follows it.
 */
import { randomUUID } from "node:crypto";
import { Firestore } from "@google-cloud/firestore";
import type { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signUp, type TestUser } from "../../support/auth-emulator";
import { call, sdkClient } from "../../support/api-client";
import { connectMcp, makeToken } from "../../support/mcp-client";
import { accessSeenEverywhere, seedAccess, until } from "../../support/seed-access";
import { startInProcessApp } from "../../support/in-process-app";
import { stackEnv } from "../../support/stack-env";

let api: string;
let admin: TestUser;
let ann: TestUser;
let bea: TestUser;
let db: Firestore;
const GROUPS = { "trust-business": ["shop"] };

interface Computed {
  verification: { status: string; by?: string; names?: string[] };
  tables: string[];
  sql: string[];
}

/** Asks in a new thread through the SDK (at `base`); the custom events and the stored answer message. */
async function ask(u: TestUser, question: string, base = api) {
  const client = sdkClient(base, u);
  const thread = await client.threads.create();
  const custom: { type: string; computed?: Computed }[] = [];
  for await (const chunk of client.runs.stream(thread.thread_id, "quarry", {
    input: { messages: [{ type: "human", content: question }] },
    streamMode: ["custom", "values"],
  })) {
    if (chunk.event === "custom") custom.push(chunk.data as { type: string; computed?: Computed });
  }
  const state = await client.threads.getState(thread.thread_id);
  const messages = (
    state.values as {
      messages: { id: string; type: string; response_metadata?: { quarry_computed?: Computed } }[];
    }
  ).messages;
  const questionId = messages.filter((m) => m.type === "human").at(-1)!.id;
  return {
    threadId: thread.thread_id,
    questionId,
    event: custom.find((e) => e.type === "computed")?.computed,
    stored: messages.at(-1)!.response_metadata?.quarry_computed,
  };
}

beforeAll(async () => {
  const stack = stackEnv();
  api = stack.urls.api!;
  [admin, ann, bea] = await Promise.all([1, 2, 3].map(() => signUp(stack.urls.auth!)));
  db = new Firestore({
    projectId: stack.env.GCLOUD_PROJECT,
    host: stack.env.FIRESTORE_EMULATOR_HOST,
    ssl: false,
  });
  await seedAccess(db, GROUPS, [
    [admin, "admin", []],
    [ann, "member", ["trust-business"]],
    [bea, "member", ["trust-business"]],
  ]);
  await until(
    async () => (await call(api, "/me", { token: ann.idToken })).json as { scope?: { datasets: string[] } },
    (m) => m.scope?.datasets.join() === "shop",
  );
}, 120_000);

afterAll(async () => {
  if (!db) return;
  for (const name of Object.keys(GROUPS)) await db.collection("groups").doc(name).delete();
  for (const u of [admin, ann, bea]) await db.collection("preferences").doc(u.uid).delete();
  // Later files run with no groups: every instance's cache lets go of them, and one shows it.
  await accessSeenEverywhere();
  const nobody = await signUp(stackEnv().urls.auth!);
  await until(
    async () =>
      (await call(api, "/me", { token: nobody.idToken })).json as { scope?: { datasets: string[] } },
    (m) => !!m.scope?.datasets.includes("shop"),
  );
  await db.terminate();
}, 60_000);

describe("how an answer was computed, verified or not", () => {
  it("marks the sample's verified query as verified and names it; a written answer is not", async () => {
    const verified = await ask(admin, "What was revenue by month in 2025?");
    expect(verified.event).toBeDefined();
    expect(verified.stored).toEqual(verified.event);
    expect(verified.event!.verification).toEqual({
      status: "verified",
      by: "verified_query",
      names: ["What was revenue by month in 2025?"],
    });
    expect(verified.event!.tables).toEqual(expect.arrayContaining(["shop.orders", "shop.order_items"]));

    // Its SQL is one no test approves: whatever ran before, it is written for this question.
    const written = await ask(admin, `How many orders are there? [sql:written] [m-${randomUUID()}]`);
    expect(written.event!.verification).toEqual({ status: "written" });
  });

  it("reaches a v2 client on the custom:computed channel (the SDK's ThreadStream)", async () => {
    const client = new Client({
      apiUrl: api,
      defaultHeaders: { authorization: `Bearer ${admin.idToken}` },
      callerOptions: { maxRetries: 0 },
    });
    const thread = client.threads.stream({ assistantId: "quarry" });
    let got: { name?: string; payload?: { computed?: Computed } } | undefined;
    const reading = (async () => {
      for await (const ev of (await thread.subscribe({ channels: ["custom:computed"] })) as AsyncIterable<{
        params: { data: typeof got };
      }>) {
        got = ev.params.data;
        break;
      }
    })();
    await thread.run.start({
      input: { messages: [{ type: "human", content: "What was revenue by month in 2025?" }] },
    });
    await thread.values;
    await reading;
    await thread.close();
    expect(got?.name).toBe("computed");
    expect(got?.payload?.computed?.verification).toMatchObject({ status: "verified", by: "verified_query" });
  });

  it("Ask the data team to verify files a proposal; approved, the next identical question is verified", async () => {
    // The SQL only this test approves, so the first answer is written whatever ran before.
    const question = `How many orders came through each channel, ${randomUUID().slice(0, 8)}? [sql:to-verify]`;
    const first = await ask(ann, question);
    expect(first.event!.verification).toEqual({ status: "written" });

    const filed = await call(api, `/threads/${first.threadId}/verify`, {
      method: "POST",
      token: ann.idToken,
      body: { question_id: first.questionId },
    });
    expect(filed.status, filed.text).toBe(201);
    const proposalId = filed.json.proposal_id as string;
    // Asking again files nothing new.
    const again = await call(api, `/threads/${first.threadId}/verify`, {
      method: "POST",
      token: ann.idToken,
      body: { question_id: first.questionId },
    });
    expect(again.status).toBe(200);
    expect(again.json).toMatchObject({ proposal_id: proposalId, status: "proposed" });
    // Someone else's thread: the same 404 as a missing one, nothing filed.
    const foreign = await call(api, `/threads/${first.threadId}/verify`, {
      method: "POST",
      token: bea.idToken,
      body: { question_id: first.questionId },
    });
    expect(foreign.status).toBe(404);

    const listed = (await call(api, "/admin/proposals", { token: admin.idToken })).json as {
      proposals: { id: string; question: string; sql: string }[];
    };
    expect(listed.proposals.find((p) => p.id === proposalId)).toMatchObject({
      question,
      sql: first.event!.sql.at(-1),
    });
    const approved = await call(api, `/admin/proposals/${proposalId}/approve`, {
      method: "POST",
      token: admin.idToken,
    });
    expect(approved.status, approved.text).toBe(200);

    const next = await until(
      () => ask(ann, question),
      (r) => r.event?.verification.status === "verified",
      45_000,
    );
    expect(next.event!.verification).toEqual({ status: "verified", by: "verified_query", names: [question] });
  });

  it("the instance that approved a proposal verifies the next identical question at once", async () => {
    // One instance, the function's app in this process (the emulated function runs several workers).
    const app = await startInProcessApp();
    try {
      // Its SQL is one only this test approves ("[sql:verify-here]"), so the first answer is written.
      const question = `Orders by channel after the first, ${randomUUID().slice(0, 8)}? [sql:verify-here]`;
      // Answered here first, so this instance holds the approved queries as they were before.
      const first = await ask(ann, question, app.url);
      expect(first.event!.verification).toEqual({ status: "written" });
      const filed = await call(app.url, `/threads/${first.threadId}/verify`, {
        method: "POST",
        token: ann.idToken,
        body: { question_id: first.questionId },
      });
      expect(filed.status, filed.text).toBe(201);
      const approved = await call(app.url, `/admin/proposals/${String(filed.json.proposal_id)}/approve`, {
        method: "POST",
        token: admin.idToken,
      });
      expect(approved.status, approved.text).toBe(200);
      const next = await ask(ann, question, app.url);
      expect(next.event!.verification).toEqual({
        status: "verified",
        by: "verified_query",
        names: [question],
      });
    } finally {
      await app.close();
    }
  });

  it("refuses to file an answer that ran no SQL", async () => {
    const hello = await ask(ann, "Hello!");
    expect(hello.event).toBeUndefined();
    const res = await call(api, `/threads/${hello.threadId}/verify`, {
      method: "POST",
      token: ann.idToken,
      body: { question_id: hello.questionId },
    });
    expect(res.status).toBe(400);
    expect(String(res.json.message)).toMatch(/ran no SQL/);
  });
});

describe("the business view", () => {
  let mcp: McpClient | undefined;
  afterAll(async () => {
    await mcp?.close();
  });

  it("is kept per person, defaults to the group's, and refuses what is not a view", async () => {
    const read = async (u: TestUser) => (await call(api, "/me/preferences", { token: u.idToken })).json;
    expect(await read(bea)).toEqual({ view: "analyst", source: "default" });
    const set = await call(api, "/admin/groups/trust-business", {
      method: "PATCH",
      token: admin.idToken,
      body: { defaultView: "business" },
    });
    expect(set.status, set.text).toBe(200);
    expect(set.json).toMatchObject({ name: "trust-business", datasets: ["shop"], defaultView: "business" });
    // Groups are read through the access cache: every instance has the new default after it.
    await accessSeenEverywhere();
    expect(
      await until(
        () => read(bea),
        (p) => p.view === "business",
      ),
    ).toEqual({
      view: "business",
      source: "group",
      group: "trust-business",
    });
    const mine = await call(api, "/me/preferences", {
      method: "PATCH",
      token: ann.idToken,
      body: { view: "analyst" },
    });
    expect(mine.json).toEqual({ view: "analyst", source: "person" });

    for (const body of [{ view: "executive" }, { view: "business", theme: "dark" }]) {
      const bad = await call(api, "/me/preferences", { method: "PATCH", token: bea.idToken, body });
      expect(bad.status).toBe(400);
      expect(bad.json).toMatchObject({ error: "bad_request:body" });
    }
    expect(
      String(
        (
          await call(api, "/me/preferences", {
            method: "PATCH",
            token: bea.idToken,
            body: { view: "executive" },
          })
        ).json.message,
      ),
    ).toMatch(/view/);
    expect(await read(bea)).toMatchObject({ view: "business", source: "group" });
  });

  it("the MCP ask text follows it: business view leaves the SQL out, the structured result keeps how it was computed", async () => {
    const { token } = await makeToken(api, bea.idToken, `trust-${Date.now()}`);
    mcp = await connectMcp(`${api}/mcp`, token);
    const out = (await mcp.callTool({
      name: "ask",
      // Its SQL is one no test approves ("[sql:written]"): the plain question's SQL is the one
      // access.int.ts approves, which rightly makes that answer verified in the full suite.
      arguments: { question: "How many orders are there? [sql:written]" },
    })) as {
      content: { type: string; text: string }[];
      structuredContent: { sql: string[]; computed?: Computed };
    };
    const text = out.content.find((c) => c.type === "text")!.text;
    expect(out.structuredContent.sql.length).toBeGreaterThan(0);
    expect(out.structuredContent.computed?.verification).toEqual({ status: "written" });
    expect(text).toMatch(/How this was computed:\n- Written for this question/);
    expect(text).not.toContain("SQL:");
    // (The stand-in's answer quotes its SQL in words; the SQL block is what business view leaves out.)
    expect(text).not.toContain("```sql");
  });
});

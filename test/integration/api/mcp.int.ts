/**
 * Quarry as an MCP server, through the functions emulator, driven by the official MCP client SDK
 * (`Client` + `StreamableHTTPClientTransport`) with a personal access token: the tools and their
 * annotations, `ask` (the same answer, SQL and rows as the API gives; a follow-up on its thread;
 * progress in phase order; a clarifying question answered by the next ask; cancellation stopping the
 * run like Stop), `run_sql` (rows cut with "N of M rows", a write refused in words, audited as an
 * MCP query with its token), and the tokens themselves (shown once, hashed at rest, 401 with
 * `WWW-Authenticate` when revoked or expired, 403 once the person is no longer a member).
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Firestore, Timestamp } from "@google-cloud/firestore";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
// The SDK line whose latest revision is 2025-06-18: what clients built on it still send.
import { Client as OlderClient } from "mcp-sdk-1-22-0/client/index.js";
import { StreamableHTTPClientTransport as OlderTransport } from "mcp-sdk-1-22-0/client/streamableHttp.js";
import { signUp, type TestUser } from "../../support/auth-emulator";
import { call, sdkClient } from "../../support/api-client";
import { holdClient, HOLD_URL_ENV, type Holds } from "../../support/hold-control";
import { CLARIFYING_CHOICES, CLARIFYING_QUESTION } from "../../support/scripted-model-script";
import { stackEnv } from "../../support/stack-env";
import { accessSeenEverywhere } from "../../support/seed-access";
import { connectMcp, mcpInitialize } from "../../support/mcp-client";

let api: string;
let authUrl: string;
let alice: TestUser;
let token: string;
let db: Firestore;
let holds: Holds;
const open: Client[] = [];

type ToolResult = {
  isError?: boolean;
  content: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
};
type AskResult = {
  thread_id: string;
  status: string;
  answer: string;
  sql: string[];
  result?: { columns: { name: string }[]; rows: Record<string, unknown>[]; note: string; total: number };
  follow_ups: string[];
  choices?: string[];
};

async function connect(bearer: string): Promise<Client> {
  const client = await connectMcp(`${api}/mcp`, bearer);
  open.push(client);
  return client;
}

async function newToken(idToken: string, name = "test", days = 30) {
  const r = await call(api, "/me/tokens", {
    method: "POST",
    token: idToken,
    body: { name, expires_in_days: days },
  });
  expect(r.status, r.text).toBe(201);
  return r.json as { id: string; token: string; name: string; expires_at: string };
}

const askTool = async (client: Client, args: Record<string, unknown>, onprogress?: (m: string) => void) =>
  (await client.callTool(
    { name: "ask", arguments: args },
    undefined,
    onprogress ? { onprogress: (p) => onprogress(String(p.message)) } : {},
  )) as ToolResult;

beforeAll(async () => {
  const stack = stackEnv();
  api = stack.urls.api!;
  authUrl = stack.urls.auth!;
  holds = holdClient(stack.env[HOLD_URL_ENV]);
  alice = await signUp(authUrl);
  token = (await newToken(alice.idToken)).token;
  db = new Firestore({
    projectId: stack.env.GCLOUD_PROJECT,
    host: stack.env.FIRESTORE_EMULATOR_HOST,
    ssl: false,
  });
});

afterAll(async () => {
  await Promise.all(open.map((c) => c.close().catch(() => {})));
  await db?.terminate();
});

describe("personal access tokens", () => {
  it("are shown once, listed without their secret, stored hashed, and validated", async () => {
    const made = await newToken(alice.idToken, "laptop IDE", 7);
    expect(made.token).toMatch(/^qry_[0-9a-f]{16}_[\w-]{43}$/);
    const listed = await call(api, "/me/tokens", { token: alice.idToken });
    expect(listed.status).toBe(200);
    expect((listed.json.tokens as { id: string }[]).find((t) => t.id === made.id)).toMatchObject({
      name: "laptop IDE",
      last_used_at: null,
    });
    // The secret is what follows `qry_<16-hex id>_` (it may itself hold "_").
    const secret = made.token.slice("qry_".length + 16 + 1);
    expect(secret).toHaveLength(43);
    expect(listed.text).not.toContain(secret);
    const stored = (await db.collection("access_tokens").doc(made.id).get()).data()!;
    expect(stored.hash).toBe(createHash("sha256").update(made.token).digest("hex"));
    expect(JSON.stringify(stored)).not.toContain(secret);

    const tooLong = await call(api, "/me/tokens", {
      method: "POST",
      token: alice.idToken,
      body: { name: "x", expires_in_days: 91 },
    });
    expect(tooLong.status).toBe(400);
    expect(String(tooLong.json.message)).toMatch(/at most 90 days/);
    // A token is for /mcp: the API still wants a Firebase ID token.
    const onApi = await call(api, "/me/tokens", { token: made.token });
    expect(onApi.status).toBe(401);
    expect(String(onApi.json.message)).toMatch(/works on \/mcp only/);
  });

  it("a revoked or expired token is refused with 401 and WWW-Authenticate; no token too", async () => {
    const revoked = await newToken(alice.idToken);
    expect((await mcpInitialize(api, revoked.token)).status).toBe(200);
    const del = await call(api, `/me/tokens/${revoked.id}`, { method: "DELETE", token: alice.idToken });
    expect(del.status).toBe(204);
    const again = await call(api, `/me/tokens/${revoked.id}`, { method: "DELETE", token: alice.idToken });
    expect(again.status).toBe(404);
    const r = await mcpInitialize(api, revoked.token);
    expect(r.status).toBe(401);
    expect(r.headers.get("www-authenticate")).toMatch(/^Bearer /);
    const body = (await r.json()) as { error: { message: string; data: { error: string } } };
    expect(body.error.message).toMatch(/revoked or never existed/);
    expect(body.error.data.error).toBe("unauthorized:token");

    const expired = await newToken(alice.idToken);
    await db
      .collection("access_tokens")
      .doc(expired.id)
      .update({ expiresAt: Timestamp.fromMillis(Date.now() - 1000) });
    const e = await mcpInitialize(api, expired.token);
    expect(e.status).toBe(401);
    expect(e.headers.get("www-authenticate")).toMatch(/^Bearer /);
    expect(JSON.stringify(await e.json())).toMatch(/expired/);
    await expect(connect(expired.token)).rejects.toThrow(/401|expired/);

    const none = await fetch(`${api}/mcp`, {
      method: "POST",
      body: "{}",
      headers: { "content-type": "application/json" },
    });
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toMatch(
      /^Bearer realm="quarry"(, resource_metadata="[^"]+", scope="mcp")?$/,
    );
  });

  it("revoking the account's sessions ends the tokens made before it, within the access cache's window", async () => {
    const dana = await signUp(authUrl);
    const before = await newToken(dana.idToken);
    expect((await mcpInitialize(api, before.token)).status).toBe(200);
    // Made a minute ago (revocation is recorded to the second): "sign out everywhere" happens now.
    await db
      .collection("access_tokens")
      .doc(before.id)
      .update({ createdAt: Timestamp.fromMillis(Date.now() - 60_000) });
    const { initializeApp, deleteApp } = await import("firebase-admin/app");
    const { getAuth } = await import("firebase-admin/auth");
    const app = initializeApp({ projectId: stackEnv().env.GCLOUD_PROJECT }, `mcp-revoke-${Date.now()}`);
    try {
      await getAuth(app).revokeRefreshTokens(dana.uid);
    } finally {
      await deleteApp(app);
    }
    await expect
      .poll(async () => (await mcpInitialize(api, before.token)).status, { timeout: 20_000 })
      .toBe(401);
    // Refused by one instance; every other's account cache has let go of the old account after this.
    await accessSeenEverywhere();
    const r = await mcpInitialize(api, before.token);
    expect(r.headers.get("www-authenticate")).toMatch(/^Bearer /);
    expect(JSON.stringify(await r.json())).toMatch(/sessions were revoked/);
  });

  it("a token of someone no longer a member is refused with 403 within the access cache's window", async () => {
    const email = `mcp-outsider-${Date.now()}@outsider.test`;
    const now = new Date().toISOString();
    const member = db.collection("members").doc(email);
    await member.set({ email, role: "member", addedBy: "test", addedAt: now, updatedAt: now });
    const outsider = await signUp(authUrl, email);
    const theirs = await newToken(outsider.idToken);
    expect((await mcpInitialize(api, theirs.token)).status).toBe(200);
    await member.delete();
    await expect
      .poll(async () => (await mcpInitialize(api, theirs.token)).status, { timeout: 20_000 })
      .toBe(403);
    // Refused by one instance; every other's member cache has let go of the entry after this.
    await accessSeenEverywhere();
    const body = (await (await mcpInitialize(api, theirs.token)).json()) as {
      error: { data: { error: string } };
    };
    expect(body.error.data.error).toBe("forbidden:not_member");
  });
});

describe("MCP tools", () => {
  it("lists the five tools, read-only, with input and output schemas", async () => {
    const client = await connect(token);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      "ask",
      "describe_table",
      "list_tables",
      "run_sql",
      "search_context",
    ]);
    for (const t of tools) {
      expect(t.annotations?.readOnlyHint, t.name).toBe(true);
      expect(t.inputSchema.type).toBe("object");
      expect(t.outputSchema?.type, t.name).toBe("object");
    }
    const ask = tools.find((t) => t.name === "ask")!;
    expect(ask.inputSchema.required).toEqual(["question"]);
    expect(Object.keys(ask.inputSchema.properties ?? {})).toEqual(["question", "thread_id", "investigate"]);
  });

  it("list_tables, describe_table and search_context answer with structured content", async () => {
    const client = await connect(token);
    const tables = (await client.callTool({ name: "list_tables", arguments: {} })) as ToolResult;
    const ids = (tables.structuredContent!.tables as { id: string }[]).map((t) => t.id);
    expect(ids).toEqual(expect.arrayContaining(["shop.orders", "shop.customers"]));
    const orders = (await client.callTool({
      name: "describe_table",
      arguments: { table: "shop.orders" },
    })) as ToolResult;
    expect((orders.structuredContent!.columns as { name: string }[]).map((c) => c.name)).toContain(
      "order_id",
    );
    const missing = (await client.callTool({
      name: "describe_table",
      arguments: { table: "shop.nope" },
    })) as ToolResult;
    expect(missing.isError).toBe(true);
    const ctx = (await client.callTool({
      name: "search_context",
      arguments: { query: "revenue" },
    })) as ToolResult;
    expect((ctx.structuredContent!.glossary as { term: string }[]).map((g) => g.term)).toContain("revenue");
    expect((ctx.structuredContent!.rules as string[]).length).toBeGreaterThan(0);
  });

  it("answers both protocol revisions clients send: 2025-11-25 (SDK 1.32.2) and 2025-06-18 (SDK 1.22.0)", async () => {
    const current = await connect(token);
    const older = new OlderClient({ name: "quarry-test-2025-06-18", version: "1.0.0" }, { capabilities: {} });
    const transport = new OlderTransport(new URL(`${api}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    });
    await older.connect(transport);
    try {
      // What each negotiated: its own latest revision, which the server answered with.
      expect(transport.protocolVersion).toBe("2025-06-18");
      expect((current.transport as StreamableHTTPClientTransport).protocolVersion).toBe("2025-11-25");
      const tools = async (c: { listTools(): Promise<{ tools: { name: string }[] }> }) =>
        (await c.listTools()).tools.map((t) => t.name).sort();
      expect(await tools(older)).toEqual(await tools(current));
      const asked = (await older.callTool({
        name: "ask",
        arguments: { question: "How many orders were placed?" },
      })) as ToolResult;
      expect(asked.isError, JSON.stringify(asked.content)).toBeFalsy();
      expect(asked.structuredContent).toMatchObject({ status: "answered" });
      expect((asked.structuredContent as AskResult).sql.at(-1)).toContain("FROM shop.orders");
    } finally {
      await older.close();
    }
  });

  it("ask answers as the API does, with progress in phase order; a follow-up continues the thread", async () => {
    const question = "How many orders were placed?";
    const client = await connect(token);
    const phases: string[] = [];
    const res = await askTool(client, { question }, (m) => phases.push(m));
    expect(res.isError, JSON.stringify(res.content)).toBeFalsy();
    const out = res.structuredContent as AskResult;
    expect(out.status).toBe("answered");
    expect(out.sql.at(-1)).toContain("FROM shop.orders");
    expect(res.content[0].text).toContain(out.answer);

    // The same question through the API: the same answer, SQL and rows.
    const sdk = sdkClient(api, alice);
    const thread = await sdk.threads.create();
    const events: { event: string; data: unknown }[] = [];
    for await (const ev of sdk.runs.stream(thread.thread_id, "quarry", {
      input: { messages: [{ type: "human", content: question }] },
      streamMode: ["custom", "values"],
    }) as AsyncIterable<{ event: string; data: unknown }>)
      events.push(ev);
    const result = events
      .filter((e) => e.event === "custom" && (e.data as { type: string }).type === "result")
      .at(-1)?.data as { sql: string; rows: Record<string, unknown>[]; columns: { name: string }[] };
    const messages = (
      events.filter((e) => e.event === "values").at(-1)?.data as {
        messages: { type: string; content: string }[];
      }
    ).messages;
    expect(out.answer).toBe(messages.filter((m) => m.type === "ai").at(-1)?.content);
    expect(out.sql.at(-1)).toBe(result.sql);
    expect(out.result?.rows).toEqual(result.rows.slice(0, out.result?.rows.length));
    expect(out.result?.columns.map((c) => c.name)).toEqual(result.columns.map((c) => c.name));

    // Planning, then SQL, then the answer, each once in that order.
    const order = ["planning", "running SQL", "writing the answer"].map((p) => phases.indexOf(p));
    expect(
      order.every((i) => i >= 0),
      phases.join(", "),
    ).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);

    const next = await askTool(client, {
      question: "And how many customers are there?",
      thread_id: out.thread_id,
    });
    const follow = next.structuredContent as AskResult;
    expect(follow.thread_id).toBe(out.thread_id);
    expect(follow.status).toBe("answered");
    const state = await sdk.threads.getState(out.thread_id);
    const humans = (state.values as { messages: { type: string; content: string }[] }).messages.filter(
      (m) => m.type === "human",
    );
    expect(humans.map((m) => m.content)).toEqual([question, "And how many customers are there?"]);
    // The thread is in the person's list like any other, titled by its first question.
    const listed = await sdk.threads.search({ limit: 100 });
    expect(listed.find((t) => t.thread_id === out.thread_id)?.metadata).toMatchObject({ title: question });
  });

  it("a clarifying question comes back with its choices; the next ask on the thread answers it", async () => {
    const client = await connect(token);
    const first = (await askTool(client, { question: "How are we doing?" })).structuredContent as AskResult;
    expect(first).toMatchObject({
      status: "asking",
      answer: CLARIFYING_QUESTION,
      choices: CLARIFYING_CHOICES,
    });
    const answered = (await askTool(client, { question: "Number of customers", thread_id: first.thread_id }))
      .structuredContent as AskResult;
    expect(answered.status).toBe("answered");
    expect(answered.sql.at(-1)).toContain("FROM shop.customers");
  });

  it("cancelling an ask stops its run like Stop: the model request is closed, the lease released, the run stopped", async () => {
    const client = await connect(token);
    const key = holds.newKey("mcp-cancel");
    const question = `${holds.answer(key)} How many orders were placed?`;
    const controller = new AbortController();
    const asking = client.callTool({ name: "ask", arguments: { question } }, undefined, {
      signal: controller.signal,
    });
    asking.catch(() => {}); // observed below
    try {
      // The answer's model call has started and waits: only a cancel can end this run now.
      await holds.waitHeld(key);
      controller.abort("stopped by the test");
      await expect(asking).rejects.toThrow();
      const threads = await db.collection("threads").where("owner", "==", alice.uid).get();
      const threadId = threads.docs.find((d) => String(d.get("title")).includes(key))?.id ?? "";
      expect(threadId).not.toBe("");
      await expect
        .poll(async () => (await db.collection("threads").doc(threadId).get()).get("run"), {
          timeout: 20_000,
        })
        .toBeNull();
      // The run ended as stopped (the API's "interrupted" run status), not answered.
      const runs = await sdkClient(api, alice).runs.list(threadId);
      expect(runs.map((r) => r.status)).toEqual(["interrupted"]);
      // And the answer's model request, still held, was closed by the function: the stand-in saw it go.
      await expect.poll(async () => (await holds.calls(key)).at(-1), { timeout: 20_000 }).toBe("aborted");
    } finally {
      await holds.release(key);
    }
  });

  it("list_tables and describe_table count against the per-minute quota: one request cannot spend the metadata API", async () => {
    const capped = await signUp(authUrl);
    const now = new Date().toISOString();
    await db
      .collection("members")
      .doc(capped.email)
      .set({
        email: capped.email,
        role: "member",
        quotas: { questionsPerMinute: 2 },
        addedBy: "test",
        addedAt: now,
        updatedAt: now,
      });
    // The member entry is cached for the access cache's window: every instance sees the cap after it.
    await accessSeenEverywhere();
    const client = await connect((await newToken(capped.idToken)).token);
    let calls = 0;
    for (;;) {
      const r = (await client.callTool({ name: "list_tables", arguments: {} })) as ToolResult;
      calls++;
      if (r.isError) {
        expect(r.content[0].text).toMatch(
          /questions in the last minute; the limit is 2.*\(quota:questions\)/,
        );
        break;
      }
      expect(calls, "the cap of 2 never applied").toBeLessThan(200);
    }
    const described = (await client.callTool({
      name: "describe_table",
      arguments: { table: "shop.orders" },
    })) as ToolResult;
    expect(described.isError).toBe(true);
    expect(described.content[0].text).toMatch(/quota:questions/);
  });

  it("run_sql returns rows with 'N of M rows', refuses a write in words, and is audited as MCP", async () => {
    const client = await connect(token);
    const ok = (await client.callTool({
      name: "run_sql",
      arguments: { sql: "SELECT order_id FROM shop.orders ORDER BY order_id", max_rows: 2 },
    })) as ToolResult;
    expect(ok.isError).toBeFalsy();
    const data = ok.structuredContent as { rows: unknown[]; total: number; note: string };
    expect(data.rows).toHaveLength(2);
    expect(data.total).toBeGreaterThan(2);
    expect(data.note).toBe(`2 of ${data.total.toLocaleString("en-US")} rows`);
    expect(ok.content[0].text).toContain(data.note);

    const write = (await client.callTool({
      name: "run_sql",
      arguments: { sql: "DELETE FROM shop.orders" },
    })) as ToolResult;
    expect(write.isError).toBe(true);
    expect(write.content[0].text).toMatch(/^Error \(refused\): .*SELECT/);

    const tokenId = token.split("_")[1];
    await expect
      .poll(async () => {
        const snap = await db.collection("audit").where("uid", "==", alice.uid).get();
        return snap.docs
          .map((d) => d.data())
          .filter((a) => a.via?.channel === "mcp" && a.via?.tokenId === tokenId)
          .map((a) => a.outcome as string)
          .sort();
      })
      .toEqual(expect.arrayContaining(["ok", "refused"]));
  });
});

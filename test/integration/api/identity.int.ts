/**
 * User identity mode (QUARRY_BQ_IDENTITY=user), end to end on real parts: the function's express
 * app served in this process (on the integration stack's Firestore and Auth emulators), the real
 * `@google-cloud/bigquery` client against the BigQuery REST stand-in — which checks the bearer
 * token of every call, refuses tables and jobs like IAM and filters rows per caller like a row
 * access policy — and Google's OAuth endpoints as a loopback stand-in. The model is the Vertex AI
 * stand-in with a script that lists tables, then queries.
 */
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import http from "node:http";
import { randomBytes, randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import { deleteApp, initializeApp, type App } from "firebase-admin/app";
import { getFirestore, type DocumentReference, type Firestore } from "firebase-admin/firestore";
import type { Client } from "@langchain/langgraph-sdk";
import { INTEGRATION_ACCESS_ENV, signUp, type TestUser } from "../../support/auth-emulator";
import { call, sdkClient } from "../../support/api-client";
import { BigQueryStandin, type RestField } from "../../support/bigquery-standin";
import { GoogleOAuthStandin } from "../../support/google-oauth-standin";
import { currentTurnOf, questionOf, type Script } from "../../support/scripted-model-script";
import { stackEnv } from "../../support/stack-env";
import { TARGETS_CSV } from "../../support/uploads";
import { startVertexStandin, type VertexStandin } from "../../support/vertex-standin";

const PROJECT = "analytics-prj";
const SERVICE_ACCOUNT = "quarry@analytics-prj.iam.gserviceaccount.com";
const PAGE = "http://page.test";
const ORDERS = { projectId: PROJECT, datasetId: "shop", tableId: "orders" };
const SALARIES = { projectId: PROJECT, datasetId: "finance", tableId: "salaries" };
const FIELDS: RestField[] = [
  { name: "region", type: "STRING" },
  { name: "amount", type: "INTEGER" },
];
const ROWS = [
  ["north", 10],
  ["south", 20],
  ["north", 5],
];
const SQL = `SELECT region, amount FROM \`${PROJECT}.shop.orders\``;
const BILLED = 10_485_760;

const oauth = new GoogleOAuthStandin("quarry-test.apps.googleusercontent.com", "test-client-secret");
const bq = new BigQueryStandin();
let vertex: VertexStandin;
let server: http.Server;
let url: string;
let admin: App;
let db: Firestore;
let alice: TestUser, bob: TestUser, carol: TestUser, dave: TestUser;
const logs: string[] = [];

/** Lists tables, then queries the orders; "[revoke]" revokes the asker's grant at Google first, "[expire]" expires their tokens. */
const script: Script = (req) => {
  const usage = { input: 100, output: 10 };
  const q = questionOf(req);
  const turn = currentTurnOf(req);
  const used = turn.filter((t) => t.role === "tool").map((t) => t.toolName);
  if (req.role === "planner") {
    if (!used.includes("list_tables")) return { toolCalls: [{ name: "list_tables", args: {} }], usage };
    const upload = /\[upload:([\w.-]+)\]/.exec(q)?.[1];
    if (upload && !used.includes("bq_query"))
      return { toolCalls: [{ name: "bq_query", args: { sql: `SELECT * FROM \`${upload}\`` } }], usage };
    if (!used.includes("bq_query")) {
      const who = /as (\S+@\S+)/.exec(q)?.[1];
      if (who && q.includes("[revoke]")) oauth.revokeGrantsOf(who);
      if (who && (q.includes("[revoke]") || q.includes("[expire]"))) oauth.expireAccessTokens(who);
      return { toolCalls: [{ name: "bq_query", args: { sql: SQL } }], usage };
    }
    return { text: "Done.", usage };
  }
  if (req.role === "generator") {
    const rows = /Rows: (\d+)/.exec(req.system)?.[1];
    return { text: `Found ${rows ?? "no"} rows.`, usage };
  }
  if (req.role === "verifier") return { text: "YES", usage };
  return { text: "Summary.", usage };
};

beforeAll(async () => {
  const stack = stackEnv();
  const auth = stack.urls.auth!;
  const stamp = Date.now();
  [alice, bob, carol, dave] = await Promise.all(
    ["alice", "bob", "carol", "dave"].map((n) => signUp(auth, `${n}-${stamp}@example.com`)),
  );
  await oauth.start();
  const readers = [alice, bob, carol].map((u) => u.email).concat(SERVICE_ACCOUNT);
  bq.requireBearer((t) => oauth.principalOf(t), { anonymous: SERVICE_ACCOUNT })
    .allowJobs([alice.email, bob.email, SERVICE_ACCOUNT])
    .addTable({ ...ORDERS, fields: FIELDS, rows: ROWS, readers })
    .addTable({ ...SALARIES, fields: FIELDS, rows: [["x", 1]], readers: [alice.email, SERVICE_ACCOUNT] })
    .onQuery({
      match: (sql) => sql.includes("shop.orders"),
      referencedTables: [ORDERS],
      fields: FIELDS,
      rows: ROWS,
      totalBytesProcessed: 48,
      totalBytesBilled: BILLED,
      // Bob sees the south only, as a row access policy would let him.
      rowAccess: { [bob.email]: (row) => row[0] === "south" },
    });
  await bq.start();
  vertex = await startVertexStandin({ script, trust: true });
  server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  for (const k of ["QUARRY_BQ_IDENTITY"]) delete process.env[k];
  Object.assign(process.env, {
    ...INTEGRATION_ACCESS_ENV,
    QUARRY_RUN_LEASE_SECONDS: "10",
    VERTEX_AI_EMULATOR_HOST: vertex.host,
    QUARRY_WAREHOUSE: "bigquery",
    BIGQUERY_EMULATOR_HOST: bq.url.replace("http://", ""),
    QUARRY_BQ_PROJECT: PROJECT,
    QUARRY_BQ_DATASETS: `${PROJECT}.shop,${PROJECT}.finance`,
    QUARRY_BQ_IDENTITY: "user",
    QUARRY_BQ_UPLOADS_DATASET: `${PROJECT}.quarry_uploads`,
    QUARRY_OAUTH_CLIENT_ID: oauth.clientId,
    QUARRY_OAUTH_CLIENT_SECRET: oauth.clientSecret,
    QUARRY_TOKEN_KEY: randomBytes(32).toString("base64"),
    QUARRY_OAUTH_AUTHORIZATION_URL: oauth.authorizationUrl,
    QUARRY_OAUTH_TOKEN_URL: oauth.tokenUrl,
    QUARRY_OAUTH_REVOKE_URL: oauth.revokeUrl,
    QUARRY_OAUTH_REDIRECT_URI: `${url}/auth/bigquery/callback`,
    QUARRY_CORS_ORIGINS: PAGE,
  });
  // Every line the function logs, to check no token is ever in one.
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream);
    stream.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
      logs.push(String(chunk));
      return write(chunk, ...rest);
    }) as typeof stream.write;
  }
  for (const level of ["log", "info", "warn", "error", "debug"] as const) {
    const original = console[level].bind(console);
    console[level] = (...args: unknown[]) => {
      logs.push(args.map(String).join(" "));
      original(...args);
    };
  }
  const { createApp } = await import("../../../functions/src/app");
  server.on("request", createApp());
  admin = initializeApp({ projectId: stack.env.GCLOUD_PROJECT }, `identity-${stamp}`);
  db = getFirestore(admin);
});

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  await vertex?.stop();
  await bq.stop();
  await oauth.stop();
  if (admin) await deleteApp(admin);
});

/** The page's Connect BigQuery, as the browser follows it: start, Google's consent, the callback. */
async function connect(user: TestUser): Promise<URL> {
  const started = await call(url, "/auth/bigquery/start", {
    method: "POST",
    token: user.idToken,
    body: { returnTo: `${PAGE}/t/abc` },
  });
  expect(started.status).toBe(200);
  const consent = await fetch(String(started.json.url), { redirect: "manual" });
  expect(consent.status).toBe(302);
  const callback = await fetch(consent.headers.get("location")!, { redirect: "manual" });
  expect(callback.status).toBe(303);
  return new URL(callback.headers.get("location")!);
}

type Ev = { event: string; data: unknown };
type Custom = {
  type: string;
  rows?: unknown[];
  bytesHidden?: boolean;
  bytesBilled?: number;
  category?: string;
  message?: string;
};

/** Asks on a new (or given) thread; the run's custom events and its error, if any. */
async function ask(client: Client, question: string, threadId?: string) {
  const thread = threadId ?? (await client.threads.create()).thread_id;
  const custom: Custom[] = [];
  let error: { error?: string; message?: string } | undefined;
  for await (const ev of client.runs.stream(thread, "quarry", {
    input: { messages: [{ type: "human", content: question }] },
    streamMode: ["custom"],
  }) as AsyncIterable<Ev>) {
    if (ev.event === "custom") custom.push(ev.data as Custom);
    if (ev.event === "error") error = ev.data as typeof error;
  }
  return {
    thread,
    result: custom.find((c) => c.type === "result"),
    toolErrors: custom.filter((c) => c.type === "tool_error"),
    error,
  };
}

const me = async (u: TestUser) => (await call(url, "/me", { token: u.idToken })).json;

describe("BigQuery as the signed-in person", () => {
  it("connects through Google's consent; a refusal, another Google account or an unticked BigQuery scope connects nothing", async () => {
    expect((await call(url, "/client-config")).json.bigqueryIdentity).toBe("user");
    expect((await me(alice)).bigquery).toEqual({ identity: "user", connected: false });
    // Before connecting, the pages show no table: the group scope is not what BigQuery lets them read.
    expect((await me(alice)).scope).toEqual({ all: false, datasets: [] });
    expect((await call(url, "/first-screen", { token: alice.idToken })).text).not.toMatch(/orders|salaries/);
    // Before connecting, a question is refused before anything runs, with the page's action.
    const before = await call(url, "/threads/" + randomUUID() + "/runs/stream", {
      method: "POST",
      token: alice.idToken,
      body: {
        assistant_id: "quarry",
        input: { messages: [{ type: "human", content: "sales?" }] },
        if_not_exists: "create",
      },
    });
    expect([before.status, before.json.error]).toEqual([403, "auth:bigquery_consent"]);
    expect(String(before.json.message)).toMatch(/Connect BigQuery/);

    oauth.refuseNext = true;
    expect(Object.fromEntries((await connect(carol)).searchParams)).toEqual({
      bigquery: "error",
      reason: "denied",
    });
    oauth.browserAccount = "mallory@example.com";
    expect((await connect(carol)).searchParams.get("reason")).toBe("wrong_account");
    oauth.browserAccount = undefined;
    expect(oauth.hasGrant("mallory@example.com")).toBe(false); // the grant made was given back
    oauth.withoutBigQueryNext = true;
    expect((await connect(carol)).searchParams.get("reason")).toBe("scope");
    expect((await me(carol)).bigquery).toEqual({ identity: "user", connected: false });
    // A forged state is refused.
    const forged = await fetch(`${url}/auth/bigquery/callback?code=x&state=${"a".repeat(40)}.b`, {
      redirect: "manual",
    });
    expect(forged.status).toBe(400);

    for (const u of [alice, bob, carol]) {
      const back = await connect(u);
      expect(`${back.origin}${back.pathname}?${back.searchParams}`).toBe(`${PAGE}/t/abc?bigquery=connected`);
      expect((await me(u)).bigquery).toEqual({ identity: "user", connected: true, email: u.email });
    }
    const stored = (await db.doc(`bigquery_credentials/${alice.uid}`).get()).data()!;
    expect(stored.email).toBe(alice.email);
    // Sealed: ciphertext, nonce and tag only, no token in the clear.
    expect(Object.keys(stored.refreshToken).sort()).toEqual(["data", "iv", "tag"]);
    expect(JSON.stringify(stored)).not.toMatch(/1\/\/refresh\./);
  });

  it("two people asking the same question get different rows, each with their own token; the cost hidden by row-level security is unknown, not 0", async () => {
    bq.requests.length = 0;
    const [a, b] = await Promise.all([
      ask(sdkClient(url, alice), "What were sales by region?"),
      ask(sdkClient(url, bob), "What were sales by region?"),
    ]);
    expect(a.error).toBeUndefined();
    expect(b.error).toBeUndefined();
    expect(a.result?.rows).toHaveLength(3);
    expect(b.result?.rows).toEqual([{ region: "south", amount: 20 }]);
    expect(a.result?.bytesHidden).toBeUndefined();
    expect(b.result).toMatchObject({ bytesHidden: true, bytesBilled: BILLED });
    // Every job call (dry run, insert, results, status) carried the asker's own token; the service
    // account's (no token here) never ran a job, read rows, or saw a result.
    const jobCalls = bq.requests.filter((r) => /\/(jobs|queries)/.test(r.path));
    expect(jobCalls.length).toBeGreaterThan(4);
    expect(new Set(jobCalls.map((r) => r.principal))).toEqual(new Set([alice.email, bob.email]));
    expect(
      bq.requests.filter((r) => r.principal === SERVICE_ACCOUNT && /\/(jobs|queries)|\/data$/.test(r.path)),
    ).toEqual([]);
    for (const r of jobCalls) expect(String(r.headers.authorization)).toMatch(/^Bearer ya29\.access\./);
    // Jobs are labelled as the person's; their quota counts what BigQuery billed.
    const inserts = bq.inserts().filter((i) => !i.configuration.dryRun);
    expect(inserts.map((i) => i.configuration.labels.quarry_user).sort()).toEqual(
      [alice.uid, bob.uid].map((u) => u.toLowerCase()).sort(),
    );
    expect(((await me(bob)).quotas as { bytesPerDay: { used: number } }).bytesPerDay.used).toBe(BILLED);
  });

  it("lists only the tables a person's own credentials can read", async () => {
    const listed = async (u: TestUser) => {
      const { thread } = await ask(sdkClient(url, u), "What were sales by region?");
      const state = await sdkClient(url, u).threads.getState(thread);
      const msgs = (
        state.values as {
          messages: { type: string; name?: string; artifact?: { tables?: { id: string }[] } }[];
        }
      ).messages;
      return msgs
        .find((m) => m.type === "tool" && m.name === "list_tables")
        ?.artifact?.tables?.map((t) => t.id);
    };
    expect(await listed(alice)).toEqual([`${PROJECT}.shop.orders`, `${PROJECT}.finance.salaries`]);
    expect(await listed(bob)).toEqual([`${PROJECT}.shop.orders`]);
    // The pages say the same: what each person's own credentials can read.
    const screen = async (u: TestUser) => (await call(url, "/first-screen", { token: u.idToken })).text;
    expect(await screen(alice)).toContain("salaries");
    expect(await screen(bob)).not.toContain("salaries");
    expect(await screen(bob)).toContain("orders");
    expect(JSON.stringify((await me(bob)).scope)).not.toContain("finance");
  });

  it("a person BigQuery refuses gets access_denied worded for them, and nothing runs as the service account", async () => {
    bq.requests.length = 0;
    const c = await ask(sdkClient(url, carol), "What were sales by region?");
    expect(c.result).toBeUndefined();
    expect(c.toolErrors[0]).toMatchObject({ category: "access_denied" });
    expect(c.toolErrors[0].message).toMatch(/your own Google account.*ask the data's owner/);
    expect(bq.requests.filter((r) => r.path.endsWith("/jobs")).map((r) => r.principal)).toEqual(
      expect.arrayContaining([carol.email]),
    );
    expect(bq.requests.some((r) => r.principal === SERVICE_ACCOUNT && r.path.endsWith("/jobs"))).toBe(false);
  });

  it("an access token Google stops accepting mid-conversation is replaced, and the conversation goes on", async () => {
    const client = sdkClient(url, alice);
    const first = await ask(client, "What were sales by region?");
    const refreshes = oauth.grants.filter((g) => g.type === "refresh_token" && g.ok).length;
    bq.requests.length = 0;
    // Google expires Alice's token after the run started with it: BigQuery answers 401 mid-run.
    const second = await ask(client, `Again, as ${alice.email} [expire]`, first.thread);
    expect(second.error).toBeUndefined();
    expect(second.result?.rows).toHaveLength(3);
    expect(oauth.grants.filter((g) => g.type === "refresh_token" && g.ok).length).toBe(refreshes + 1);
    expect(bq.requests.some((r) => r.principal === undefined)).toBe(true); // the refused call
  });

  it("revoked consent ends the run in-band with auth:bigquery_consent, and the next question is refused before it runs", async () => {
    const client = sdkClient(url, bob);
    const run = await ask(client, `Sales, as ${bob.email} [revoke]`);
    expect(run.result).toBeUndefined();
    expect(run.error).toMatchObject({ error: "auth:bigquery_consent" });
    expect(run.error?.message).toMatch(/Connect BigQuery/);
    expect((await me(bob)).bigquery).toEqual({ identity: "user", connected: false });
    const next = await call(url, `/threads/${run.thread}/runs/stream`, {
      method: "POST",
      token: bob.idToken,
      body: { assistant_id: "quarry", input: { messages: [{ type: "human", content: "sales?" }] } },
    });
    expect([next.status, next.json.error]).toEqual([403, "auth:bigquery_consent"]);
    expect(bq.requests.some((r) => r.principal === SERVICE_ACCOUNT && /\/(jobs|queries)/.test(r.path))).toBe(
      false,
    );
  });

  it("a background run in user mode completes with no page open, on a token minted from the stored grant", async () => {
    oauth.expireAccessTokens(alice.email); // whatever this instance holds no longer works
    const client = sdkClient(url, alice);
    const thread = (await client.threads.create()).thread_id;
    const runId = randomUUID();
    const { runStore } = await import("../../../functions/src/runs/runtime");
    const { runInBackground } = await import("../../../functions/src/runs/background");
    await (await runStore()).createQueued(thread, runId, { strategy: "reject", uid: alice.uid });
    await runInBackground({
      threadId: thread,
      uid: alice.uid,
      runId,
      body: { assistant_id: "quarry", input: { messages: [{ type: "human", content: "Sales by region?" }] } },
      identity: { email: alice.email, emailVerified: true },
    });
    expect((await client.runs.get(thread, runId)).status).toBe("success");
    const state = await client.threads.getState(thread);
    const last = (state.values as { messages: { type: string; content: unknown }[] }).messages.at(-1);
    expect(last?.content).toBe("Found 3 rows.");
  });

  it("an uploaded file is loaded and read with the person's own token, labelled and expiring; another person cannot name it", async () => {
    // (Bob's grant was revoked above: Carol is the other person here.)
    const thread = randomUUID();
    const up = await call(url, `/threads/${thread}/files?name=targets.csv`, {
      method: "POST",
      token: alice.idToken,
      rawBody: TARGETS_CSV,
      headers: { "content-type": "text/csv" },
    });
    expect(up.status, up.text).toBe(201);
    const table = String((up.json.file as { table: string }).table);
    const [project, dataset, tableId] = table.split(".");
    expect([project, dataset]).toEqual([PROJECT, "quarry_uploads"]);
    // The load job by media upload, as alice, into a table she made with its schema, labels and expiration.
    const load = bq.loads().at(-1)!;
    expect(load.principal).toBe(alice.email);
    expect(load.jobConfig.load).toMatchObject({
      sourceFormat: "PARQUET",
      createDisposition: "CREATE_NEVER",
      writeDisposition: "WRITE_EMPTY",
      destinationTable: { projectId: PROJECT, datasetId: "quarry_uploads", tableId },
    });
    expect(load.bytes.subarray(0, 4).toString()).toBe("PAR1");
    const made = bq.table(PROJECT, "quarry_uploads", tableId)!;
    expect(made.createdBy).toBe(alice.email);
    expect(made.fields.map((f) => [f.name, f.type])).toEqual([
      ["month", "STRING"],
      ["target", "INT64"],
    ]);
    expect(made.labels).toMatchObject({ app: "quarry", quarry_user: alice.uid.toLowerCase() });
    const days = (Number(made.expirationTime) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(6.9);
    expect(days).toBeLessThanOrEqual(7);

    // Alice's question reads it with her token; Carol naming it is refused before BigQuery sees the SQL.
    const ref = { projectId: PROJECT, datasetId: "quarry_uploads", tableId };
    bq.onQuery({
      match: (sql) => sql.includes(tableId),
      referencedTables: [ref],
      fields: [
        { name: "month", type: "STRING" },
        { name: "target", type: "INTEGER" },
      ],
      rows: [["2025-01", 550000]],
      totalBytesProcessed: 24,
      totalBytesBilled: 10_485_760,
    });
    bq.requests.length = 0;
    const mine = await ask(sdkClient(url, alice), `[upload:${table}] my targets`, thread);
    expect(mine.error).toBeUndefined();
    expect(mine.result?.rows).toEqual([{ month: "2025-01", target: 550000 }]);
    const reads = bq.requests.filter((r) => JSON.stringify(r.body ?? "").includes(tableId));
    expect(reads.length).toBeGreaterThan(0);
    expect(reads.every((r) => r.principal === alice.email)).toBe(true);
    bq.requests.length = 0;
    const theirs = await ask(sdkClient(url, carol), `[upload:${table}] her targets`);
    expect(theirs.result).toBeUndefined();
    expect(theirs.toolErrors[0]?.message).toMatch(/not found|does not exist|not available/i);
    expect(bq.requests.filter((r) => JSON.stringify(r.body ?? "").includes(tableId))).toEqual([]);

    // Deleting the conversation drops the table (as alice).
    expect((await call(url, `/threads/${thread}`, { method: "DELETE", token: alice.idToken })).status).toBe(
      204,
    );
    expect(bq.table(PROJECT, "quarry_uploads", tableId)).toBeUndefined();
  });

  it("disconnecting revokes the grant at Google; no token is in any stored document or log line", async () => {
    expect((await call(url, "/auth/bigquery", { method: "DELETE", token: alice.idToken })).status).toBe(200);
    expect(oauth.hasGrant(alice.email)).toBe(false);
    expect((await me(alice)).bigquery).toEqual({ identity: "user", connected: false });
    // Before connecting, the pages show no table: the group scope is not what BigQuery lets them read.
    expect((await me(alice)).scope).toEqual({ all: false, datasets: [] });
    expect((await call(url, "/first-screen", { token: alice.idToken })).text).not.toMatch(/orders|salaries/);
    // Someone who never connected (and service mode's routes) still answer.
    expect((await me(dave)).bigquery).toEqual({ identity: "user", connected: false });

    expect(oauth.issued.length).toBeGreaterThan(5);
    const stored: string[] = [];
    const walk = async (refs: DocumentReference[]) => {
      for (const ref of refs) {
        const snap = await ref.get();
        if (snap.exists)
          stored.push(
            JSON.stringify(snap.data(), (_k, v: unknown) => {
              // Checkpoints hold bytes: searched as text (Buffer's toJSON runs before this).
              const b = v as { type?: string; data?: number[] } | null;
              return b?.type === "Buffer" && Array.isArray(b.data)
                ? Buffer.from(b.data).toString("latin1")
                : v;
            }),
          );
        for (const sub of await ref.listCollections()) await walk(await sub.listDocuments());
      }
    };
    for (const col of await db.listCollections()) await walk(await col.listDocuments());
    expect(stored.length).toBeGreaterThan(20);
    const everything = stored.join("\n") + logs.join("");
    expect(everything).toContain(alice.uid); // the scan reads what the runs wrote
    expect(logs.join("")).toContain("BigQuery consent refused by Google"); // and what the function logged
    for (const t of oauth.issued) expect(everything.includes(t)).toBe(false);
    expect(everything).not.toMatch(/ya29\.access\.|1\/\/refresh\./);
  });
});

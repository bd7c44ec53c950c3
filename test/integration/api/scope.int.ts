/**
 * Data scope through the functions emulator, on a stack with two datasets (`shop`, the sample, and
 * `finance.salaries`, a file): Ann's group sees `shop`, Bob's `finance`. Each asks about the
 * other's data; what the model stand-in was shown is read back (the hold server keeps its record),
 * so the test can tell that no table name, column or stored value of the other dataset reached a
 * prompt, a tool result, a follow-up, the first screen or a thread's search values — and that SQL
 * naming it is refused and audited under the person's email. An admin's same question is the
 * control: it does see `finance.salaries`.
 */
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Firestore } from "@google-cloud/firestore";
import { INTEGRATION_ACCESS_ENV, signUp, type TestUser } from "../../support/auth-emulator";
import { call, sdkClient } from "../../support/api-client";
import { FINANCE_SALARIES_CSV, FINANCE_WORDS } from "../../support/finance";
import { holdClient, HOLD_URL_ENV, type Holds } from "../../support/hold-control";
import { SCRIPTED_FOLLOW_UPS } from "../../support/api-script";
import { accessSeenEverywhere, seedAccess, until } from "../../support/seed-access";
import { stackEnv } from "../../support/stack-env";
import { connectMcp, makeToken } from "../../support/mcp-client";

let api: string;
let admin: TestUser;
let ann: TestUser;
let bob: TestUser;
let nobody: TestUser;
let db: Firestore;
let holds: Holds;
const GROUPS = { "scope-shop": ["shop"], "scope-finance": ["finance"] };

/** The words of `finance.salaries` (name, columns, values) found in `text`, case-insensitive. */
const financeIn = (text: string) => FINANCE_WORDS.filter((w) => text.toLowerCase().includes(w.toLowerCase()));
const me = async (u: TestUser) =>
  (await call(api, "/me", { token: u.idToken })).json as { scope: { datasets: string[] } };

/** Asks in a new thread and waits for the answer; returns the thread's state values. */
async function ask(u: TestUser, question: string) {
  const client = sdkClient(api, u);
  const thread = await client.threads.create();
  await client.runs.wait(thread.thread_id, "quarry", {
    input: { messages: [{ type: "human", content: question }] },
  });
  const state = await client.threads.getState(thread.thread_id);
  return { threadId: thread.thread_id, values: state.values as { messages: Record<string, unknown>[] } };
}

/** The prompts the model stand-in received for a question carrying `marker`. */
async function promptsOf(marker: string): Promise<string[]> {
  const prompts = await holds.prompts(marker);
  expect(prompts.length, `no model request carried ${marker}`).toBeGreaterThan(0);
  // The person's own question is theirs to see: only what Quarry added is checked.
  return prompts.map((p) => p.split(marker).join(""));
}

beforeAll(async () => {
  const stack = stackEnv();
  api = stack.urls.api!;
  holds = holdClient(stack.env[HOLD_URL_ENV]);
  // An admin of the members list (access.int.ts signs QUARRY_ADMINS' address up once per stack).
  [admin, ann, bob, nobody] = await Promise.all([1, 2, 3, 4].map(() => signUp(stack.urls.auth!)));
  db = new Firestore({
    projectId: stack.env.GCLOUD_PROJECT,
    host: stack.env.FIRESTORE_EMULATOR_HOST,
    ssl: false,
  });
  await seedAccess(db, GROUPS, [
    [admin, "admin", []],
    [ann, "member", ["scope-shop"]],
    [bob, "member", ["scope-finance"]],
  ]);
  // The function reads groups through a short cache: wait until it sees them.
  await until(
    () => me(ann),
    (m) => m.scope.datasets.join() === "shop",
  );
}, 120_000);

afterAll(async () => {
  if (db) {
    for (const name of Object.keys(GROUPS)) await db.collection("groups").doc(name).delete();
    // Later files run with no groups: every instance's cache lets go of them, and one shows it.
    await accessSeenEverywhere();
    await until(
      () => me(nobody),
      (m) => m.scope.datasets.includes("shop") && m.scope.datasets.includes("finance"),
    );
    await db.terminate();
  }
}, 60_000);

describe("data scope", () => {
  it("tells each person what they can ask about, and a person in no group that they have none", async () => {
    expect((await me(ann)).scope.datasets).toEqual(["shop"]);
    expect((await me(bob)).scope.datasets).toEqual(["finance"]);
    expect((await me(admin)).scope.datasets).toEqual(expect.arrayContaining(["shop", "finance"]));
    expect((await me(nobody)).scope.datasets).toEqual([]);
    const client = sdkClient(api, nobody);
    const thread = await client.threads.create();
    const res = await call(api, `/threads/${thread.thread_id}/runs/wait`, {
      method: "POST",
      token: nobody.idToken,
      body: { assistant_id: "quarry", input: { messages: [{ type: "human", content: "How many orders?" }] } },
    });
    expect(res.status).toBe(403);
    expect(res.json).toMatchObject({ error: "forbidden:no_scope" });
    expect(String(res.json.message)).toMatch(/not in any group.*data-team@example\.com/);
  });

  it("never shows a person the other dataset: prompts, list_tables, follow-ups, search values", async () => {
    const question = "How does pay vary across levels? [follow-ups]";
    const control = `[m-${randomUUID()}]`;
    await ask(admin, `${question} ${control}`);
    // The control: an admin's prompts do show finance.salaries (this test could fail).
    expect(financeIn((await promptsOf(control)).join("\n"))).toEqual(
      expect.arrayContaining(["salaries", "grade"]),
    );

    const marker = `[m-${randomUUID()}]`;
    const asked = await ask(ann, `${question} ${marker}`);
    const prompts = await promptsOf(marker);
    // Planner and generator prompts, with list_tables' answer in them.
    expect(prompts.join("\n")).toContain("list_tables");
    expect(prompts.join("\n")).toContain("shop.orders");
    expect(financeIn(prompts.join("\n"))).toEqual([]);
    // And Bob's prompts hold nothing of shop.
    const bobMarker = `[m-${randomUUID()}]`;
    // (The model stand-in queries finance, so no shop name comes from the model's own SQL.)
    await ask(bob, `How does pay vary across levels? [sql:salaries] ${bobMarker}`);
    const bobs = (await promptsOf(bobMarker)).join("\n");
    expect(bobs).toContain("finance.salaries");
    expect(bobs).not.toMatch(/shop\.|order_items|web_events/);
    const tool = asked.values.messages.find((m) => m.type === "tool" && m.name === "list_tables");
    expect(financeIn(JSON.stringify(tool))).toEqual([]);
    // The follow-up naming `grade` is not offered to Ann.
    const answer = asked.values.messages.at(-1) as { response_metadata?: { quarry_suggestions?: string[] } };
    expect(answer.response_metadata?.quarry_suggestions).toEqual([SCRIPTED_FOLLOW_UPS[0]]);
    const found = await call(api, "/threads/search", { method: "POST", token: ann.idToken, body: {} });
    expect(financeIn(found.text)).toEqual([]);
    const first = await call(api, "/first-screen", { token: ann.idToken });
    expect(financeIn(first.text)).toEqual([]);
    expect(first.text).toContain("orders");
  });

  it("answers describe_table of the other dataset like a table that does not exist", async () => {
    const out = async (u: TestUser, table: string) => {
      const { values } = await ask(u, `What columns are there? [describe:${table}]`);
      return JSON.stringify(values.messages.find((m) => m.type === "tool")?.content);
    };
    const hidden = await out(ann, "finance.salaries");
    const missing = await out(ann, "finance.nothing");
    expect(hidden).toBe(missing.replace("finance.nothing", "finance.salaries"));
    expect(financeIn(hidden.replace("finance.salaries", ""))).toEqual([]);
    // Bob sees it.
    expect(await out(bob, "finance.salaries")).toContain("grade");
  });

  it("refuses SQL naming the other dataset as not found, and audits it as a refusal under the email", async () => {
    const marker = `[m-${randomUUID()}]`;
    const { values } = await ask(ann, `Average pay by level [sql:salaries] ${marker}`);
    const tool = values.messages.find((m) => m.type === "tool") as {
      content: string;
      artifact: { category: string };
    };
    expect(tool.artifact.category).toBe("not_found");
    expect(financeIn(tool.content.replace(/finance\.salaries|salaries|finance/g, ""))).toEqual([]);
    expect(tool.content).not.toMatch(/scope|grade|Principal/i);
    const audit = async () =>
      (
        (
          await call(api, `/admin/audit?person=${encodeURIComponent(ann.email)}&limit=50`, {
            token: admin.idToken,
          })
        ).json as {
          entries: { kind: string; email: string; outcome: string; error?: { category: string } }[];
        }
      ).entries.filter((e) => e.kind === "query" && e.error?.category === "out_of_scope");
    await expect.poll(async () => (await audit()).length).toBe(1);
    expect((await audit())[0]).toMatchObject({ email: ann.email, outcome: "refused" });
    // Bob's same question runs and gets the rows.
    const bobs = await ask(bob, "Average pay by level [sql:salaries]");
    const rows = bobs.values.messages.find((m) => m.type === "tool") as { artifact: { kind: string } };
    expect(rows.artifact.kind).toBe("query");
  });

  it("through MCP too: list_tables, describe_table, run_sql and search_context keep to the person's scope", async () => {
    const client = await connectMcp(`${api}/mcp`, (await makeToken(api, ann.idToken, "scope test", 1)).token);
    try {
      type Result = {
        isError?: boolean;
        content: { text?: string }[];
        structuredContent?: Record<string, unknown>;
      };
      const tool = async (name: string, args: Record<string, unknown> = {}) =>
        (await client.callTool({ name, arguments: args })) as Result;
      const text = (r: Result) => r.content.map((c) => c.text ?? "").join("\n");
      const tables = await tool("list_tables");
      const ids = (tables.structuredContent!.tables as { id: string }[]).map((t) => t.id);
      expect(ids.length).toBeGreaterThan(0);
      expect(ids.every((id) => id.split(".").includes("shop"))).toBe(true);
      expect(financeIn(text(tables))).toEqual([]);
      // The other dataset's table reads exactly like one that does not exist.
      const hidden = await tool("describe_table", { table: "finance.salaries" });
      const missing = await tool("describe_table", { table: "finance.nothing" });
      expect(hidden.isError).toBe(true);
      expect(text(hidden)).toBe(text(missing).replace("finance.nothing", "finance.salaries"));
      const sql = await tool("run_sql", {
        sql: "SELECT grade, AVG(salary) AS pay FROM finance.salaries GROUP BY grade",
      });
      expect(sql.isError).toBe(true);
      expect(text(sql)).toMatch(/not found|does not exist/i);
      expect(financeIn(text(sql).replace(/finance\.salaries|salaries|finance/g, ""))).toEqual([]);
      const context = await tool("search_context", { query: "salary grade pay" });
      expect(financeIn(text(context))).toEqual([]);
      // Bob's token sees the table (this test could fail).
      const bobs = await connectMcp(`${api}/mcp`, (await makeToken(api, bob.idToken, "scope test", 1)).token);
      const seen = (await bobs.callTool({
        name: "describe_table",
        arguments: { table: "finance.salaries" },
      })) as Result;
      await bobs.close();
      expect(text(seen)).toContain("grade");
    } finally {
      await client.close();
    }
  });

  it("npm run context -- --as <email> prints only what that person's planner gets", async () => {
    const question = "How does pay vary across levels?";
    const asAnn = await contextCommand(question, ann.email);
    expect(asAnn).toContain("shop.");
    expect(financeIn(asAnn)).toEqual([]);
    const asBob = await contextCommand(question, bob.email);
    expect(asBob).toContain("finance.salaries");
    // Nothing of shop either: not even an example in the tools' descriptions.
    expect(asBob).not.toMatch(/shop\./);
  });
});

/** `npm run context -- --as <email> <question>` against the stack's Firestore, as a developer runs it. */
function contextCommand(question: string, as: string): Promise<string> {
  const { env } = stackEnv();
  return new Promise((resolve, reject) =>
    execFile(
      process.execPath,
      ["--import", "tsx", "scripts/context.ts", "--as", as, question],
      {
        cwd: path.resolve(__dirname, "../../.."),
        env: {
          ...process.env,
          ...INTEGRATION_ACCESS_ENV,
          QUARRY_WAREHOUSE: "duckdb",
          QUARRY_DUCKDB_FILES: `finance.salaries=${FINANCE_SALARIES_CSV}`,
          GOOGLE_CLOUD_PROJECT: env.GCLOUD_PROJECT,
          FIRESTORE_EMULATOR_HOST: env.FIRESTORE_EMULATOR_HOST,
        },
        timeout: 120_000,
      },
      (err, out, errOut) => (err ? reject(new Error(`${err.message}\n${errOut}`)) : resolve(out)),
    ),
  );
}

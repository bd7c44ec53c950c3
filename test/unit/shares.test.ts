/**
 * Sharing a conversation, without the stack: what a shared conversation keeps of the thread's
 * messages (never the schema look-ups), the queries it ran, the table names it shows, and whether a
 * viewer's scope covers it — decided by the real DuckDB engine's dry run over `shop` (the sample)
 * and `finance.salaries` (a file), each fence on its own.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readConfig, type WarehouseConfig } from "../../functions/src/config";
import { DuckDbWarehouse } from "../../functions/src/tools/duckdb/warehouse";
import { FULL_SCOPE, limitedScope } from "../../functions/src/tools/scope";
import { scopeCovers } from "../../functions/src/http/shares/check";
import { queriesOf, sharedTranscript, tableNamedOutside } from "../../functions/src/http/shares/transcript";

type Dict = Record<string, unknown>;
const SHOP = limitedScope(["shop"]);
const FINANCE = limitedScope(["finance"]);

const human = (id: string, content: string): Dict => ({ type: "human", id, content });
const calls = (id: string, ...c: { id: string; name: string; args?: Dict }[]): Dict => ({
  type: "ai",
  id,
  content: "",
  tool_calls: c.map((x) => ({ type: "tool_call", args: {}, ...x })),
  additional_kwargs: { signatures: ["s1", "s2"], other: 1 },
});
const tool = (callId: string, name: string, artifact: Dict, content = "…"): Dict => ({
  type: "tool",
  tool_call_id: callId,
  name,
  content,
  artifact,
});
const answer = (id: string, text: string): Dict => ({
  type: "ai",
  id,
  content: text,
  response_metadata: { quarry_definitions: [{ name: "revenue", source: "authored", approved: true }] },
});

const ORDERS = "SELECT COUNT(*) AS orders FROM shop.orders";
const LISTING = { kind: "tables", tables: [{ id: "shop.orders" }, { id: "finance.salaries" }] };

/** A turn as the planner makes it: list the tables, query, answer. */
function turn(n: number, sql: string, ran: boolean): Dict[] {
  return [
    human(`q${n}`, "How many orders?"),
    calls(`a${n}`, { id: `l${n}`, name: "list_tables" }),
    tool(`l${n}`, "list_tables", LISTING, "shop.orders, finance.salaries"),
    calls(`b${n}`, { id: `s${n}`, name: "bq_query", args: { sql } }),
    tool(
      `s${n}`,
      "bq_query",
      ran ? { kind: "query", result: { sql, rows: [{ orders: 3 }] } } : { kind: "error", category: "x", sql },
    ),
    answer(`c${n}`, "There are 3 orders."),
  ];
}

describe("the shared transcript", () => {
  it("keeps questions, queries with their results and answers as stored; drops the schema look-ups", () => {
    const messages = turn(1, ORDERS, true);
    const shared = sharedTranscript(messages);
    expect(shared.map((m) => m.id ?? m.tool_call_id)).toEqual(["q1", "b1", "s1", "c1"]);
    // Kept messages are the stored ones, unchanged (response_metadata included).
    expect(shared[1]).toBe(messages[3]);
    expect(shared[3]).toBe(messages[5]);
    expect(JSON.stringify(shared)).not.toContain("finance");
  });

  it("rebuilds a message that mixed a look-up with a query, and drops calls that never got a result", () => {
    const mixed = calls(
      "a",
      { id: "l", name: "describe_table", args: { table: "finance.salaries" } },
      { id: "s", name: "bq_query", args: { sql: ORDERS } },
    );
    const waiting = calls("w", { id: "ask", name: "ask_user", args: { question: "Which one?" } });
    const shared = sharedTranscript([
      human("q", "How many?"),
      mixed,
      tool("l", "describe_table", { kind: "schema" }),
      tool("s", "bq_query", { kind: "query", result: { sql: ORDERS } }),
      waiting,
    ]);
    expect(shared).toHaveLength(3);
    expect(shared[1]).toMatchObject({ id: "a", tool_calls: [{ id: "s", name: "bq_query" }] });
    // The provider's signatures were for the calls as made: not kept for fewer.
    expect(shared[1].additional_kwargs).toEqual({ other: 1 });
    expect(shared.some((m) => m.id === "w")).toBe(false);
    // An answered question to the person stays.
    const answered = sharedTranscript([waiting, tool("ask", "ask_user", {}, "The person answered: A")]);
    expect(answered).toHaveLength(2);
  });

  it("names the SQL of each query as it ran, and whether it ran", () => {
    const shared = sharedTranscript([
      ...turn(1, ORDERS, true),
      ...turn(2, "SELECT nme FROM shop.customers", false),
    ]);
    expect(queriesOf(shared)).toEqual([
      { sql: ORDERS, ran: true },
      { sql: "SELECT nme FROM shop.customers", ran: false },
    ]);
  });

  it("finds a table outside the scope named anywhere, in any quoting, and nothing else", () => {
    const tables = ["shop.orders", "finance.salaries", "p.hr.people"];
    const text = (s: string) => [{ type: "ai", content: [{ type: "text", text: s }] }];
    expect(tableNamedOutside(text('From "finance"."salaries".'), tables, SHOP)).toBe("finance.salaries");
    expect(tableNamedOutside(text("see `p.hr.people`"), tables, SHOP)).toBe("p.hr.people");
    expect(tableNamedOutside(text("see hr.people"), tables, SHOP)).toBe("p.hr.people");
    expect(
      tableNamedOutside(text("shop.orders only; a finance. Salaries rose"), tables, SHOP),
    ).toBeUndefined();
    expect(tableNamedOutside(text("finance.salaries_2"), tables, SHOP)).toBeUndefined();
    expect(tableNamedOutside(text("finance.salaries"), tables, FINANCE)).toBeUndefined();
    expect(tableNamedOutside(text("finance.salaries"), tables, FULL_SCOPE)).toBeUndefined();
  });
});

describe("whether a viewer's scope covers a conversation (the engine's dry run)", () => {
  let wh: DuckDbWarehouse;
  beforeAll(async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "quarry-shares-"));
    const salaries = path.join(dir, "salaries.csv");
    writeFileSync(salaries, "customer_id,salary,grade\n1,50000,A\n2,61000,B\n");
    const base = readConfig({ GOOGLE_CLOUD_PROJECT: "demo-test" }).warehouse;
    const cfg: WarehouseConfig = {
      ...base,
      duckdb: { ...base.duckdb, files: { "finance.salaries": salaries } },
    };
    wh = await DuckDbWarehouse.open(cfg);
  }, 120_000);
  afterAll(async () => {
    await wh?.close();
  });

  const viewer = (scope: typeof SHOP) => ({ uid: "v", email: "v@example.com", scope });
  /** Only the dry-run fence: no table names given to look for. */
  const covers = (scope: typeof SHOP, transcript: Dict[], tableIds: string[] = []) =>
    scopeCovers((sql, ctx) => wh.dryRun(sql, ctx), viewer(scope), {
      threadId: "t",
      shareId: "s",
      transcript: sharedTranscript(transcript),
      tableIds,
    });

  it("covers a conversation whose queries run in the viewer's scope, and not one whose queries do not", async () => {
    await expect(covers(SHOP, turn(1, ORDERS, true))).resolves.toBe(true);
    await expect(covers(FINANCE, turn(1, ORDERS, true))).resolves.toBe(false);
    await expect(covers(limitedScope([]), turn(1, ORDERS, true))).resolves.toBe(false);
    // Views and joins alike: a second table outside the scope is enough.
    const both = "SELECT COUNT(*) FROM shop.orders o, finance.salaries s WHERE s.customer_id = o.customer_id";
    await expect(covers(SHOP, turn(1, both, true))).resolves.toBe(false);
    await expect(covers(FULL_SCOPE, turn(1, both, true))).resolves.toBe(true);
  });

  it("dry-runs an investigation's steps as the viewer: their rows are in the report, not in tool calls", async () => {
    const report = (sql: string): Dict[] => [
      human("q1", "Why did orders fall?"),
      {
        type: "ai",
        id: "r1",
        content: "# Why orders fell\n\n| customer_id | value |",
        response_metadata: {
          quarry_investigation: { title: "Why orders fell" },
          quarry_investigation_results: [
            { id: 1, ref: "inv-1-s1", sql, columns: [], rows: [], truncated: false },
          ],
        },
      },
    ];
    const inShop = "SELECT channel, COUNT(*) AS value FROM shop.orders GROUP BY channel";
    const outside = "SELECT grade, SUM(salary) AS value FROM finance.salaries GROUP BY grade";
    expect(queriesOf(sharedTranscript(report(inShop)))).toEqual([{ sql: inShop, ran: true }]);
    await expect(covers(SHOP, report(inShop))).resolves.toBe(true);
    // No table is named for fence 2 here: only the dry run as the viewer refuses it.
    await expect(covers(SHOP, report(outside))).resolves.toBe(false);
    await expect(covers(FINANCE, report(outside))).resolves.toBe(true);
  });

  it("lets a query that failed for its owner fail alike, but never one that failed because of scope", async () => {
    const typo = turn(1, "SELECT nme FROM shop.customers", false);
    await expect(covers(SHOP, typo)).resolves.toBe(true);
    await expect(covers(FINANCE, typo)).resolves.toBe(false);
    // It failed for its owner (out of their scope) and would fail for a shop viewer: still not theirs.
    const outside = turn(1, "SELECT grade FROM finance.salaries", false);
    await expect(covers(SHOP, outside)).resolves.toBe(false);
    await expect(covers(FINANCE, outside)).resolves.toBe(true);
  });

  it("refuses a conversation that names a table outside the scope even with no query, and fails closed without a dry run", async () => {
    const named = [human("q", "Tell me about finance.salaries"), answer("a", "I cannot.")];
    await expect(covers(SHOP, named, ["shop.orders", "finance.salaries"])).resolves.toBe(false);
    await expect(covers(FINANCE, named, ["shop.orders", "finance.salaries"])).resolves.toBe(true);
    const noDryRun = scopeCovers(undefined, viewer(SHOP), {
      threadId: "t",
      shareId: "s",
      transcript: sharedTranscript(turn(1, ORDERS, true)),
      tableIds: [],
    });
    await expect(noDryRun).resolves.toBe(false);
  });
});

/**
 * The LangChain tools over a real DuckDB warehouse: content for the model, artifacts for the
 * client, and bad input answered as a tool error instead of an exception.
 */
import { ToolMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readConfig } from "../../../functions/src/config";
import {
  MAX_SQL_CHARS,
  TOOL_NAMES,
  closeWarehouses,
  createWarehouseTools,
  getWarehouse,
  type DryRunResult,
  type ToolArtifact,
} from "../../../functions/src/tools/index";
import { personConfig } from "../../support/person";

const cfg = readConfig({ GOOGLE_CLOUD_PROJECT: "demo-test", QUARRY_PREVIEW_ROWS: "5" }).warehouse;
let tools: Record<string, StructuredToolInterface>;

async function call(name: string, args: unknown, configurable: object = {}): Promise<ToolMessage> {
  const out = await tools[name].invoke({ type: "tool_call", id: `call-${name}`, name, args } as never, {
    configurable: { ...personConfig(), ...configurable },
  });
  expect(out).toBeInstanceOf(ToolMessage);
  return out as ToolMessage;
}
const artifact = (m: ToolMessage) => m.artifact as ToolArtifact;

beforeAll(async () => {
  const wh = await getWarehouse(cfg);
  expect(await getWarehouse(cfg)).toBe(wh); // cached per config
  tools = Object.fromEntries(createWarehouseTools(wh).map((t) => [t.name, t]));
}, 120_000);
afterAll(() => closeWarehouses());

describe("warehouse tools", () => {
  it("exposes bq_query, list_tables and describe_table with content_and_artifact", () => {
    expect(Object.keys(tools).sort()).toEqual([...TOOL_NAMES].sort());
    for (const t of Object.values(tools))
      expect((t as unknown as { responseFormat: string }).responseFormat).toBe("content_and_artifact");
  });

  it("bq_query: bounded preview for the model, full result and estimate for the client", async () => {
    const estimates: DryRunResult[] = [];
    const m = await call(
      "bq_query",
      { sql: "SELECT product_id, name FROM shop.products ORDER BY product_id" },
      {
        quarry: {
          userId: "u",
          threadId: "t",
          runId: "r",
          bytesBilledSoFar: 0,
          onEstimate: (e: DryRunResult) => estimates.push(e),
        },
      },
    );
    const a = artifact(m);
    expect(a.kind).toBe("query");
    if (a.kind !== "query") return;
    expect(a.result.rows).toHaveLength(a.result.totalRows);
    expect(a.result.previewRows).toBe(5);
    expect(m.content).toContain(`${a.result.totalRows} rows`);
    expect(
      String(m.content)
        .split("\n")
        .filter((l) => /^\d+\t/.test(l)),
    ).toHaveLength(5);
    expect(estimates).toEqual([expect.objectContaining({ statementType: "SELECT", sql: a.result.sql })]);
  });

  it("list_tables and describe_table return text and artifacts", async () => {
    const l = await call("list_tables", {});
    expect(artifact(l).kind).toBe("tables");
    expect(l.content).toMatch(/shop\.order_items — [\d,]+ rows/);
    const d = await call("describe_table", { table: "shop.customers" });
    expect(artifact(d)).toMatchObject({ kind: "schema", schema: { id: "shop.customers" } });
    expect(d.content).toMatch(/country VARCHAR — ISO 3166/);
    expect(d.content).toMatch(/Sample rows:/);
  });

  it("a refused statement is a tool error with the SQL, not an exception", async () => {
    const m = await call("bq_query", { sql: "DROP TABLE shop.orders" });
    expect(m.content).toMatch(/^Error \(refused\): /);
    expect(artifact(m)).toMatchObject({ kind: "error", category: "refused", sql: "DROP TABLE shop.orders" });
  });

  const bad: [string, string, unknown, RegExp][] = [
    ["empty SQL", "bq_query", { sql: "" }, /empty/],
    ["whitespace and semicolons", "bq_query", { sql: "  ;\n ; " }, /empty/],
    [
      "megabytes of SQL",
      "bq_query",
      { sql: `SELECT 1 AS x -- ${"x".repeat(3_000_000)}` },
      /3,000,0\d\d characters; the limit is 100,000/,
    ],
    ["a number for sql", "bq_query", { sql: 42 }, /expected string/],
    ["no sql at all", "bq_query", {}, /sql/],
    ["an array for sql", "bq_query", { sql: ["SELECT 1"] }, /expected string/],
    ["null arguments", "bq_query", null, /schema/],
    ["an object for table", "describe_table", { table: { name: "x" } }, /expected string/],
    ["an empty table name", "describe_table", { table: " " }, /empty/],
  ];
  for (const [label, name, args, pattern] of bad) {
    it(`bad input (${label}) gets a clear tool error`, async () => {
      const m = await call(name, args);
      expect(m.content).toMatch(/^Error \(bad_input\): /);
      expect(m.content).toMatch(pattern);
      expect(String(m.content).length).toBeLessThan(1_000);
      expect(artifact(m)).toMatchObject({ kind: "error", category: "bad_input" });
    });
  }

  it("MAX_SQL_CHARS is the documented limit", () => {
    expect(MAX_SQL_CHARS).toBe(100_000);
  });

  it("an unknown table is a not_found tool error listing what exists", async () => {
    const m = await call("describe_table", { table: "shop.refunds" });
    expect(m.content).toMatch(/^Error \(not_found\): .*shop\.orders/);
  });
});

/**
 * A person's scope, enforced by the real DuckDB engine and the model's tools over a warehouse that
 * holds `shop` (the sample) and `finance.salaries` (a file): a table outside the scope reads like
 * one that does not exist, no hint names it, and the audit log records the refusal.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { ToolMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readConfig, type WarehouseConfig } from "../../../functions/src/config";
import { DuckDbWarehouse } from "../../../functions/src/tools/duckdb/warehouse";
import {
  FULL_SCOPE,
  inScope,
  limitedScope,
  narrowScope,
  scopeDatasets,
  type Scope,
} from "../../../functions/src/tools/scope";
import { auditedWarehouse, createWarehouseTools } from "../../../functions/src/tools/index";
import { WarehouseError, type QueryRecord, type ToolArtifact } from "../../../functions/src/tools/types";
import { scopedCatalog } from "../../../functions/src/context/scoped";
import { scopedKnowledge } from "../../../functions/src/context/scoped-knowledge";
import { KnowledgeBase } from "../../../functions/src/context/knowledge";
import type { ContextFile } from "../../../functions/src/context/authored";
import { personConfig } from "../../support/person";

const SHOP = limitedScope(["shop"]);
const FINANCE = limitedScope(["finance"]);

describe("scope matching", () => {
  it("matches datasets and single tables by their last parts, whatever the engine's id", () => {
    expect(inScope(SHOP, "shop.orders")).toBe(true);
    expect(inScope(SHOP, "my-project.shop.orders")).toBe(true);
    expect(inScope(SHOP, "`my-project.SHOP.orders`")).toBe(true);
    expect(inScope(SHOP, "finance.salaries")).toBe(false);
    expect(inScope(SHOP, "shopping.orders")).toBe(false);
    expect(inScope(SHOP, "orders")).toBe(false);
    const one = limitedScope(["finance.salaries"]);
    expect(inScope(one, "p.finance.salaries")).toBe(true);
    expect(inScope(one, "finance.bonuses")).toBe(false);
    expect(inScope(limitedScope(["db"]), "db.main.t")).toBe(true);
    expect(inScope(limitedScope([]), "shop.orders")).toBe(false);
    expect(inScope(FULL_SCOPE, "anything.at.all")).toBe(true);
  });

  it("has a stable key, lists what a person can ask about, and narrows to readable tables", () => {
    expect(limitedScope(["Shop", "finance.salaries", "shop"]).key).toBe(
      limitedScope(["finance.salaries", "shop"]).key,
    );
    const tables = [
      { id: "shop.orders" },
      { id: "shop.customers" },
      { id: "finance.salaries" },
      { id: "hr.x" },
    ];
    expect(scopeDatasets(limitedScope(["shop", "finance.salaries"]), tables)).toEqual([
      "finance.salaries",
      "shop",
    ]);
    expect(scopeDatasets(FULL_SCOPE, tables)).toEqual(["finance", "hr", "shop"]);
    const narrowed = narrowScope(SHOP, ["p.shop.orders", "p.finance.salaries"]);
    expect(narrowed.entries).toEqual(["p.shop.orders"]);
    // The project is kept: another project's dataset of the same name is not in it.
    expect(inScope(narrowed, "q.shop.orders")).toBe(false);
  });
});

describe("scope on DuckDB with shop and finance", () => {
  let wh: DuckDbWarehouse;
  let tools: Record<string, StructuredToolInterface>;
  const records: QueryRecord[] = [];

  beforeAll(async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "quarry-scope-"));
    const salaries = path.join(dir, "salaries.csv");
    writeFileSync(salaries, "customer_id,salary,grade\n1,50000,A\n2,61000,B\n");
    const base = readConfig({ GOOGLE_CLOUD_PROJECT: "demo-test" }).warehouse;
    const cfg: WarehouseConfig = {
      ...base,
      duckdb: { ...base.duckdb, files: { "finance.salaries": salaries } },
    };
    wh = await DuckDbWarehouse.open(cfg);
    const audited = auditedWarehouse(wh, (r) => records.push(r));
    tools = Object.fromEntries(createWarehouseTools(audited).map((t) => [t.name, t]));
  }, 120_000);
  afterAll(() => wh?.close());

  const ctx = (scope: Scope) => ({ userId: "u", threadId: "t", runId: "r", bytesBilledSoFar: 0, scope });
  async function failure(sql: string, scope: Scope): Promise<WarehouseError> {
    const err = await wh.query(sql, ctx(scope)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err, sql).toBeInstanceOf(WarehouseError);
    return err as WarehouseError;
  }
  async function call(name: string, args: unknown, scope: Scope, email = "ann@example.com") {
    const out = await tools[name].invoke({ type: "tool_call", id: `c-${name}`, name, args } as never, {
      configurable: personConfig("uid-ann", scope, email),
    });
    expect(out).toBeInstanceOf(ToolMessage);
    const m = out as ToolMessage;
    return { text: String(m.content), artifact: m.artifact as ToolArtifact };
  }

  it("answers a table out of scope exactly like a table that does not exist", async () => {
    const outside = await failure("SELECT * FROM finance.salaries", SHOP);
    // A dataset that exists nowhere: DuckDB's own answer, word for word but the name.
    const missing = await failure("SELECT * FROM nowhere.salaries", SHOP);
    const named = (text: string) => text.replaceAll("nowhere", "finance");
    expect(outside.category).toBe("not_found");
    expect(outside.message).toBe(named(missing.message));
    expect(outside.details).toEqual({
      ...missing.details,
      engineMessage: named(missing.details.engineMessage!),
    });
    // A table of a dataset the person sees part of reads like a missing table of it.
    const part = limitedScope(["finance.bonuses", "shop"]);
    const hidden = await failure("SELECT * FROM finance.salaries", part);
    expect(hidden.message).toMatch(
      /^Catalog Error: Table with name salaries does not exist! \(line 1, column 15\)/,
    );
    expect(outside.outOfScope).toEqual(["finance.salaries"]);
    expect(missing.outOfScope).toBeUndefined();
    // Quoted names and joins with an allowed table are caught the same way.
    expect(
      (await failure('SELECT * FROM shop.orders o JOIN "finance"."salaries" s ON true', SHOP)).outOfScope,
    ).toEqual(["finance.salaries"]);
  });

  it("lets no engine hint name a table or column outside the scope", async () => {
    // Unscoped, DuckDB itself suggests the nearest table of any dataset.
    expect((await failure("SELECT * FROM shop.salaries", FULL_SCOPE)).message).toContain("finance.salaries");
    const near = await failure("SELECT * FROM shop.salaries", SHOP);
    expect(near.message).not.toMatch(/salaries"|finance/);
    expect(near.details.engineMessage).not.toMatch(/finance/);
    // A misspelt table of a dataset out of scope: no "Did you mean salaries".
    const misspelt = await failure("SELECT * FROM finance.salary", SHOP);
    expect(misspelt.message).not.toMatch(/salaries/);
    // A misspelt column of a table out of scope never reaches the binder (whose hint lists columns).
    const column = await failure("SELECT salry FROM finance.salaries", SHOP);
    expect(column.category).toBe("not_found");
    expect(column.message).not.toMatch(/salary"|grade/);
    // In scope, the engine's hints stay.
    expect((await failure("SELECT * FROM shop.orderz", SHOP)).message).toContain('Did you mean "orders"');
  });

  it("refuses the catalog's own views to a limited scope", async () => {
    for (const sql of ["SELECT * FROM information_schema.tables", "SELECT * FROM duckdb_tables()"]) {
      expect((await failure(sql, SHOP)).category).toBe("refused");
      await expect(wh.query(sql, ctx(FULL_SCOPE))).resolves.toBeDefined();
    }
  });

  it("reads what a statement scans from DuckDB's parse tree: built names, comments and catalog functions fail", async () => {
    const attempts = [
      "SELECT * FROM query_table('fin'||'ance.salaries')",
      "SELECT * FROM query('SELECT * FROM fin'||'ance.salaries')",
      "SELECT nope FROM finance/**/.salaries",
      "SELECT nope FROM query_table('finance.salaries')",
      "FROM duckdb_tables",
      "FROM duckdb_columns",
      "FROM pg_tables",
      "SHOW ALL TABLES",
      "SELECT * FROM sql_auto_complete('SELECT * FROM fin')",
    ];
    for (const sql of attempts) {
      const e = await failure(sql, SHOP);
      expect(["not_found", "refused"], sql).toContain(e.category);
      expect(JSON.stringify({ m: e.message, d: e.details }), sql).not.toMatch(
        /grade|Candidate bindings|salary"/,
      );
    }
    // Unscoped, the same built name reads the rows: the fence is what stops it.
    await expect(
      wh.query("SELECT * FROM query_table('fin'||'ance.salaries')", ctx(FULL_SCOPE)),
    ).resolves.toBeDefined();
    // What is in scope still runs: CTEs, joins with subqueries, generators.
    for (const sql of [
      "WITH x AS (SELECT 1 AS id) SELECT * FROM x",
      "SELECT count(*) AS n FROM shop.orders o JOIN (SELECT 1 AS id) s ON o.order_id = s.id",
      "SELECT * FROM range(3)",
      "SELECT * FROM unnest([1, 2])",
    ]) {
      await expect(wh.query(sql, ctx(SHOP)), sql).resolves.toBeDefined();
    }
  });

  it("runs what is in scope", async () => {
    const r = await wh.query("SELECT count(*) AS n FROM finance.salaries", ctx(FINANCE));
    expect(r.rows).toEqual([{ n: 2 }]);
  });

  it("scopes list_tables and describe_table; out of scope and missing read the same", async () => {
    const listed = await call("list_tables", {}, SHOP);
    expect(listed.artifact.kind).toBe("tables");
    const ids = listed.artifact.kind === "tables" ? listed.artifact.tables.map((t) => t.id) : [];
    expect(ids).toContain("shop.orders");
    expect(ids).not.toContain("finance.salaries");
    expect(listed.text).not.toMatch(/finance|salar/);
    const outside = await call("describe_table", { table: "finance.salaries" }, SHOP);
    const missing = await call("describe_table", { table: "finance.nope" }, SHOP);
    expect(outside.text).toBe(missing.text.replace("finance.nope", "finance.salaries"));
    expect(outside.text).not.toMatch(/customer_id|grade/);
    expect(outside.text).toMatch(/not available\. Available tables: shop\./);
    // Unqualified names resolve among the tables in scope.
    const bare = await call("describe_table", { table: "orders" }, SHOP);
    expect(bare.artifact.kind).toBe("schema");
    const fin = await call("describe_table", { table: "salaries" }, FINANCE);
    expect(fin.artifact.kind === "schema" && fin.artifact.schema.columns.map((c) => c.name)).toEqual([
      "customer_id",
      "salary",
      "grade",
    ]);
  });

  it("records a scope refusal in the audit log under the person's email", async () => {
    records.length = 0;
    const out = await call("bq_query", { sql: "SELECT avg(salary) FROM finance.salaries" }, SHOP);
    expect(out.artifact).toMatchObject({ kind: "error", category: "not_found" });
    expect(out.text).not.toMatch(/scope/i);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      userId: "uid-ann",
      userEmail: "ann@example.com",
      outcome: "refused",
      error: { category: "out_of_scope" },
    });
    expect(records[0].error!.message).toContain("finance.salaries");
  });

  it("a tool call whose run carries no person sees no data", async () => {
    const out = await tools.list_tables.invoke(
      { type: "tool_call", id: "x", name: "list_tables", args: {} } as never,
      {
        configurable: {},
      },
    );
    const artifact = (out as ToolMessage).artifact as ToolArtifact;
    expect(artifact.kind === "tables" && artifact.tables).toEqual([]);
  });
});

describe("scoped catalog and authored context", () => {
  it("keeps only the tables, values and context entries in scope", () => {
    const catalog = {
      builtAt: 1,
      tables: [
        { id: "shop.orders", columns: [{ name: "status", type: "VARCHAR", values: ["paid"] }] },
        { id: "finance.salaries", columns: [{ name: "grade", type: "VARCHAR", values: ["A", "B"] }] },
      ],
    };
    const scoped = scopedCatalog(catalog, SHOP);
    expect(scoped.tables.map((t) => t.id)).toEqual(["shop.orders"]);
    expect(scopedCatalog(catalog, SHOP)).toBe(scoped); // cached per scope
    expect(scopedCatalog(catalog, FULL_SCOPE)).toBe(catalog);

    const file = (dataset: string, extra: Partial<ContextFile> = {}): ContextFile =>
      ({
        dataset,
        rules: [`${dataset} rule`],
        glossary: [{ term: `${dataset} term`, synonyms: [], meaning: "m", sql: `SUM(${dataset}.t.x)` }],
        verified_queries: [{ question: `${dataset} question?`, sql: `SELECT 1 FROM ${dataset}.t` }],
        tables: { t: { description: `${dataset} note`, columns: {} } },
        joins: [],
        ...extra,
      }) as ContextFile;
    const cross = {
      question: "pay by order?",
      sql: "SELECT * FROM shop.orders JOIN finance.salaries USING (id)",
    };
    const kb = new KnowledgeBase(
      [file("shop", { verified_queries: [cross] }), file("finance")],
      [{ question: "approved salaries?", sql: "SELECT * FROM finance.salaries" }],
    );
    const shopOnly = scopedKnowledge(kb, SHOP, ["shop", "finance"]);
    const text = JSON.stringify(
      shopOnly.forQuestion("finance term shop term salaries question pay by order"),
    );
    expect(text).toContain("shop rule");
    expect(text).not.toMatch(/finance/);
    expect(shopOnly.starters()).toEqual([]);
    expect(scopedKnowledge(kb, FULL_SCOPE, ["shop", "finance"])).toBe(kb);
    // No dataset names (the catalog unreadable): no SQL can be checked, so none is given.
    const blind = JSON.stringify(
      scopedKnowledge(kb, SHOP, []).forQuestion("shop term shop question pay by order salaries"),
    );
    expect(blind).toContain("shop rule");
    expect(blind).not.toMatch(/SELECT|SUM\(|finance/);
    // Of a dataset seen in part, a term whose SQL names no table in scope is left out.
    const partFile = file("finance", {
      glossary: [
        { term: "pay", synonyms: [], meaning: "m", sql: "salary + bonus" },
        { term: "grade pay", synonyms: [], meaning: "m", sql: "AVG(finance.salaries.salary)" },
      ],
    } as Partial<ContextFile>);
    const part = scopedKnowledge(new KnowledgeBase([partFile]), limitedScope(["finance.salaries"]), [
      "finance",
    ]);
    const terms = part.forQuestion("pay and grade pay").glossary.map((g) => g.term);
    expect(terms).toEqual(["grade pay"]);
  });
});

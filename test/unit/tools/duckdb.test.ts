/**
 * The DuckDB engine for real: the generated sample dataset, opened read-only, answering questions
 * whose answers are computed independently from the generator's in-memory arrays.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readConfig, type WarehouseConfig } from "../../../functions/src/config";
import { DuckDbWarehouse } from "../../../functions/src/tools/duckdb/warehouse";
import { generateSampleData, type SampleData } from "../../../functions/src/tools/duckdb/sample-data";
import { WarehouseError, type QueryContext } from "../../../functions/src/tools/types";
import { FULL_SCOPE } from "../../../functions/src/tools/scope";

const ctx: QueryContext = {
  userId: "u1",
  threadId: "t1",
  runId: "r1",
  bytesBilledSoFar: 0,
  scope: FULL_SCOPE,
};
const baseCfg = (): WarehouseConfig =>
  structuredClone(readConfig({ GOOGLE_CLOUD_PROJECT: "demo-test" }).warehouse);

const yearOf = (days: number) => new Date(days * 86_400_000).getUTCFullYear();
const monthOf = (days: number) => new Date(days * 86_400_000).toISOString().slice(0, 7);
const cents = (s: unknown) => Math.round(Number(s) * 100);

async function refusal(wh: DuckDbWarehouse, sql: string): Promise<WarehouseError> {
  const err = await wh.query(sql, ctx).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, `expected "${sql}" to be refused`).toBeInstanceOf(WarehouseError);
  return err as WarehouseError;
}

describe("DuckDB warehouse on the sample dataset", () => {
  let wh: DuckDbWarehouse;
  let data: SampleData;

  beforeAll(async () => {
    data = generateSampleData();
    wh = await DuckDbWarehouse.open(baseCfg());
  }, 120_000);
  afterAll(() => wh?.close());

  it("is deterministic and about the advertised size", () => {
    const again = generateSampleData();
    expect(again.orders.slice(-3)).toEqual(data.orders.slice(-3));
    expect(again.order_items.length).toBe(data.order_items.length);
    expect(generateSampleData(7).orders.length).not.toBe(data.orders.length);
    expect(data.order_items.length).toBeGreaterThan(90_000);
    expect(data.order_items.length).toBeLessThan(120_000);
    const years = new Set(data.orders.map((o) => yearOf(o.order_date)));
    expect([...years].sort()).toEqual([2024, 2025]);
  });

  it("lists the five tables with descriptions and exact row counts", async () => {
    const tables = await wh.listTables();
    expect(tables.map((t) => t.id).sort()).toEqual(
      ["shop.customers", "shop.order_items", "shop.orders", "shop.products", "shop.web_events"].sort(),
    );
    for (const t of tables) {
      const name = t.id.split(".")[1] as keyof SampleData;
      expect(t.rowCount).toBe(data[name].length);
      expect(t.description).toBeTruthy();
    }
  });

  it("answers: orders per year", async () => {
    const r = await wh.query(
      "SELECT extract(year FROM order_date) AS y, count(*) AS n FROM shop.orders GROUP BY 1 ORDER BY 1",
      ctx,
    );
    const expected = new Map<number, number>();
    for (const o of data.orders)
      expected.set(yearOf(o.order_date), (expected.get(yearOf(o.order_date)) ?? 0) + 1);
    expect(r.rows).toEqual([...expected].sort().map(([y, n]) => ({ y, n })));
  });

  it("answers: revenue by category in 2025, excluding cancelled and returned orders (exact cents)", async () => {
    const r = await wh.query(
      `SELECT p.category, sum(i.line_total) AS revenue
       FROM shop.order_items i JOIN shop.orders o ON o.order_id = i.order_id JOIN shop.products p ON p.product_id = i.product_id
       WHERE o.status NOT IN ('cancelled', 'returned') AND o.order_date >= DATE '2025-01-01'
       GROUP BY 1 ORDER BY revenue DESC`,
      ctx,
    );
    const status = new Map(data.orders.map((o) => [o.order_id, o]));
    const category = new Map(data.products.map((p) => [p.product_id, p.category]));
    const sums = new Map<string, number>();
    for (const i of data.order_items) {
      const o = status.get(i.order_id)!;
      if (o.status === "cancelled" || o.status === "returned" || yearOf(o.order_date) !== 2025) continue;
      const c = category.get(i.product_id)!;
      sums.set(c, (sums.get(c) ?? 0) + i.line_total);
    }
    const expected = [...sums].sort((a, b) => b[1] - a[1]);
    expect(r.rows.map((row) => [row.category, cents(row.revenue)])).toEqual(expected);
    expect(typeof r.rows[0].revenue).toBe("string"); // DECIMAL stays exact
  });

  it("answers: monthly active buyers and the web funnel", async () => {
    const r = await wh.query(
      "SELECT strftime(order_date, '%Y-%m') AS month, count(DISTINCT customer_id) AS buyers FROM shop.orders GROUP BY 1 ORDER BY 1",
      ctx,
    );
    const buyers = new Map<string, Set<number>>();
    for (const o of data.orders) {
      const m = monthOf(o.order_date);
      if (!buyers.has(m)) buyers.set(m, new Set());
      buyers.get(m)!.add(o.customer_id);
    }
    expect(r.rows).toEqual([...buyers].sort().map(([month, s]) => ({ month, buyers: s.size })));

    const f = await wh.query(
      "SELECT event_type, count(*) AS n FROM shop.web_events GROUP BY 1 ORDER BY n DESC",
      ctx,
    );
    const counts = new Map<string, number>();
    for (const e of data.web_events) counts.set(e.event_type, (counts.get(e.event_type) ?? 0) + 1);
    expect(f.rows).toEqual(
      [...counts].sort((a, b) => b[1] - a[1]).map(([event_type, n]) => ({ event_type, n })),
    );
  });

  it("describes a table: columns, descriptions, sample rows", async () => {
    const s = await wh.describeTable("orders");
    expect(s.id).toBe("shop.orders");
    expect(s.columns.map((c) => c.name)).toEqual(Object.keys(data.orders[0]));
    expect(s.columns.find((c) => c.name === "status")?.description).toMatch(/cancelled/);
    expect(s.sampleRows).toHaveLength(5);
    expect(s.sampleRows[0].order_id).toBe(data.orders[0].order_id);
    await expect(wh.describeTable("shop.nope")).rejects.toMatchObject({ category: "not_found" });
  });

  it("refuses writes, DDL, scripts and settings, and the data stays intact", async () => {
    const before = (await wh.query("SELECT count(*) AS n FROM shop.orders", ctx)).rows[0].n;
    const statements = [
      "INSERT INTO shop.orders SELECT * FROM shop.orders",
      "UPDATE shop.orders SET status = 'x'",
      "DELETE FROM shop.orders",
      "CREATE TABLE shop.t AS SELECT 1",
      "CREATE TABLE t AS SELECT 1",
      "DROP TABLE shop.orders",
      "ALTER TABLE shop.orders ADD COLUMN x INT",
      "SELECT 1; DROP TABLE shop.orders",
      "SET lock_configuration = false",
      "PRAGMA enable_profiling",
      "DETACH shop",
      "ATTACH ':memory:' AS other",
      "CHECKPOINT",
    ];
    for (const sql of statements) {
      const err = await refusal(wh, sql);
      expect(err.category, sql).toBe("refused");
      expect(err.message, sql).toMatch(/SELECT/);
    }
    expect((await wh.query("SELECT count(*) AS n FROM shop.orders", ctx)).rows[0].n).toBe(before);
  });

  it("refuses file and extension access from SQL", async () => {
    for (const sql of [
      "SELECT * FROM read_csv('/etc/passwd')",
      "SELECT * FROM read_parquet('/tmp/x.parquet')",
      "SELECT * FROM read_text('/etc/hostname')",
      "SELECT * FROM glob('/*')",
      "COPY shop.orders TO '/tmp/quarry-leak.csv'",
      "INSTALL httpfs",
      "LOAD httpfs",
    ]) {
      const err = await refusal(wh, sql);
      expect(err.category, sql).toBe("refused");
    }
  });

  it("runs SQL wrapped in one Markdown fence with a trailing semicolon on the first try, as the bare statement", async () => {
    for (const wrapped of [
      "```sql\nSELECT count(*) AS n FROM shop.orders;\n```",
      "```\nSELECT count(*) AS n FROM shop.orders\n```",
      "SELECT count(*) AS n FROM shop.orders ; ",
      "```SQL SELECT count(*) AS n FROM shop.orders;```",
    ]) {
      const r = await wh.query(wrapped, ctx);
      expect(r.rows, wrapped).toEqual([{ n: data.orders.length }]);
      expect(r.sql, wrapped).toBe("SELECT count(*) AS n FROM shop.orders");
    }
    // Still exactly one read-only statement: two inside a fence, or a write in one, are refused.
    for (const bad of [
      "```sql\nSELECT 1; DROP TABLE shop.orders;\n```",
      "```sql\nSELECT 1;\nSELECT 2;\n```",
      "```sql\nDELETE FROM shop.orders;\n```",
    ]) {
      expect((await refusal(wh, bad)).category, bad).toBe("refused");
    }
    expect((await refusal(wh, "```sql\n;\n```")).category).toBe("bad_input");
  });

  it("maps engine errors to categories with positions", async () => {
    const e1 = await refusal(wh, "SELECT nme FROM shop.customers");
    expect(e1.category).toBe("invalid_query");
    expect(e1.details.position).toEqual({ line: 1, column: 8 });
    expect(e1.message).toMatch(/name/);
    const e2 = await refusal(wh, "SELECT * FROM shop.ordrs");
    expect(e2.category).toBe("not_found");
    expect(e2.message).toMatch(/orders/);
  });
});

describe("DuckDB caps, timeouts and registered files", () => {
  it("caps rows and characters, counts every row, and bounds the preview", async () => {
    const cfg = { ...baseCfg(), maxRows: 100, previewRows: 10, previewChars: 600 };
    const wh = await DuckDbWarehouse.open(cfg);
    try {
      const total = generateSampleData().order_items.length;
      const r = await wh.query("SELECT * FROM shop.order_items", ctx);
      expect(r.rows).toHaveLength(100);
      expect(r.truncated).toBe(true);
      expect(r.totalRows).toBe(total);
      expect(r.preview.length).toBeLessThanOrEqual(600);
      expect(r.previewRows).toBeLessThanOrEqual(10);
      expect(r.preview).toMatch(/showing \d+ of 103,?\d+ rows|showing \d+ of \d+ rows/);

      // Read under the cap's LIMIT, a query's own order is kept.
      const ordered = await wh.query("SELECT order_id FROM shop.orders ORDER BY order_id DESC", ctx);
      const ids = generateSampleData()
        .orders.map((o) => o.order_id)
        .sort((a, b) => b - a);
      expect(ordered.rows.map((r) => r.order_id)).toEqual(ids.slice(0, 100));
      expect(ordered.totalRows).toBe(ids.length);

      const small = await wh.query("SELECT * FROM shop.products ORDER BY product_id LIMIT 3", ctx);
      expect(small.truncated).toBe(false);
      expect(small.totalRows).toBe(3);
    } finally {
      await wh.close();
    }
    const narrow = await DuckDbWarehouse.open({ ...baseCfg(), maxResultChars: 2_000 });
    try {
      const r = await narrow.query("SELECT * FROM shop.customers", ctx);
      expect(r.truncated).toBe(true);
      expect(JSON.stringify(r.rows).length).toBeLessThanOrEqual(2_000);
      expect(r.rows.length).toBeGreaterThan(0);
    } finally {
      await narrow.close();
    }
  }, 60_000);

  it("interrupts a query that runs past the timeout, and one whose run is cancelled", async () => {
    const wh = await DuckDbWarehouse.open(baseCfg(), { timeoutMs: 300 });
    const endless = "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) SELECT count(*) FROM r";
    try {
      await expect(wh.query(endless, ctx)).rejects.toMatchObject({ category: "timeout" });
      // Cancelled mid-run: the abort comes once the statement is in DuckDB's hands, not on a timer.
      const ac = new AbortController();
      let running = 0;
      const slow = await DuckDbWarehouse.open(baseCfg(), {
        timeoutMs: 60_000,
        onRunning: () => {
          running++;
          ac.abort();
        },
      });
      const started = Date.now();
      const pending = slow.query(endless, { ...ctx, signal: ac.signal });
      await expect(pending).rejects.toMatchObject({ category: "timeout", message: /cancelled/ });
      expect(running).toBe(1);
      // Stopped by the cancel, far inside the 60 s timeout.
      expect(Date.now() - started).toBeLessThan(30_000);
      await slow.close();
      // The warehouse still works after an interrupt.
      expect((await wh.query("SELECT 1 AS one", ctx)).rows).toEqual([{ one: 1 }]);
    } finally {
      await wh.close();
    }
  }, 60_000);

  it("registers files as tables of datasets of their own (dataset.table=path) beside the sample", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "quarry-ds-"));
    const salaries = path.join(dir, "salaries.csv");
    writeFileSync(salaries, "customer_id,salary\n1,50000\n2,61000\n3,72000\n");
    const targets = path.join(dir, "targets.csv");
    writeFileSync(targets, "category,target\nBooks,1000\n");
    const files = { "finance.salaries": salaries, targets };
    const wh = await DuckDbWarehouse.open({ ...baseCfg(), duckdb: { ...baseCfg().duckdb, files } });
    try {
      const ids = (await wh.listTables()).map((t) => t.id);
      expect(ids).toEqual(expect.arrayContaining(["shop.orders", "finance.salaries", "files.targets"]));
      expect((await wh.listTables()).find((t) => t.id === "finance.salaries")?.rowCount).toBe(3);
      expect((await wh.describeTable("finance.salaries")).columns.map((c) => c.name)).toEqual([
        "customer_id",
        "salary",
      ]);
      const r = await wh.query(
        "SELECT count(*) AS n FROM finance.salaries s JOIN shop.customers c ON c.customer_id = s.customer_id",
        ctx,
      );
      expect(r.rows).toEqual([{ n: 3 }]);
    } finally {
      await wh.close();
    }
    for (const [key, why] of [
      ["shop.targets", /opened database's own/],
      ["a.b.c", /not a valid table name/],
      ["fin-ance.x", /not a valid table name/],
    ] as const) {
      const bad = { ...baseCfg(), duckdb: { ...baseCfg().duckdb, files: { [key]: targets } } };
      await expect(DuckDbWarehouse.open(bad)).rejects.toThrow(why);
    }
  }, 60_000);

  it("registers a local CSV as a queryable table, but SQL still cannot read files", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "quarry-csv-"));
    const csv = path.join(dir, "targets.csv");
    writeFileSync(csv, "category,target\nBooks,1000.50\nToys,2500\n");
    const wh = await DuckDbWarehouse.open({
      ...baseCfg(),
      duckdb: { ...baseCfg().duckdb, files: { targets: csv } },
    });
    try {
      expect((await wh.listTables()).find((t) => t.id === "files.targets")).toMatchObject({ rowCount: 2 });
      const r = await wh.query(
        `SELECT t.category, t.target, count(*) AS products FROM files.targets t
         JOIN shop.products p ON p.category = t.category GROUP BY ALL ORDER BY 1`,
        ctx,
      );
      const perCategory = (c: string) => generateSampleData().products.filter((p) => p.category === c).length;
      expect(r.rows).toEqual([
        { category: "Books", target: 1000.5, products: perCategory("Books") },
        { category: "Toys", target: 2500, products: perCategory("Toys") },
      ]);
      const err = await wh.query(`SELECT * FROM read_csv('${csv}')`, ctx).catch((e: unknown) => e);
      expect(err).toMatchObject({ category: "refused" });
    } finally {
      await wh.close();
    }
  }, 60_000);
});

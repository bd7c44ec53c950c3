/**
 * DuckDB in worker processes (functions/src/tools/duckdb/pool.ts), as the function uses it: memory
 * bombs end as bounded results or `too_large` tool errors inside the worker's limits, the pool
 * keeps answering during and after, and a worker that dies mid-query costs only that query.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readConfig, type WarehouseConfig } from "../../../functions/src/config";
import { DuckDbPool, workerAddressSpaceMiB } from "../../../functions/src/tools/duckdb/pool";
import { generateSampleData } from "../../../functions/src/tools/duckdb/sample-data";
import { WarehouseError, type QueryContext, type QueryResult } from "../../../functions/src/tools/types";
import { FULL_SCOPE } from "../../../functions/src/tools/scope";

const ctx: QueryContext = {
  userId: "u1",
  threadId: "t1",
  runId: "r1",
  bytesBilledSoFar: 0,
  scope: FULL_SCOPE,
};
const cfg = (): WarehouseConfig =>
  structuredClone(
    readConfig({ GOOGLE_CLOUD_PROJECT: "demo-test", QUARRY_QUERY_TIMEOUT_MS: "30000" }).warehouse,
  );

const outcome = (p: Promise<QueryResult>) =>
  p.then(
    (r) => ({ ok: true as const, r }),
    (e: unknown) => {
      expect(e).toBeInstanceOf(WarehouseError);
      return { ok: false as const, e: e as WarehouseError };
    },
  );

/**
 * Each bomb and how it ends: a result too big to hold is cut at the row and character caps as it
 * streams (`capped`); a value or an aggregate too big to build is refused in words (`too_large`).
 */
const BOMBS: Record<string, { sql: string; ends: "capped" | "too_large" }> = {
  repeat: { sql: "SELECT REPEAT('x', 1000000) AS big FROM shop.orders", ends: "too_large" },
  crossJoin: {
    sql: "SELECT a.*, b.*, repeat(a.product_id::VARCHAR, 200) AS wide FROM shop.order_items a, shop.order_items b",
    ends: "capped",
  },
  stringAgg: {
    sql: "SELECT string_agg(a.order_id::VARCHAR || repeat('y', 100), ',') AS everything FROM shop.order_items a, shop.products b",
    ends: "too_large",
  },
};

describe("DuckDB worker pool under memory bombs", () => {
  let pool: DuckDbPool;
  const c = cfg();
  const expectedOrders = generateSampleData().orders.length;

  beforeAll(async () => {
    pool = await DuckDbPool.open(c);
  }, 120_000);
  afterAll(() => pool?.close());

  for (const [name, { sql, ends }] of Object.entries(BOMBS)) {
    it(`${name}: ends ${ends} within the timeout, the worker under its limit`, async () => {
      const started = Date.now();
      const bomb = outcome(pool.query(sql, ctx));
      // Another person's question while the bomb is in flight, and after it.
      const during = await pool.query("SELECT count(*) AS n FROM shop.orders", { ...ctx, userId: "u2" });
      expect(during.rows).toEqual([{ n: expectedOrders }]);
      const end = await bomb;
      expect(Date.now() - started).toBeLessThan(c.bigquery.timeoutMs);
      if (ends === "capped") {
        expect(end.ok, end.ok ? "" : end.e.message).toBe(true);
        if (!end.ok) return;
        expect(end.r.truncated).toBe(true);
        expect(JSON.stringify(end.r.rows).length).toBeLessThanOrEqual(c.maxResultChars);
      } else {
        expect(end.ok).toBe(false);
        if (end.ok) return;
        expect(end.e.category).toBe("too_large");
        expect(end.e.message).toMatch(/more memory than one query may use/);
      }
      const limit = await workerAddressSpaceMiB(c);
      // Every worker, the one the bomb ran in included, stayed far below its address-space limit.
      const peaks = pool.peaksMiB();
      expect(peaks.length).toBeGreaterThan(0);
      for (const peak of peaks) expect(peak).toBeLessThan(limit - 1024);
      const after = await pool.query("SELECT count(*) AS n FROM shop.orders", ctx);
      expect(after.rows).toEqual([{ n: expectedOrders }]);
    }, 90_000);
  }

  it("the REPEAT bomb is refused as too_large (it cannot fit the worker's memory)", async () => {
    const end = await outcome(pool.query(BOMBS.repeat.sql, ctx));
    expect(end.ok).toBe(false);
    expect(!end.ok && end.e.category).toBe("too_large");
  }, 60_000);

  it("a single value over the character cap is cut, and the row still reaches the table", async () => {
    const narrow = await DuckDbPool.open({ ...cfg(), maxResultChars: 10_000 });
    try {
      const r = await narrow.query("SELECT REPEAT('z', 50000) AS long, 1 AS one", ctx);
      expect(r.rows).toHaveLength(1);
      const long = r.rows[0].long as string;
      expect(long.length).toBe(5_000);
      expect(long.endsWith("…")).toBe(true);
      expect(r.rows[0].one).toBe(1);
    } finally {
      await narrow.close();
    }
  }, 60_000);

  it("a worker that dies mid-query fails only that query; the next one starts a new worker", async () => {
    let running!: () => void;
    const atEstimate = new Promise<void>((r) => (running = r));
    const endless = "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) SELECT count(*) FROM r";
    const pending = outcome(pool.query(endless, { ...ctx, onEstimate: () => running() }));
    await atEstimate; // the worker has checked the statement and is running it
    const before = pool.pids;
    for (const pid of before) process.kill(pid, "SIGKILL");
    const end = await pending;
    expect(end.ok).toBe(false);
    expect(!end.ok && end.e.category).toBe("too_large");
    const again = await pool.query("SELECT 1 AS one", ctx);
    expect(again.rows).toEqual([{ one: 1 }]);
    expect(pool.pids.some((p) => before.includes(p))).toBe(false);
  }, 60_000);

  it("passes the estimate and a cancel through to the worker", async () => {
    const ac = new AbortController();
    const endless = "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) SELECT count(*) FROM r";
    const pending = outcome(
      pool.query(endless, { ...ctx, signal: ac.signal, onEstimate: (dry) => dry.sql && ac.abort() }),
    );
    const end = await pending;
    expect(end.ok).toBe(false);
    expect(!end.ok && end.e).toMatchObject({ category: "timeout", message: /cancelled/ });
  }, 60_000);
});

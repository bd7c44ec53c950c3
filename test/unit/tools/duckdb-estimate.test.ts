/**
 * DuckDB's byte estimate (tools/duckdb/estimate.ts), on the generated sample dataset, against sizes
 * computed here from the generator's own arrays with BigQuery's rules (8 bytes a number, date or
 * timestamp, 16 a decimal, 2 + the UTF-8 bytes of a string; every row of each column read; a
 * filter does not lower it; COUNT(*) reads none), and a step's cap refusing before the query runs.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readConfig } from "../../../functions/src/config";
import { DuckDbWarehouse } from "../../../functions/src/tools/duckdb/warehouse";
import { generateSampleData, type SampleData } from "../../../functions/src/tools/duckdb/sample-data";
import { FULL_SCOPE } from "../../../functions/src/tools/scope";
import { WarehouseError, type QueryContext } from "../../../functions/src/tools/types";

const ctx: QueryContext = {
  userId: "u1",
  threadId: "t1",
  runId: "r1",
  bytesBilledSoFar: 0,
  scope: FULL_SCOPE,
};
const utf8 = (s: string | null) => (s === null ? 0 : Buffer.byteLength(s, "utf8"));

describe("DuckDB's byte estimate", () => {
  let wh: DuckDbWarehouse;
  let data: SampleData;
  let n: number;
  /** BigQuery's size of `orders.channel`: 2 bytes plus the text, each row. */
  let channel: number;

  beforeAll(async () => {
    data = generateSampleData();
    n = data.orders.length;
    channel = data.orders.reduce((sum, o) => sum + 2 + utf8(o.channel), 0);
    wh = await DuckDbWarehouse.open(
      structuredClone(readConfig({ GOOGLE_CLOUD_PROJECT: "demo-test" }).warehouse),
    );
  }, 120_000);
  afterAll(() => wh?.close());

  const estimate = async (sql: string) =>
    (await wh.dryRun(sql, { ...ctx, estimateBytes: true })).estimatedBytes;

  it("counts every row of each column read, at BigQuery's sizes", async () => {
    expect(await estimate("SELECT order_id FROM shop.orders")).toBe(n * 8);
    expect(await estimate("SELECT channel FROM shop.orders")).toBe(channel);
    expect(await estimate("SELECT shipping_cost FROM shop.orders")).toBe(n * 16);
    expect(await estimate("SELECT channel, count(*) FROM shop.orders GROUP BY 1")).toBe(channel);
  });

  it("counts a filtered column too, and the filter does not lower the total", async () => {
    expect(await estimate("SELECT order_id FROM shop.orders WHERE order_date >= DATE '2025-06-01'")).toBe(
      n * 8 + n * 8,
    );
    expect(await estimate("SELECT order_id FROM shop.orders WHERE channel = 'web'")).toBe(n * 8 + channel);
  });

  it("reads nothing for COUNT(*), and adds up the tables a join reads", async () => {
    expect(await estimate("SELECT count(*) FROM shop.orders")).toBe(0);
    const items = data.order_items.length;
    expect(
      await estimate(
        "SELECT o.channel, sum(i.line_total) FROM shop.orders o JOIN shop.order_items i USING (order_id) GROUP BY 1",
      ),
    ).toBe(n * 8 + channel + items * 8 + items * 16);
  });

  it("is reported by a capped query, which is refused before it runs when over its cap", async () => {
    const sql = "SELECT channel, count(*) AS n FROM shop.orders GROUP BY 1";
    const ran = await wh.query(sql, { ...ctx, bytesCap: channel });
    expect(ran.bytesProcessed).toBe(channel);
    expect(ran.bytesBilled).toBe(0);
    let estimated: number | undefined;
    const err = await wh
      .query(sql, { ...ctx, bytesCap: channel - 1, onEstimate: (d) => (estimated = d.estimatedBytes) })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(WarehouseError);
    expect((err as WarehouseError).category).toBe("budget");
    expect((err as WarehouseError).message).toMatch(/over the .* this step may use/);
    expect(estimated).toBeUndefined(); // refused before the estimate is announced and the query runs
    // Without a cap, or a dry run that asks, nothing is estimated: an ordinary question spares the plan.
    expect((await wh.query(sql, ctx)).bytesProcessed).toBe(0);
    expect((await wh.dryRun(sql, ctx)).estimatedBytes).toBe(0);
  });
});

/**
 * Importing a real public dbt project (test/fixtures/dbt/jaffle-shop: dbt Labs' jaffle-shop as
 * compiled by a public fork, see its SOURCE.md) against real DuckDB holding the project's mart
 * tables (test/fixtures/dbt/jaffle-data, rows written for these tests): what becomes what, and
 * every compiled metric's numbers against SQL written by hand for its definition.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { importDbtProject } from "../../../functions/src/context/imports/project";
import { ImportError } from "../../../functions/src/context/imports/errors";
import { readSemanticManifest } from "../../../functions/src/context/imports/dbt-artifacts";
import { SemanticIndex } from "../../../functions/src/context/imports/metricflow";
import type { ImportedLayer } from "../../../functions/src/context/imports/types";
import { closeWarehouses, getWarehouse } from "../../../functions/src/tools";
import { FULL_SCOPE } from "../../../functions/src/tools/scope";
import type { Warehouse } from "../../../functions/src/tools/types";
import { testConfig } from "../agent/harness";
import { JAFFLE, JAFFLE_TABLES, MAP, jaffleFiles } from "./jaffle";

const TABLES = JAFFLE_TABLES;

let warehouse: Warehouse;
let layer: ImportedLayer;

beforeAll(async () => {
  warehouse = await getWarehouse(testConfig({ QUARRY_DUCKDB_FILES: jaffleFiles() }).warehouse);
  layer = await importDbtProject(JAFFLE, warehouse, { map: MAP });
}, 60_000);
afterAll(() => closeWarehouses());

const ctx = { userId: "t", threadId: "t", runId: "t", bytesBilledSoFar: 0, scope: FULL_SCOPE };
async function rows(sql: string): Promise<Record<string, unknown>[]> {
  return (await warehouse.query(sql, ctx)).rows as Record<string, unknown>[];
}
async function one(sql: string): Promise<number> {
  const r = await rows(sql);
  return Number(Object.values(r[0])[0]);
}
const metric = (name: string) => layer.metrics.find((m) => m.name === name)!;

describe("dbt import: what becomes what", () => {
  it("imports the six built marts as table notes and says why the rest are left out", () => {
    expect(layer.tables.map((t) => t.table).sort()).toEqual(TABLES.map((t) => `jaffle.${t}`).sort());
    expect(layer.tables.find((t) => t.table === "jaffle.orders")!.description).toMatch(/One row per order/);
    expect(layer.tables.find((t) => t.table === "jaffle.orders")!.origin).toEqual({
      id: "model.jaffle_shop.orders",
      file: "models/marts/orders.yml",
    });
    const skipped = layer.notices
      .filter((n) => /no table .* in the warehouse/.test(n.message))
      .map((n) => n.item);
    expect(skipped).toContain("model.jaffle_shop.stg_orders");
    expect(skipped).toContain("source.jaffle_shop.ecom.raw_orders");
    expect(layer.project).toBe("jaffle_shop");
    expect(layer.generatedAt).toBe("2024-09-24T19:47:14.569205Z");
  });

  it("turns accepted_values into a value list and relationships tests and entities into joins", () => {
    const customerType = layer.tables
      .find((t) => t.table === "jaffle.customers")!
      .columns.find((c) => c.name === "customer_type")!;
    expect(customerType.values).toEqual(["new", "returning"]);
    const joins = layer.joins.map(
      (j) => `${j.from.table}.${j.from.column}>${j.to.table}.${j.to.column}:${j.cardinality}`,
    );
    expect(joins).toContain("jaffle.order_items.order_id>jaffle.orders.order_id:many_to_one");
    expect(joins).toContain("jaffle.orders.customer_id>jaffle.customers.customer_id:many_to_one");
    expect(joins).toContain("jaffle.orders.location_id>jaffle.locations.location_id:many_to_one");
    expect(joins).toContain("jaffle.order_items.product_id>jaffle.products.product_id:many_to_one");
    // orders.customer_id's relationships test points at stg_customers, which is not built here.
    expect(joins.some((j) => j.includes("stg_"))).toBe(false);
  });

  it("imports cumulative metrics and offsets as definitions without SQL, saying why", () => {
    expect(metric("cumulative_revenue").sql).toBeUndefined();
    expect(metric("cumulative_revenue").noSql).toMatch(/cumulative/);
    expect(metric("revenue_growth_mom").noSql).toMatch(/offset/);
    expect(metric("revenue").origin).toEqual({
      id: "metric.jaffle_shop.revenue",
      file: "models/marts/order_items.yml",
    });
  });

  it("compiles a saved query's metrics side by side per day, and says why one grouped by an entity has no SQL", async () => {
    const revenue = layer.queries.find((q) => q.name === "revenue_metrics")!;
    const got = await rows(revenue.sql!);
    const want = await rows(
      "SELECT CAST(date_trunc('day', ordered_at) AS DATE) AS d, SUM(product_price) AS r, SUM(CASE WHEN is_food_item THEN product_price ELSE 0 END) AS f, SUM(CASE WHEN is_drink_item THEN product_price ELSE 0 END) AS k FROM jaffle.order_items GROUP BY 1 ORDER BY 1",
    );
    expect(got.length).toBe(want.length);
    expect(
      got.map((r) => [
        String(r.metric_time),
        ...[r.revenue, r.food_revenue, r.drink_revenue].map((v) => Number(v).toFixed(2)),
      ]),
    ).toEqual(want.map((r) => [String(r.d), ...[r.r, r.f, r.k].map((v) => Number(v).toFixed(2))]));
    expect(layer.queries.find((q) => q.name === "customer_order_metrics")!.noSql).toMatch(
      /groups by Entity\('customer'\)/,
    );
  });

  it("proposes the saved queries, never as approved SQL", () => {
    expect(layer.queries.map((q) => q.name).sort()).toEqual([
      "customer_order_metrics",
      "order_metrics",
      "revenue_metrics",
    ]);
    expect(layer.queries.find((q) => q.name === "revenue_metrics")!.metrics).toEqual([
      "revenue",
      "food_revenue",
      "drink_revenue",
    ]);
  });
});

describe("dbt import: each metric's SQL computes the definition's numbers", () => {
  it("simple metrics: sum, sum of 1, an expression, and the median", async () => {
    expect(await one(metric("revenue").sql!)).toBeCloseTo(
      await one("SELECT SUM(product_price) FROM jaffle.order_items"),
      6,
    );
    expect(await one(metric("orders").sql!)).toBe(await one("SELECT COUNT(*) FROM jaffle.orders"));
    expect(await one(metric("food_revenue").sql!)).toBeCloseTo(
      await one("SELECT SUM(product_price) FROM jaffle.order_items WHERE is_food_item"),
      6,
    );
    expect(await one(metric("median_revenue").sql!)).toBeCloseTo(
      await one("SELECT MEDIAN(product_price) FROM jaffle.order_items"),
      6,
    );
  });

  it("metric filters: a customer's first order, orders of 20 or more, food orders", async () => {
    const n = (where: string) => one(`SELECT COUNT(*) FROM jaffle.orders WHERE ${where}`);
    expect(await one(metric("new_customer_orders").sql!)).toBe(await n("customer_order_number = 1"));
    expect(await one(metric("large_orders").sql!)).toBe(await n("order_total >= 20"));
    expect(await one(metric("food_orders").sql!)).toBe(await n("is_food_order"));
    // The data has both sides of each filter, so a dropped filter would not pass.
    expect(await n("customer_order_number = 1")).toBeLessThan(await n("true"));
    expect(await n("order_total >= 20")).toBeLessThan(await n("true"));
  });

  it("a ratio: numerator and denominator aggregated apart, then divided", async () => {
    const hand = await one(
      "SELECT SUM(CASE WHEN is_food_item THEN product_price ELSE 0 END) / SUM(product_price) FROM jaffle.order_items",
    );
    expect(await one(metric("food_revenue_pct").sql!)).toBeCloseTo(hand, 9);
    expect(hand).toBeGreaterThan(0);
    expect(hand).toBeLessThan(1);
  });

  it("derived metrics across two tables, aggregated apart (no fan-out)", async () => {
    const revenue = await one("SELECT SUM(product_price) FROM jaffle.order_items");
    const cost = await one("SELECT SUM(order_cost) FROM jaffle.orders");
    expect(await one(metric("order_gross_profit").sql!)).toBeCloseTo(revenue - cost, 6);
    // Joined first, each order's cost would count once per item: the wrong number, and a different one.
    const fannedOut = await one(
      "SELECT SUM(i.product_price) - SUM(o.order_cost) FROM jaffle.order_items i JOIN jaffle.orders o USING (order_id)",
    );
    expect(fannedOut).not.toBeCloseTo(revenue - cost, 2);
    expect(await one(metric("average_order_value").sql!)).toBeCloseTo(
      await one("SELECT SUM(lifetime_spend_pretax) / SUM(count_lifetime_orders) FROM jaffle.customers"),
      9,
    );
  });

  it("metric_time at a grain: revenue by month and the food share by quarter", async () => {
    const semantic = readSemanticManifest(
      readFileSync(path.join(JAFFLE, "target/semantic_manifest.json"), "utf8"),
    );
    const index = new SemanticIndex(semantic, (m) => `jaffle.${m.node_relation.alias}`, "duckdb");
    const byMonth = index.compile("revenue", "month");
    if (!("sql" in byMonth)) throw new Error(JSON.stringify(byMonth));
    const got = await rows(`${byMonth.sql} ORDER BY 1`);
    const want = await rows(
      "SELECT CAST(date_trunc('month', ordered_at) AS DATE) AS m, SUM(product_price) AS v FROM jaffle.order_items GROUP BY 1 ORDER BY 1",
    );
    expect(got.length).toBe(3);
    expect(got.map((r) => [String(r.metric_time), Number(r.revenue).toFixed(2)])).toEqual(
      want.map((r) => [String(r.m), Number(r.v).toFixed(2)]),
    );
    const share = index.compile("food_revenue_pct", "quarter");
    if (!("sql" in share)) throw new Error(JSON.stringify(share));
    expect((await rows(share.sql)).length).toBe(1);
  });

  it("a filter on another model's dimension joins along the foreign entity, many to one", async () => {
    const semantic = readSemanticManifest(
      readFileSync(path.join(JAFFLE, "target/semantic_manifest.json"), "utf8"),
    );
    semantic.metrics.push({
      ...semantic.metrics.find((m) => m.name === "orders")!,
      name: "returning_customer_orders",
      filter: {
        where_filters: [{ where_sql_template: "{{ Dimension('customer__customer_type') }} = 'returning'" }],
      },
    });
    const index = new SemanticIndex(semantic, (m) => `jaffle.${m.node_relation.alias}`, "duckdb");
    const c = index.compile("returning_customer_orders");
    if (!("sql" in c)) throw new Error(JSON.stringify(c));
    expect(c.tables.sort()).toEqual(["jaffle.customers", "jaffle.orders"]);
    expect(await one(c.sql)).toBe(
      await one(
        "SELECT COUNT(*) FROM jaffle.orders o JOIN jaffle.customers c USING (customer_id) WHERE c.customer_type = 'returning'",
      ),
    );
  });

  it("every compiled metric passed the warehouse's dry run", () => {
    const compiled = layer.metrics.filter((m) => m.sql);
    expect(compiled.length).toBe(17);
    expect(layer.metrics.filter((m) => m.failedSql)).toEqual([]);
  });
});

describe("dbt import: BigQuery's dialect", () => {
  it("truncates dates with DATE_TRUNC, weeks from Monday, divides with SAFE_DIVIDE, names tables in backticks", () => {
    const semantic = readSemanticManifest(
      readFileSync(path.join(JAFFLE, "target/semantic_manifest.json"), "utf8"),
    );
    const index = new SemanticIndex(semantic, (m) => `proj.jaffle.${m.node_relation.alias}`, "bigquery");
    const week = index.compile("revenue", "week");
    expect("sql" in week && week.sql).toBe(
      "SELECT DATE_TRUNC(CAST(ordered_at AS DATE), WEEK(MONDAY)) AS metric_time, SUM(product_price) AS revenue FROM `proj.jaffle.order_items` GROUP BY 1",
    );
    const pct = index.compile("food_revenue_pct");
    expect("sql" in pct && pct.sql).toMatch(
      /^SELECT SAFE_DIVIDE\(food_revenue, revenue\) AS food_revenue_pct FROM \(/,
    );
    expect(index.compile("median_revenue")).toEqual({
      noSql: expect.stringMatching(/BigQuery has no exact percentile/),
    });
  });
});

describe("dbt import: bad input is refused naming the file, and nothing is kept", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "quarry-dbt-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function project(edit: (manifest: string, semantic: string) => [string, string]): string {
    const p = mkdtempSync(path.join(dir, "p-"));
    cpSync(path.join(JAFFLE, "target"), path.join(p, "target"), { recursive: true });
    const [m, s] = edit(
      readFileSync(path.join(p, "target/manifest.json"), "utf8"),
      readFileSync(path.join(p, "target/semantic_manifest.json"), "utf8"),
    );
    writeFileSync(path.join(p, "target/manifest.json"), m);
    writeFileSync(path.join(p, "target/semantic_manifest.json"), s);
    return p;
  }
  const refusal = (p: string) =>
    importDbtProject(p, warehouse, { map: MAP }).then(
      () => undefined,
      (e: unknown) => e,
    );

  it("a truncated manifest: not valid JSON, with the file and line", async () => {
    const err = await refusal(project((m, s) => [m.slice(0, 5000), s]));
    expect(err).toBeInstanceOf(ImportError);
    expect((err as Error).message).toMatch(
      /manifest\.json: not valid JSON at line \d+ .*Run dbt parse again/,
    );
  });

  it("an unknown schema version, named", async () => {
    const err = await refusal(project((m, s) => [m.replace("manifest/v12.json", "manifest/v13.json"), s]));
    expect((err as Error).message).toMatch(/manifest schema ".*v13\.json" is not one Quarry reads/);
  });

  it("a metric naming a measure that does not exist, named with its file", async () => {
    const err = await refusal(
      project((m, s) => {
        const sm = JSON.parse(s);
        sm.metrics.find((x: { name: string }) => x.name === "revenue").type_params.measure.name = "revenu";
        return [m, JSON.stringify(sm)];
      }),
    );
    expect((err as Error).message).toBe(
      'models/marts/order_items.yml: metric "revenue" (metric.jaffle_shop.revenue): it uses the measure "revenu", which no semantic model defines',
    );
  });

  it("no artifacts and no dbt YAML: says it is not a dbt project; a missing folder is named", async () => {
    const empty = mkdtempSync(path.join(dir, "empty-"));
    expect(((await refusal(empty)) as Error).message).toMatch(
      /no target\/manifest\.json and no models, sources or semantic models in its YAML; is this a dbt project\?/,
    );
    expect(((await refusal(path.join(dir, "nope"))) as Error).message).toMatch(/nope: no such folder/);
  });
});

/**
 * dbt's latest semantic-layer spec (dbt Fusion, dbt Core 1.12: semantic models and their metrics
 * declared on the models), read from YAML: jaffle-shop's semantic layer as dbt Labs' own migration
 * tool writes it (test/fixtures/dbt/autofix-jaffle/latest, Apache-2.0), and the same project in
 * the legacy spec beside it (…/legacy), over the jaffle-shop marts in real DuckDB. Each metric's
 * numbers against SQL written by hand, the two specs against each other, both specs in one
 * project, and wrong YAML refused naming its file and line.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { importDbtProject } from "../../../functions/src/context/imports/project";
import type { ImportedLayer } from "../../../functions/src/context/imports/types";
import { closeWarehouses, getWarehouse } from "../../../functions/src/tools";
import type { Warehouse } from "../../../functions/src/tools/types";
import { testConfig } from "../agent/harness";
import { firstNumber, jaffleFiles } from "./jaffle";

const FIXTURE = path.resolve(__dirname, "../../fixtures/dbt/autofix-jaffle");
const LATEST = path.join(FIXTURE, "latest");
const LEGACY = path.join(FIXTURE, "legacy");

let warehouse: Warehouse;
let latest: ImportedLayer;
let legacy: ImportedLayer;
const dirs: string[] = [];
beforeAll(async () => {
  warehouse = await getWarehouse(testConfig({ QUARRY_DUCKDB_FILES: jaffleFiles() }).warehouse);
  latest = await importDbtProject(LATEST, warehouse, { dataset: "jaffle" });
  legacy = await importDbtProject(LEGACY, warehouse, { dataset: "jaffle" });
}, 60_000);
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  return closeWarehouses();
});

const one = (sql: string) => firstNumber(warehouse, sql);
const sqlIn = (layer: ImportedLayer, name: string) => {
  const m = layer.metrics.find((x) => x.name === name);
  if (!m?.sql) throw new Error(`${name}: ${m?.noSql ?? "not imported"}`);
  return m.sql;
};
const sqlOf = (name: string) => sqlIn(latest, name);
const O = "jaffle.orders";
const I = "jaffle.order_items";
const C = "jaffle.customers";

/** A project folder made of the fixture's files (`from` relative to the fixture) and inline files. */
function project(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "quarry-dbt-latest-"));
  dirs.push(dir);
  mkdirSync(path.join(dir, "models"));
  writeFileSync(path.join(dir, "dbt_project.yml"), "name: mixed\n");
  for (const [name, from] of Object.entries(files)) {
    const file = path.join(dir, "models", name);
    if (from.endsWith(".yml") && !from.includes("\n")) cpSync(path.join(FIXTURE, from), file);
    else writeFileSync(file, from);
  }
  return dir;
}

/** The 1-based line of the first line of `file` (under the fixture) after `after` that contains `text`. */
function lineIn(file: string, after: string, text: string): number {
  const lines = readFileSync(path.join(FIXTURE, file), "utf8").split("\n");
  const from = lines.findIndex((l) => l.includes(after));
  const i = lines.findIndex((l, n) => n > from && l.includes(text));
  if (i < 0) throw new Error(`${file} has no "${text}"`);
  return i + 1;
}

/** The message an import of `files` is refused with. */
async function refusal(files: Record<string, string>): Promise<string> {
  const err = await importDbtProject(project(files), warehouse, { dataset: "jaffle" }).catch(
    (e: unknown) => e,
  );
  if (!(err instanceof Error)) throw new Error("imported, not refused");
  return err.message;
}

describe("dbt's latest YAML spec (jaffle-shop as dbt-autofix migrates it)", () => {
  it("reads semantic models from the models' columns: entities, dimensions, and joins along foreign entities", () => {
    expect(latest.project).toBe("dbt_autofix_tests");
    expect(latest.tables.map((t) => t.table).sort()).toEqual([
      "jaffle.customers",
      "jaffle.order_items",
      "jaffle.orders",
      "jaffle.products",
    ]);
    expect(
      latest.joins.map((j) => `${j.from.table}.${j.from.column}>${j.to.table}.${j.to.column}`).sort(),
    ).toEqual([
      "jaffle.order_items.order_id>jaffle.orders.order_id", // an entity named as its column
      "jaffle.order_items.product_id>jaffle.products.product_id",
      "jaffle.orders.customer_id>jaffle.customers.customer_id",
    ]);
    expect(latest.metrics.find((m) => m.name === "orders")!.origin).toEqual({
      id: "metric.dbt_autofix_tests.orders",
      file: "models/orders.yml",
    });
    expect(latest.metrics.find((m) => m.name === "order_total")!.label).toBe("Order Total");
  });

  it("simple metrics with their own agg and expr: a count, a sum of the column named as the metric, an expression, the median", async () => {
    expect(await one(sqlOf("orders"))).toBe(await one(`SELECT COUNT(*) FROM ${O}`));
    expect(await one(sqlOf("order_total"))).toBeCloseTo(await one(`SELECT SUM(order_total) FROM ${O}`), 6);
    expect(await one(sqlOf("order_cost"))).toBeCloseTo(await one(`SELECT SUM(order_cost) FROM ${O}`), 6);
    expect(await one(sqlOf("revenue"))).toBeCloseTo(await one(`SELECT SUM(product_price) FROM ${I}`), 6);
    expect(await one(sqlOf("food_revenue"))).toBeCloseTo(
      await one(`SELECT SUM(product_price) FROM ${I} WHERE is_food_item`),
      6,
    );
    expect(await one(sqlOf("median_revenue"))).toBeCloseTo(
      await one(`SELECT MEDIAN(product_price) FROM ${I}`),
      6,
    );
    expect(await one(sqlOf("lifetime_spend_pretax"))).toBeCloseTo(
      await one(`SELECT SUM(lifetime_spend_pretax) FROM ${C}`),
      6,
    );
  });

  it("metric filters on dimensions declared on columns, one named apart from its column", async () => {
    expect(await one(sqlOf("new_customer_orders"))).toBe(
      await one(`SELECT COUNT(*) FROM ${O} WHERE customer_order_number = 1`),
    );
    // order_total_dim is the dimension on the order_total column.
    const large = await one(`SELECT COUNT(*) FROM ${O} WHERE order_total >= 20`);
    expect(large).toBeGreaterThan(0);
    expect(large).toBeLessThan(await one(`SELECT COUNT(*) FROM ${O}`));
    expect(await one(sqlOf("large_orders"))).toBe(large);
    expect(await one(sqlOf("food_orders"))).toBe(await one(`SELECT COUNT(*) FROM ${O} WHERE is_food_order`));
  });

  it("ratio and derived metrics, under a model and at the top level, across models", async () => {
    const revenue = await one(`SELECT SUM(product_price) FROM ${I}`);
    const food = await one(`SELECT SUM(product_price) FROM ${I} WHERE is_food_item`);
    expect(await one(sqlOf("food_revenue_pct"))).toBeCloseTo(food / revenue, 9);
    expect(await one(sqlOf("average_order_value"))).toBeCloseTo(
      await one(`SELECT SUM(lifetime_spend_pretax) / SUM(count_lifetime_orders) FROM ${C}`),
      9,
    );
    expect(await one(sqlOf("order_gross_profit"))).toBeCloseTo(
      revenue - (await one(`SELECT SUM(order_cost) FROM ${O}`)),
      6,
    );
    expect(await one(sqlOf("multi_model_derived_metric"))).toBeCloseTo(
      revenue / (await one(`SELECT COUNT(*) FROM ${O} WHERE is_food_order`)),
      9,
    );
  });

  it("imports cumulative, offset and conversion metrics without SQL, saying why; an expr defaulting to a missing column fails the dry run", () => {
    const why = (name: string) => latest.metrics.find((m) => m.name === name)!.noSql;
    expect(why("cumulative_revenue")).toMatch(/cumulative/);
    expect(why("revenue_growth_mom")).toMatch(/offset/);
    expect(why("conversion_metric")).toMatch(/conversion/);
    // A percentile helper without expr reads a column named as the metric, which the mart lacks.
    expect(why("lifetime_spend_p99_discrete")).toMatch(/does not pass the warehouse's dry run/);
  });

  it("the same project in the legacy spec gives the same numbers, metric by metric", async () => {
    const both = legacy.metrics.filter((m) => m.sql).map((m) => m.name);
    expect(both.length).toBeGreaterThanOrEqual(14);
    for (const name of both) {
      expect([name, await one(sqlOf(name))]).toEqual([name, await one(sqlIn(legacy, name))]);
    }
    expect(latest.joins.map((j) => JSON.stringify([j.from, j.to])).sort()).toEqual(
      legacy.joins.map((j) => JSON.stringify([j.from, j.to])).sort(),
    );
    expect(latest.queries.map((q) => q.name).sort()).toEqual(legacy.queries.map((q) => q.name).sort());
  });

  it("both specs in one project: a latest-spec metric filtered through a legacy semantic model, and a ratio across the two", async () => {
    const mixed = await importDbtProject(
      project({
        "orders.yml": "latest/models/orders.yml",
        "order_items.yml": "latest/models/order_items.yml",
        "customers.yml": "legacy/models/customers.yml",
        "products.yml": "legacy/models/products.yml",
        "cross_spec.yml": `metrics:
  - name: jaffle_revenue
    description: Revenue from jaffles (the product type is declared in the legacy spec).
    type: derived
    expr: revenue
    input_metrics:
      - name: revenue
        filter: "{{ Dimension('product__product_type') }} = 'jaffle'"
  - name: order_total_per_lifetime_order
    type: ratio
    numerator: order_total
    denominator: count_lifetime_orders
`,
      }),
      warehouse,
      { dataset: "jaffle" },
    );
    expect(mixed.joins.map((j) => `${j.from.table}.${j.from.column}>${j.to.table}.${j.to.column}`)).toEqual(
      expect.arrayContaining([
        "jaffle.orders.customer_id>jaffle.customers.customer_id",
        "jaffle.order_items.product_id>jaffle.products.product_id",
      ]),
    );
    const jaffles = await one(
      `SELECT SUM(i.product_price) FROM ${I} i JOIN jaffle.products p USING (product_id) WHERE p.product_type = 'jaffle'`,
    );
    expect(jaffles).toBeLessThan(await one(`SELECT SUM(product_price) FROM ${I}`));
    expect(await one(sqlIn(mixed, "jaffle_revenue"))).toBeCloseTo(jaffles, 6);
    expect(await one(sqlIn(mixed, "order_total_per_lifetime_order"))).toBeCloseTo(
      (await one(`SELECT SUM(order_total) FROM ${O}`)) /
        (await one(`SELECT SUM(count_lifetime_orders) FROM ${C}`)),
      9,
    );
    // The legacy derived metric still reads its legacy measures.
    expect(await one(sqlIn(mixed, "average_order_value"))).toBeCloseTo(
      await one(sqlOf("average_order_value")),
      9,
    );
  });
});

describe("wrong latest-spec YAML is refused naming the file and line", () => {
  it("a metric defined in both specs (a half-migrated project)", async () => {
    const message = await refusal({
      "orders.yml": "latest/models/orders.yml",
      "order_items.yml": "legacy/models/order_items.yml",
    });
    const legacyAt = lineIn("legacy/models/order_items.yml", "metrics:", "- name: order_cost");
    const latestAt = lineIn("latest/models/orders.yml", "    metrics:", "- name: order_cost");
    expect(message).toBe(
      `models/orders.yml:${latestAt}: the metric "order_cost" is defined twice (also at models/order_items.yml:${legacyAt})`,
    );
  });

  const model = (body: string) => ({
    "m.yml": `models:
  - name: orders
${body}`,
  });

  it("a simple metric without agg, or with one dbt does not know", async () => {
    const body = `    semantic_model:
      enabled: true
    agg_time_dimension: ordered_at
    columns:
      - name: ordered_at
        granularity: day
        dimension:
          type: time
    metrics:
      - name: order_total
        type: simple
`;
    expect(await refusal(model(body))).toBe(
      'models/m.yml:12: metric "order_total": the aggregation (agg) is missing: write one of sum, min, max, count_distinct, sum_boolean, average, percentile, median, count',
    );
    expect(await refusal(model(`${body}        agg: total\n`))).toMatch(
      /^models\/m\.yml:12: metric "order_total": the aggregation \(agg\) "total" is not one dbt knows/,
    );
  });

  it("a simple metric under a model without a semantic model, or at the top level with agg", async () => {
    expect(
      await refusal(
        model(`    metrics:
      - name: orders
        agg: count
        expr: 1
`),
      ),
    ).toBe(
      'models/m.yml:4: metric "orders": a simple metric under model "orders" needs the model\'s semantic model (semantic_model: {enabled: true})',
    );
    expect(
      await refusal({
        "m.yml": `metrics:
  - name: orders
    type: simple
    agg: count
    expr: 1
`,
      }),
    ).toMatch(
      /^models\/m\.yml:2: metric "orders": a simple metric with agg belongs under its model's metrics:/,
    );
  });

  it("semantic_model without enabled, and entity or dimension types dbt does not know", async () => {
    expect(
      await refusal(
        model(`    semantic_model:
      name: orders_sm
`),
      ),
    ).toBe('models/m.yml:3: model "orders": semantic_model needs enabled: true (or false)');
    expect(
      await refusal(
        model(`    semantic_model: true
    columns:
      - name: order_id
        entity: primary
      - name: status
        dimension: category
`),
      ),
    ).toMatch(/^models\/m\.yml:8: column "status": the dimension type "category" is not one dbt knows/);
    // A derived entity typed like a dimension, as dbt-autofix's own locations test writes it.
    expect(
      await refusal(
        model(`    semantic_model:
      enabled: true
    derived_semantics:
      entities:
        - name: not_mergeable_entity
          type: categorical
          expr: location + " " + location_name
`),
      ),
    ).toMatch(
      /^models\/m\.yml:7: the derived entity "not_mergeable_entity": its type "categorical" is not one dbt knows/,
    );
  });
});

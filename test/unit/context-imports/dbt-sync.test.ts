/**
 * An imported dbt layer in use and kept in sync: the agent's knowledge takes it (authored context
 * winning, the warehouse as it is now), data scope prunes it like authored context, and a
 * re-import's diff names what changed. Real DuckDB, the real public fixture (see dbt-import.test.ts).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  KnowledgeBase,
  loadKnowledge,
  parseContextFile,
  validateAgainstWarehouse,
} from "../../../functions/src/context";
import { diffImports } from "../../../functions/src/context/imports/diff";
import { importDbtProject } from "../../../functions/src/context/imports/project";
import { readActiveImport, writeActiveImport } from "../../../functions/src/context/imports/store";
import type { ImportedLayer } from "../../../functions/src/context/imports/types";
import { scopedKnowledge } from "../../../functions/src/context/scoped-knowledge";
import { closeWarehouses, getWarehouse } from "../../../functions/src/tools";
import { limitedScope } from "../../../functions/src/tools/scope";
import type { Warehouse } from "../../../functions/src/tools/types";
import { testConfig } from "../agent/harness";
import { JAFFLE, MAP, changedJaffle, jaffleFiles } from "./jaffle";

let warehouse: Warehouse;
let layer: ImportedLayer;
let tmp: string;

beforeAll(async () => {
  warehouse = await getWarehouse(testConfig({ QUARRY_DUCKDB_FILES: jaffleFiles() }).warehouse);
  layer = await importDbtProject(JAFFLE, warehouse, { map: MAP });
  tmp = mkdtempSync(path.join(os.tmpdir(), "quarry-dbt-sync-"));
}, 60_000);
afterAll(async () => {
  rmSync(tmp, { recursive: true, force: true });
  await closeWarehouses();
});

/** A context folder with `authored` as its one YAML file and the fixture's import active. */
function contextDir(authored?: string): string {
  const dir = mkdtempSync(path.join(tmp, "ctx-"));
  if (authored) writeFileSync(path.join(dir, "jaffle.yaml"), authored);
  writeActiveImport(dir, layer);
  return dir;
}

describe("an imported layer in the agent's knowledge", () => {
  it("brings a metric's compiled SQL and the tables' notes to a question that names it", async () => {
    const { knowledge, report } = await loadKnowledge(contextDir(), warehouse, { strict: true });
    expect(report.imported).toHaveLength(1);
    const k = knowledge.forQuestion("What was food revenue last month?");
    const food = k.glossary.find((g) => g.term === "food revenue")!;
    expect(food.sql).toBe(layer.metrics.find((m) => m.name === "food_revenue")!.sql);
    expect(food.meaning).toMatch(/dbt metric food_revenue, models\/marts\/order_items\.yml/);
    expect(knowledge.declaredJoins()).toContainEqual({
      from: { table: "jaffle.order_items", column: "order_id" },
      to: { table: "jaffle.orders", column: "order_id" },
      cardinality: "many_to_one",
    });
    expect(knowledge.allNotes()["jaffle.customers.customer_type"]).toMatch(/Values: new, returning\./);
  });

  it("lets authored context win: an authored term and an authored column note replace the imported ones", async () => {
    const authored = [
      "dataset: jaffle",
      "glossary:",
      "  - term: revenue",
      "    meaning: Our own revenue, authored in Quarry.",
      "    sql: SELECT SUM(order_total) FROM jaffle.orders",
      "tables:",
      "  customers:",
      "    columns:",
      "      customer_type: Authored note on the type.",
      "",
    ].join("\n");
    const { knowledge } = await loadKnowledge(contextDir(authored), warehouse, { strict: true });
    const revenue = knowledge.forQuestion("total revenue").glossary.filter((g) => g.term === "revenue");
    expect(revenue).toEqual([expect.objectContaining({ meaning: "Our own revenue, authored in Quarry." })]);
    expect(knowledge.allNotes()["jaffle.customers.customer_type"]).toBe("Authored note on the type.");
  });

  it("leaves out what the warehouse no longer has (drift): no note or metric on a dropped table reaches a prompt", async () => {
    const dir = contextDir();
    const edited: ImportedLayer = JSON.parse(
      readFileSync(path.join(dir, "imported/dbt-jaffle_shop.json"), "utf8"),
    );
    edited.tables.push({
      table: "jaffle.gone",
      description: "A table dropped since.",
      columns: [],
      origin: { id: "model.x.gone" },
    });
    edited.metrics.push({
      ...edited.metrics[0],
      name: "gone_metric",
      tables: ["jaffle.gone"],
      sql: "SELECT 1 FROM jaffle.gone",
    });
    writeFileSync(path.join(dir, "imported/dbt-jaffle_shop.json"), JSON.stringify(edited));
    const { knowledge } = await loadKnowledge(dir, warehouse, { strict: true });
    expect(knowledge.allNotes()["jaffle.gone"]).toBeUndefined();
    expect(knowledge.forQuestion("gone metric").glossary.map((g) => g.term)).not.toContain("gone metric");
  });

  it("obeys data scope like authored context: a person without the dataset gets nothing of it", async () => {
    const { knowledge } = await loadKnowledge(contextDir(), warehouse, { strict: true });
    const datasets = ["jaffle", "shop"];
    const outsider = scopedKnowledge(knowledge, limitedScope(["shop"]), datasets);
    expect(outsider.forQuestion("food revenue by month").glossary).toEqual([]);
    expect(outsider.allNotes()).toEqual({});
    // Only the orders table: terms over order_items are out, the orders ones stay.
    const ordersOnly = scopedKnowledge(knowledge, limitedScope(["jaffle.orders"]), datasets);
    const terms = ordersOnly.forQuestion("large orders and food revenue").glossary.map((g) => g.term);
    expect(terms).toContain("large orders");
    expect(terms).not.toContain("food revenue");
    expect(Object.keys(ordersOnly.allNotes()).every((k) => k.startsWith("jaffle.orders"))).toBe(true);
  });
});

describe("re-importing: the diff against the active import", () => {
  it("a renamed column and a changed metric filter are listed, and SQL that no longer runs is flagged; nothing else", async () => {
    const { project: p, warehouse: rebuilt } = await changedJaffle(tmp);
    const dir = contextDir();
    const before = readActiveImport(dir, "dbt", "jaffle_shop")!;
    const after = await importDbtProject(p, rebuilt, { map: MAP });
    const changes = diffImports(before, after).map(
      (c) => `${c.kind}: ${c.item}${c.kind === "column renamed" ? ` ${c.detail}` : ""}`,
    );
    expect(changes.sort()).toEqual([
      "column renamed: jaffle.orders.order_cost now order_cost_usd",
      "metric broken: order_cost",
      "metric broken: order_gross_profit",
      "metric changed: large_orders",
    ]);
    expect(after.metrics.find((m) => m.name === "order_cost")!.noSql).toMatch(
      /does not pass the warehouse's dry run/,
    );
    expect(after.metrics.find((m) => m.name === "large_orders")!.sql).toMatch(/>= 50/);
    // --dry-run's part: the active import is untouched until written.
    expect(readActiveImport(dir, "dbt", "jaffle_shop")).toEqual(before);
  });
});

describe("joins written in a context file", () => {
  it("are checked against the warehouse with their line, and declared like imported ones", async () => {
    const text = [
      "dataset: jaffle",
      "joins:",
      "  - from: orders.customer_id",
      "    to: customers.customer_id",
      "  - from: orders.location_id",
      "    to: locations.locaton_id",
      "    cardinality: many_to_one",
      "",
    ].join("\n");
    const parsed = parseContextFile(text, "jaffle.yaml");
    const err = await validateAgainstWarehouse(parsed, warehouse, "jaffle.yaml").catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/jaffle\.yaml:6: column "locaton_id" is not in jaffle\.locations/);
    const good = parseContextFile(text.replace("locaton_id", "location_id"), "jaffle.yaml");
    await validateAgainstWarehouse(good, warehouse, "jaffle.yaml");
    expect(new KnowledgeBase([good.context]).declaredJoins()).toEqual([
      {
        from: { table: "jaffle.orders", column: "customer_id" },
        to: { table: "jaffle.customers", column: "customer_id" },
        cardinality: "many_to_one",
      },
      {
        from: { table: "jaffle.orders", column: "location_id" },
        to: { table: "jaffle.locations", column: "location_id" },
        cardinality: "many_to_one",
      },
    ]);
  });
});

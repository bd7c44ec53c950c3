/**
 * Importing a real public LookML project (test/fixtures/lookml/thelook: Looker's sample e-commerce
 * project as published in looker-open-source/pylookml, MIT) parsed by lookml-parser, against real
 * DuckDB holding its five base tables (test/fixtures/lookml/thelook-data, rows written for these
 * tests): what becomes what, and measures' numbers against SQL written by hand.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildCatalog, linkHints, linkSchema, loadKnowledge } from "../../../functions/src/context";
import { importLookmlProject } from "../../../functions/src/context/imports/project";
import { writeActiveImport } from "../../../functions/src/context/imports/store";
import type { ImportedLayer } from "../../../functions/src/context/imports/types";
import { closeWarehouses, getWarehouse } from "../../../functions/src/tools";
import type { Warehouse } from "../../../functions/src/tools/types";
import { testConfig } from "../agent/harness";
import { firstNumber } from "./jaffle";

const THELOOK = path.resolve(__dirname, "../../fixtures/lookml/thelook");
const DATA = path.resolve(__dirname, "../../fixtures/lookml/thelook-data");
const TABLES = ["order_items", "users", "inventory_items", "products", "distribution_centers"];
const FILES = TABLES.map((t) => `thelook.${t}=${path.join(DATA, `${t}.csv`)}`).join(",");
const MAP = { "looker-private-demo.ecomm": "thelook" };

let warehouse: Warehouse;
let layer: ImportedLayer;
beforeAll(async () => {
  warehouse = await getWarehouse(testConfig({ QUARRY_DUCKDB_FILES: FILES }).warehouse);
  layer = await importLookmlProject(THELOOK, warehouse, { map: MAP });
}, 60_000);
afterAll(() => closeWarehouses());

const one = (sql: string) => firstNumber(warehouse, sql);
const metric = (name: string) => layer.metrics.find((m) => m.name === name)!;
const sqlOf = (name: string) => {
  const m = metric(name);
  if (!m?.sql) throw new Error(`${name}: ${m?.noSql ?? "not imported"}`);
  return m.sql;
};
const OI = "thelook.order_items";

describe("LookML import (thelook)", () => {
  it("maps the views on tables to the warehouse and says why derived tables are left out", () => {
    expect(layer.tables.map((t) => t.table).sort()).toEqual(TABLES.map((t) => `thelook.${t}`).sort());
    const derived = layer.notices.filter((n) => /derived table/.test(n.message)).map((n) => n.item);
    expect(derived).toContain("view.order_facts");
    expect(layer.tables.find((t) => t.table === "thelook.products")!.origin.file).toBe(
      "views/04_products.view.lkml",
    );
  });

  it("turns explores' joins into declared joins with their relationship", () => {
    const joins = layer.joins.map(
      (j) => `${j.from.table}.${j.from.column}>${j.to.table}.${j.to.column}:${j.cardinality}`,
    );
    expect(joins).toContain("thelook.order_items.user_id>thelook.users.id:many_to_one");
    expect(joins).toContain("thelook.order_items.inventory_item_id>thelook.inventory_items.id:one_to_one");
    expect(joins).toContain("thelook.inventory_items.product_id>thelook.products.id:many_to_one");
  });

  it("measures: sums, distinct counts, the median, a yes/no filter, and a number over other measures", async () => {
    expect(await one(sqlOf("order_items.total_sale_price"))).toBeCloseTo(
      await one(`SELECT SUM(sale_price) FROM ${OI}`),
      6,
    );
    expect(await one(sqlOf("order_items.order_count"))).toBe(
      await one(`SELECT COUNT(DISTINCT order_id) FROM ${OI}`),
    );
    expect(await one(sqlOf("order_items.median_sale_price"))).toBeCloseTo(
      await one(`SELECT MEDIAN(sale_price) FROM ${OI}`),
      6,
    );
    const returned = await one(`SELECT COUNT(DISTINCT id) FROM ${OI} WHERE returned_at IS NOT NULL`);
    expect(returned).toBeGreaterThan(0);
    expect(await one(sqlOf("order_items.returned_count"))).toBe(returned);
    expect(await one(sqlOf("order_items.return_rate"))).toBeCloseTo(
      returned / (await one(`SELECT COUNT(*) FROM ${OI}`)),
      9,
    );
    expect(await one(sqlOf("products.brand_count"))).toBe(
      await one("SELECT COUNT(DISTINCT TRIM(brand)) FROM thelook.products"),
    );
  });

  it("imports without SQL, saying why: another view's field, a relative-date filter, BigQuery-only SQL failing the dry run", () => {
    expect(metric("order_items.average_spend_per_user").noSql).toMatch(
      /reads users\.count, a field of another view/,
    );
    expect(metric("order_items.count_last_28d").noSql).toMatch(/Looker filter expression/);
    // TIMESTAMP_DIFF is BigQuery's: DuckDB's dry run refuses it, so the measure reaches no prompt as SQL.
    expect(metric("order_items.average_shipping_time").noSql).toMatch(
      /does not pass the warehouse's dry run/,
    );
  });

  it("a LookML syntax error is refused naming the file and line", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "quarry-lookml-"));
    try {
      cpSync(THELOOK, dir, { recursive: true });
      const file = path.join(dir, "views/04_products.view.lkml");
      writeFileSync(file, readFileSync(file, "utf8").replace("dimension: sku {", "dimension: sku {{"));
      const err = await importLookmlProject(dir, warehouse, { map: MAP }).catch((e: unknown) => e);
      expect((err as Error).message).toMatch(/^views\/04_products\.view\.lkml:\d+: not valid LookML/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("declared joins steer schema linking (thelook: keys not named alike)", () => {
  async function linked(question: string, withImport: boolean) {
    const dir = mkdtempSync(path.join(os.tmpdir(), "quarry-lookml-ctx-"));
    try {
      if (withImport) writeActiveImport(dir, layer);
      const { knowledge } = await loadKnowledge(dir, warehouse, { strict: true });
      const catalog = await buildCatalog(warehouse, knowledge.allNotes(), {
        joins: knowledge.declaredJoins(),
      });
      return linkSchema(catalog, question, linkHints(knowledge.forQuestion(question)));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it("joins order items to users on user_id = id, with the cardinality, only with the import", async () => {
    const q = "total sale price of order items by users traffic source";
    const withJoins = await linked(q, true);
    expect(withJoins.tables.map((t) => t.id)).toEqual(
      expect.arrayContaining(["thelook.order_items", "thelook.users"]),
    );
    expect(withJoins.joins).toContain("thelook.order_items.user_id = thelook.users.id (many to one)");
    const without = await linked(q, false);
    expect(without.joins.some((j) => j.includes("thelook.users.id"))).toBe(false);
  });

  it("bridges order items and products through inventory items along the declared edges", async () => {
    const q = "sale price of order items by products brand";
    const withJoins = await linked(q, true);
    expect(withJoins.tables.map((t) => t.id)).toContain("thelook.inventory_items");
    expect(withJoins.joins).toEqual(
      expect.arrayContaining([
        "thelook.order_items.inventory_item_id = thelook.inventory_items.id (one to one)",
        "thelook.inventory_items.product_id = thelook.products.id (many to one)",
      ]),
    );
  });
});

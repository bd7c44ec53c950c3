/** The public dbt fixture (test/fixtures/dbt/jaffle-shop) and the DuckDB tables its marts are built as. */
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadKnowledge, type KnowledgeBase } from "../../../functions/src/context";
import { importDbtProject } from "../../../functions/src/context/imports/project";
import { writeActiveImport } from "../../../functions/src/context/imports/store";
import { getWarehouse } from "../../../functions/src/tools";
import { FULL_SCOPE } from "../../../functions/src/tools/scope";
import type { Warehouse } from "../../../functions/src/tools/types";
import { testConfig } from "../agent/harness";
import { JAFFLE, JAFFLE_DATA, MAP, jaffleFiles } from "../../support/jaffle";

export { JAFFLE, JAFFLE_TABLES, MAP, jaffleFiles } from "../../support/jaffle";

const QUERY = { userId: "t", threadId: "t", runId: "t", bytesBilledSoFar: 0, scope: FULL_SCOPE };

/** A query's rows on the real warehouse, as the whole allowed data. */
async function rowsOf(warehouse: Warehouse, sql: string): Promise<Record<string, unknown>[]> {
  return (await warehouse.query(sql, QUERY)).rows as Record<string, unknown>[];
}

/** A query's first value, as a number. */
export async function firstNumber(warehouse: Warehouse, sql: string): Promise<number> {
  return Number(Object.values((await rowsOf(warehouse, sql))[0])[0]);
}

/** The jaffle-shop import made active in a fresh context folder, and the knowledge loaded from it. */
export async function importedJaffle(): Promise<{ knowledge: KnowledgeBase; dir: string }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "quarry-jaffle-"));
  const warehouse = await getWarehouse(testConfig({ QUARRY_DUCKDB_FILES: jaffleFiles() }).warehouse);
  writeActiveImport(dir, await importDbtProject(JAFFLE, warehouse, { map: MAP }));
  return { knowledge: (await loadKnowledge(dir, warehouse, { strict: true })).knowledge, dir };
}

/**
 * The fixture as the team changed it, in a folder under `tmp`, and the warehouse rebuilt from it:
 * orders.order_cost renamed order_cost_usd in the model and the warehouse, but the semantic
 * model's measure still reads order_cost; and large orders now start at 50.
 */
export async function changedJaffle(tmp: string): Promise<{ project: string; warehouse: Warehouse }> {
  const p = mkdtempSync(path.join(tmp, "p-"));
  cpSync(path.join(JAFFLE, "target"), path.join(p, "target"), { recursive: true });
  const manifest = JSON.parse(readFileSync(path.join(p, "target/manifest.json"), "utf8"));
  const cols = manifest.nodes["model.jaffle_shop.orders"].columns;
  cols.order_cost_usd = { ...cols.order_cost, name: "order_cost_usd" };
  delete cols.order_cost;
  writeFileSync(path.join(p, "target/manifest.json"), JSON.stringify(manifest));
  const semantic = JSON.parse(readFileSync(path.join(p, "target/semantic_manifest.json"), "utf8"));
  const large = semantic.metrics.find((m: { name: string }) => m.name === "large_orders");
  large.filter.where_filters[0].where_sql_template = "{{ Dimension('order_id__order_total_dim') }} >= 50";
  writeFileSync(path.join(p, "target/semantic_manifest.json"), JSON.stringify(semantic));
  const orders = path.join(p, "orders.csv");
  const csv = readFileSync(path.join(JAFFLE_DATA, "orders.csv"), "utf8").split("\n");
  writeFileSync(orders, [csv[0].replace("order_cost", "order_cost_usd"), ...csv.slice(1)].join("\n"));
  const warehouse = await getWarehouse(
    testConfig({ QUARRY_DUCKDB_FILES: jaffleFiles({ orders }) }).warehouse,
  );
  return { project: p, warehouse };
}

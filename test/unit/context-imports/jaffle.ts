/** The public dbt fixture (test/fixtures/dbt/jaffle-shop) and the DuckDB tables its marts are built as. */
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadKnowledge, type KnowledgeBase } from "../../../functions/src/context";
import { importDbtProject } from "../../../functions/src/context/imports/project";
import { writeActiveImport } from "../../../functions/src/context/imports/store";
import { getWarehouse } from "../../../functions/src/tools";
import { FULL_SCOPE } from "../../../functions/src/tools/scope";
import type { Warehouse } from "../../../functions/src/tools/types";
import { testConfig } from "../agent/harness";

const FIXTURE = path.resolve(__dirname, "../../fixtures/dbt");
export const JAFFLE = path.join(FIXTURE, "jaffle-shop");
export const JAFFLE_TABLES = ["orders", "order_items", "customers", "products", "locations", "supplies"];

/** `QUARRY_DUCKDB_FILES` for the marts as `jaffle.<table>`; `override` replaces a table's file. */
export function jaffleFiles(override: Record<string, string> = {}): string {
  return JAFFLE_TABLES.map(
    (t) => `jaffle.${t}=${override[t] ?? path.join(FIXTURE, "jaffle-data", `${t}.csv`)}`,
  ).join(",");
}
export const JAFFLE_DATA = path.join(FIXTURE, "jaffle-data");

/** The artifacts' schema (`main`, dbt-duckdb's) is `jaffle` here. */
export const MAP = { main: "jaffle" };

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

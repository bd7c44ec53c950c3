/**
 * The public dbt fixture (test/fixtures/dbt/jaffle-shop, MIT) and the DuckDB tables its marts are
 * built as (`jaffle.<table>`, from test/fixtures/dbt/jaffle-data): the unit tests' warehouse and a
 * dataset of the integration and browser stacks.
 */
import path from "node:path";

const FIXTURE = path.resolve(__dirname, "../fixtures/dbt");
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

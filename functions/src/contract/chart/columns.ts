/**
 * Column kinds from engine type names (BigQuery and DuckDB), shared by the table (sorting,
 * alignment), the chart (encoding types) and the CSV writer.
 */
import type { ColumnInfo, JsonValue } from "../events";

/** How a column behaves in a table and a chart. */
export type ColumnKind = "quantitative" | "temporal" | "nominal" | "other";

const QUANT = new Set([
  "INT64",
  "INTEGER",
  "INT",
  "SMALLINT",
  "TINYINT",
  "BIGINT",
  "HUGEINT",
  "UBIGINT",
  "UINTEGER",
  "USMALLINT",
  "UTINYINT",
  "FLOAT64",
  "FLOAT",
  "DOUBLE",
  "REAL",
  "NUMERIC",
  "BIGNUMERIC",
  "DECIMAL",
  "BIGDECIMAL",
]);
const TEMPORAL = new Set([
  "DATE",
  "DATETIME",
  "TIMESTAMP",
  "TIMESTAMP WITH TIME ZONE",
  "TIMESTAMPTZ",
  "TIMESTAMP_NS",
  "TIMESTAMP_MS",
  "TIMESTAMP_S",
]);
const NOMINAL = new Set(["STRING", "VARCHAR", "TEXT", "BOOL", "BOOLEAN", "UUID", "ENUM", "TIME"]);

/** The kind of an engine type such as `INT64`, `DECIMAL(18,3)`, `VARCHAR`, `STRUCT<...>`. */
export function columnKind(column: Pick<ColumnInfo, "type" | "mode">): ColumnKind {
  if (column.mode === "REPEATED") return "other";
  // Parameterised types: DECIMAL(18,3), NUMERIC(10), VARCHAR(20).
  const base = column.type.toUpperCase().replace(/\(.*$/, "").trim();
  if (QUANT.has(base)) return "quantitative";
  if (TEMPORAL.has(base)) return "temporal";
  if (NOMINAL.has(base)) return "nominal";
  return "other";
}

/**
 * A cell as a number, for sorting and charts. INT64 beyond 2^53 and NUMERIC arrive as strings
 * (JSON-safe), so numeric strings count; anything else is null.
 */
export function toNumber(value: JsonValue | undefined): number | null {
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (
    typeof value === "string" &&
    value.trim() !== "" &&
    /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(value.trim())
  ) {
    return Number(value);
  }
  return null;
}

/** A cell as display text: null as an empty string, objects/arrays as JSON. */
export function cellText(value: JsonValue | undefined): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

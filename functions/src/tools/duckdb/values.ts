/**
 * DuckDB values → JSON-safe values, with the same conventions as the BigQuery engine: integers
 * beyond 2^53 and DECIMALs as strings (exact), dates and timestamps as text, BLOBs as base64,
 * lists/structs recursively, maps as [{key, value}].
 */
import type { DuckDBType, DuckDBValue } from "@duckdb/node-api";
import type { ColumnInfo, JsonValue } from "../types";

type Duck = typeof import("@duckdb/node-api");

export function createNormalizer(duck: Duck): (v: DuckDBValue) => JsonValue {
  const norm = (v: DuckDBValue): JsonValue => {
    if (v === null || v === undefined) return null;
    switch (typeof v) {
      case "boolean":
      case "string":
        return v;
      case "number":
        return Number.isFinite(v) ? v : String(v);
      case "bigint":
        return v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= BigInt(Number.MIN_SAFE_INTEGER)
          ? Number(v)
          : v.toString();
    }
    if (v instanceof duck.DuckDBListValue || v instanceof duck.DuckDBArrayValue) return v.items.map(norm);
    if (v instanceof duck.DuckDBStructValue) {
      return Object.fromEntries(Object.entries(v.entries).map(([k, x]) => [k, norm(x)]));
    }
    if (v instanceof duck.DuckDBMapValue)
      return v.entries.map((e) => ({ key: norm(e.key), value: norm(e.value) }));
    if (v instanceof duck.DuckDBBlobValue) return Buffer.from(v.bytes).toString("base64");
    // Decimal, date, time, timestamp, interval, UUID, bit, union: their SQL text is exact and readable.
    return String(v);
  };
  return norm;
}

/** Column description from a DuckDB result type, with nested fields for STRUCTs. */
export function columnInfo(duck: Duck, name: string, type: DuckDBType): ColumnInfo {
  if (type instanceof duck.DuckDBStructType) {
    return {
      name,
      type: type.toString(),
      fields: type.entryNames.map((n, i) => columnInfo(duck, n, type.entryTypes[i])),
    };
  }
  if (type instanceof duck.DuckDBListType) {
    const inner = columnInfo(duck, name, type.valueType);
    return { ...inner, type: type.toString(), mode: "REPEATED" };
  }
  return { name, type: type.toString() };
}

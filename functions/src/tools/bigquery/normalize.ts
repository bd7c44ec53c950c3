/**
 * BigQuery values (as parsed by the client with `wrapIntegers` and `parseJSON`) → JSON-safe
 * values, driven by the result schema: INT64 beyond 2^53 and NUMERIC/BIGNUMERIC as exact strings,
 * DATE/DATETIME/TIME/TIMESTAMP unwrapped to their text, BYTES as base64, GEOGRAPHY as WKT, JSON
 * parsed, ARRAY and STRUCT recursively.
 */
import type { ColumnInfo, JsonValue, Row } from "../types";

/** The subset of BigQuery's TableFieldSchema we read. */
export interface BqField {
  name?: string;
  type?: string;
  mode?: string;
  description?: string;
  fields?: BqField[];
}

const SAFE = BigInt(Number.MAX_SAFE_INTEGER);

function int(value: unknown): JsonValue {
  // wrapIntegers gives BigQueryInt {value: "123"}; a plain number/string is accepted too.
  const text =
    typeof value === "object" && value !== null && "value" in value ? String(value.value) : String(value);
  const big = BigInt(text);
  return big <= SAFE && big >= -SAFE ? Number(big) : text;
}

function wrapped(value: unknown): string {
  return typeof value === "object" && value !== null && "value" in value
    ? String(value.value)
    : String(value);
}

function json(value: unknown): JsonValue {
  if (value === null || value === undefined) return null;
  if (typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number") return Number.isFinite(value) ? value : String(value);
  if (typeof value === "bigint") return value.toString();
  if (Array.isArray(value)) return value.map(json);
  if (typeof value === "object") {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, json(v)]));
  }
  return String(value);
}

/** Normalizes one value of the given field. */
function normalizeValue(field: BqField, value: unknown): JsonValue {
  if (value === null || value === undefined) return null;
  if (field.mode === "REPEATED") {
    return (value as unknown[]).map((v) => normalizeValue({ ...field, mode: "NULLABLE" }, v));
  }
  switch ((field.type ?? "").toUpperCase()) {
    case "INTEGER":
    case "INT64":
      return int(value);
    case "FLOAT":
    case "FLOAT64":
      return typeof value === "number" && Number.isFinite(value) ? value : String(value);
    case "NUMERIC":
    case "BIGNUMERIC":
      // big.js: toFixed() never switches to exponent notation, unlike toString().
      return typeof (value as { toFixed?: unknown }).toFixed === "function"
        ? (value as { toFixed(): string }).toFixed()
        : String(value);
    case "BOOLEAN":
    case "BOOL":
      return value === true || value === "true";
    case "BYTES":
      return Buffer.isBuffer(value) ? value.toString("base64") : String(value);
    case "TIMESTAMP":
      // PreciseDate prints nanoseconds; BigQuery timestamps have microseconds.
      return wrapped(value).replace(/(\.\d{6})000Z$/, "$1Z");
    case "DATE":
    case "DATETIME":
    case "TIME":
    case "GEOGRAPHY":
      return wrapped(value);
    case "JSON":
      return typeof value === "string" ? safeParse(value) : json(value);
    case "RECORD":
    case "STRUCT":
      return normalizeRow(field.fields ?? [], value as Record<string, unknown>);
    default:
      return json(
        typeof value === "object" && value !== null && "value" in value
          ? (value as { value: unknown }).value
          : value,
      );
  }
}

function safeParse(text: string): JsonValue {
  try {
    return json(JSON.parse(text));
  } catch {
    return text;
  }
}

export function normalizeRow(fields: BqField[], row: Record<string, unknown>): Row {
  const out: Row = {};
  for (const f of fields) out[f.name ?? ""] = normalizeValue(f, row[f.name ?? ""]);
  return out;
}

export function toColumns(fields: BqField[] | undefined): ColumnInfo[] {
  return (fields ?? []).map((f) => ({
    name: f.name ?? "",
    type: f.type ?? "STRING",
    ...(f.mode ? { mode: f.mode as ColumnInfo["mode"] } : {}),
    ...(f.description ? { description: f.description } : {}),
    ...(f.fields?.length ? { fields: toColumns(f.fields) } : {}),
  }));
}

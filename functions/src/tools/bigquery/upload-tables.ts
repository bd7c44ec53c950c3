/**
 * How an uploaded file becomes a BigQuery table: where it lives (the Quarry-owned uploads dataset,
 * never one of QUARRY_BQ_DATASETS), its id (one per thread and name), and its schema, mapped from
 * the DuckDB types the ingest step decided (BigQuery is given Parquet and this schema, never
 * `autodetect`). Pure: no client, no network.
 */
import type { ColumnInfo } from "../../contract/events";
import { QuarryError } from "../../errors";
import { threadKey } from "../uploads/keys";

/** The uploads dataset, resolved against the billing project. */
export interface UploadsDataset {
  projectId: string;
  datasetId: string;
}

/**
 * The uploads dataset a setting names (`dataset` or `project.dataset`), or undefined when unset.
 * Never throws: the gate uses it to fence the dataset off even when uploads are refused.
 */
export function resolveUploadsDataset(
  setting: string | undefined,
  billingProject: string,
): UploadsDataset | undefined {
  const parts = (setting ?? "").trim().replaceAll("`", "").split(".").filter(Boolean);
  if (parts.length === 1) return { projectId: billingProject, datasetId: parts[0] };
  if (parts.length === 2) return { projectId: parts[0], datasetId: parts[1] };
  return undefined;
}

/**
 * The uploads dataset, or `unavailable:uploads` (fail closed): unset, malformed, or one of the
 * warehouse's own datasets (whose tables every person in scope could list and read).
 */
export function requireUploadsDataset(
  setting: string | undefined,
  billingProject: string,
  warehouseDatasets: readonly string[],
): UploadsDataset {
  const ds = resolveUploadsDataset(setting, billingProject);
  if (!ds) {
    throw new QuarryError(
      "unavailable:uploads",
      setting?.trim()
        ? `QUARRY_BQ_UPLOADS_DATASET "${setting}" is not a dataset name; set it to dataset or project.dataset.`
        : "Files cannot be brought in as tables on this deployment: QUARRY_BQ_UPLOADS_DATASET is not set. " +
            "An admin sets it to a Quarry-owned BigQuery dataset (not one of QUARRY_BQ_DATASETS).",
    );
  }
  const full = (d: string) => (d.includes(".") ? d : `${billingProject}.${d}`);
  if (warehouseDatasets.some((d) => full(d) === `${ds.projectId}.${ds.datasetId}`)) {
    throw new QuarryError(
      "unavailable:uploads",
      `QUARRY_BQ_UPLOADS_DATASET (${ds.projectId}.${ds.datasetId}) is also in QUARRY_BQ_DATASETS, so every ` +
        "person could list and read others' files: an admin must give uploads a dataset of their own.",
    );
  }
  return ds;
}

/** The table id of thread `threadId`'s upload `name`: `u_<threadKey>_<name>` (≤ 1024 characters). */
export function uploadTableId(threadId: string, name: string): string {
  const clean = name.replace(/[^A-Za-z0-9_]/g, "_");
  return `u_${threadKey(threadId)}_${clean}`.slice(0, 1024);
}

const INTEGER = new Set([
  "TINYINT",
  "SMALLINT",
  "INTEGER",
  "BIGINT",
  "UTINYINT",
  "USMALLINT",
  "UINTEGER",
  "UBIGINT",
  "INT1",
  "INT2",
  "INT4",
  "INT8",
  "INT",
  "SHORT",
  "LONG",
]);
// DuckDB writes HUGEINT to Parquet as DOUBLE.
const FLOAT = new Set(["DOUBLE", "FLOAT", "REAL", "FLOAT4", "FLOAT8", "HUGEINT", "UHUGEINT"]);
const SAME: Record<string, string> = {
  VARCHAR: "STRING",
  TEXT: "STRING",
  STRING: "STRING",
  DATE: "DATE",
  TIME: "TIME",
  // DuckDB's TIMESTAMP has no time zone (BigQuery's DATETIME); TIMESTAMPTZ is an instant.
  TIMESTAMP: "DATETIME",
  "TIMESTAMP WITH TIME ZONE": "TIMESTAMP",
  TIMESTAMPTZ: "TIMESTAMP",
  BOOLEAN: "BOOL",
  BOOL: "BOOL",
};

/**
 * The BigQuery type for a DuckDB type name. DECIMAL(p,s) is NUMERIC when it fits (scale ≤ 9 and
 * at most 29 digits before the point), else BIGNUMERIC; anything unknown is STRING.
 */
export function bigQueryType(duckdbType: string): string {
  const t = duckdbType.trim().toUpperCase();
  if (INTEGER.has(t)) return "INT64";
  if (FLOAT.has(t)) return "FLOAT64";
  const dec = /^(?:DECIMAL|NUMERIC)\s*\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)$/.exec(t);
  if (dec) {
    const p = Number(dec[1]);
    const s = Number(dec[2] ?? 0);
    return s <= 9 && p - s <= 29 ? "NUMERIC" : "BIGNUMERIC";
  }
  if (t === "DECIMAL" || t === "NUMERIC") return "NUMERIC"; // DuckDB's default DECIMAL(18,3)
  return SAME[t] ?? "STRING";
}

/** The table schema for an upload's columns (every column NULLABLE, as Parquet from DuckDB is). */
export function uploadSchema(
  columns: readonly ColumnInfo[],
): { name: string; type: string; mode: "NULLABLE" }[] {
  return columns.map((c) => ({ name: c.name, type: bigQueryType(c.type), mode: "NULLABLE" }));
}

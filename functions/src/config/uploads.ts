/** Files a person brings into a conversation as tables (tools/uploads, http/files.ts). */
import { docsOf, int, readAll, text, type Env } from "./define";

/** The upload settings (part of `RuntimeConfig`). */
export interface UploadsConfig {
  /** Largest file, in MB, measured uncompressed (a gzip-compressed CSV is counted inflated). */
  maxMb: number;
  maxRows: number;
  maxColumns: number;
  /** Files one conversation may hold at once. */
  maxFiles: number;
  /** An uploaded table expires this many days after its upload (BigQuery table expiration, Firestore TTL). */
  ttlDays: number;
  /** The Quarry-owned BigQuery dataset uploads are loaded into; unset: uploads are refused on BigQuery. */
  bigqueryDataset: string | undefined;
  /** Where DuckDB keeps uploaded tables as Parquet, shared by every function instance of the stack. */
  duckdbDir: string | undefined;
}

const concern = "uploads";

const UPLOAD_SETTINGS = {
  maxMb: int("QUARRY_UPLOAD_MAX_MB", {
    concern,
    default: 50,
    min: 1,
    max: 500,
    description:
      "Largest file a conversation may take as a table, in MB uncompressed. A request body is at most 31 MiB (Cloud Functions' limit is 32 MiB): larger CSV/TSV files are sent gzip-compressed (`Content-Type: application/gzip`), as the page does.",
  }),
  maxRows: int("QUARRY_UPLOAD_MAX_ROWS", {
    concern,
    default: 1_000_000,
    min: 1,
    description: "Most rows an uploaded table may have.",
  }),
  maxColumns: int("QUARRY_UPLOAD_MAX_COLUMNS", {
    concern,
    default: 200,
    min: 1,
    max: 10_000,
    description: "Most columns an uploaded table may have.",
  }),
  maxFiles: int("QUARRY_UPLOAD_MAX_FILES", {
    concern,
    default: 10,
    min: 1,
    max: 100,
    description: "Most files one conversation may hold at once.",
  }),
  ttlDays: int("QUARRY_UPLOAD_TTL_DAYS", {
    concern,
    default: 7,
    min: 1,
    max: 365,
    description:
      "Days an uploaded table is kept (BigQuery table expiration and the Firestore TTL of its record).",
  }),
  bigqueryDataset: text("QUARRY_BQ_UPLOADS_DATASET", {
    concern,
    defaultText: "unset (uploads refused on BigQuery)",
    description:
      "The Quarry-owned BigQuery dataset (`dataset` or `project.dataset`) uploaded files are loaded into; it must not be in `QUARRY_BQ_DATASETS`.",
  }),
  duckdbDir: text("QUARRY_DUCKDB_UPLOADS_DIR", {
    concern,
    defaultText: "`quarry-uploads` in the OS temp dir",
    description:
      "Where the DuckDB engine keeps uploaded tables (Parquet), shared by every function instance of the stack.",
  }),
} as const;

/** The upload settings from an environment. */
export function readUploadsConfig(env: Env): UploadsConfig {
  return readAll(UPLOAD_SETTINGS, env);
}

export const UPLOADS_DOCS = docsOf(UPLOAD_SETTINGS);

/** Which warehouse answers (DuckDB locally, BigQuery in production), its budgets and result sizes. */
import { DEPLOY_SETTINGS } from "./deploy";
import { docsOf, int, list, oneOf, pairs, text, textOr, type Env } from "./define";

export interface WarehouseConfig {
  /** `duckdb` (embedded, local default) or `bigquery` (production). */
  engine: "duckdb" | "bigquery";
  bigquery: {
    /** Project that runs and pays for query jobs. */
    billingProject: string;
    /** Job location, e.g. `US` or `europe-west1`. */
    location: string;
    /** Allowed datasets as `project.dataset` (or `dataset` in the billing project). */
    datasets: string[];
    /** Largest dry-run estimate one query may have, bytes. */
    maxBytesPerQuery: number;
    /** Bytes one conversation (thread) may bill in total. */
    maxBytesPerThread: number;
    /** A job running longer is cancelled, ms. */
    timeoutMs: number;
    /** `http://host:port` of a BigQuery REST stand-in (from BIGQUERY_EMULATOR_HOST). */
    apiEndpoint?: string;
  };
  duckdb: {
    /** Database file; unset means the generated sample dataset. */
    path?: string;
    /** Extra tables from local CSV/Parquet files: table name → file path. */
    files: Record<string, string>;
    /** DuckDB's `memory_limit`, e.g. `512MB` (`readConfig` sets about half the function's memory). */
    memoryLimit?: string;
    /** DuckDB's `threads` (`readConfig` sets 1 or 2 by the function's memory). */
    threads?: number;
  };
  /** Rows kept for the client (table, chart, CSV). */
  maxRows: number;
  /** Rows the model sees. */
  previewRows: number;
  /** Characters of the preview the model sees. */
  previewChars: number;
  /** Characters of the full result kept for the client. */
  maxResultChars: number;
}

const concern = "warehouse";

const WAREHOUSE_SETTINGS = {
  engine: oneOf("QUARRY_WAREHOUSE", {
    concern,
    allowed: ["duckdb", "bigquery"],
    default: "duckdb",
    description: "`duckdb` (embedded sample data) or `bigquery`.",
  }),
  bqProject: text("QUARRY_BQ_PROJECT", {
    concern,
    defaultText: "the project id",
    description: "Project that runs and pays for query jobs.",
  }),
  bqLocation: textOr("QUARRY_BQ_LOCATION", { concern, default: "US", description: "BigQuery job location." }),
  bqDatasets: list("QUARRY_BQ_DATASETS", {
    concern,
    description: "Allowed datasets, `project.dataset` or `dataset`.",
  }),
  maxBytesPerQuery: int("QUARRY_MAX_BYTES_PER_QUERY", {
    concern,
    default: 1_000_000_000,
    description: "Largest dry-run estimate of one query, bytes.",
  }),
  maxBytesPerThread: int("QUARRY_MAX_BYTES_PER_THREAD", {
    concern,
    default: 10_000_000_000,
    description: "Bytes one conversation may bill in total.",
  }),
  queryTimeoutMs: int("QUARRY_QUERY_TIMEOUT_MS", {
    concern,
    default: 60_000,
    description: "Longer queries are cancelled (both engines).",
  }),
  bqEmulator: text("BIGQUERY_EMULATOR_HOST", {
    concern,
    scope: "platform",
    description: "`host:port` of a BigQuery REST stand-in; `npm start` passes it through.",
  }),
  duckdbPath: text("QUARRY_DUCKDB_PATH", {
    concern,
    defaultText: "the sample dataset",
    description: "A DuckDB file to open read-only instead.",
  }),
  duckdbFiles: pairs("QUARRY_DUCKDB_FILES", {
    concern,
    description: "`table=path` pairs of CSV/TSV/Parquet files to register.",
  }),
  duckdbMemoryLimit: text("QUARRY_DUCKDB_MEMORY_LIMIT", {
    concern,
    defaultText: "about half of `QUARRY_MEMORY_MIB` (`512MB` at 1024)",
    description: "DuckDB's `memory_limit`, e.g. `512MB`.",
  }),
  duckdbThreads: int("QUARRY_DUCKDB_THREADS", {
    concern,
    default: 1,
    defaultText: "`1` below 2048 MiB of memory, else `2`",
    min: 1,
    description: "DuckDB's `threads`.",
  }),
  maxRows: int("QUARRY_MAX_ROWS", { concern, default: 10_000, description: "Rows kept for the client." }),
  maxResultChars: int("QUARRY_MAX_RESULT_CHARS", {
    concern,
    default: 2_000_000,
    description: "Characters of a result kept for the client.",
  }),
  previewRows: int("QUARRY_PREVIEW_ROWS", { concern, default: 50, description: "Rows the model sees." }),
  previewChars: int("QUARRY_PREVIEW_CHARS", {
    concern,
    default: 8_000,
    description: "Characters of the preview the model sees.",
  }),
} as const;

/** The warehouse settings from an environment. */
export function readWarehouseConfig(env: Env, projectId: string): WarehouseConfig {
  const s = WAREHOUSE_SETTINGS;
  const memoryMib = DEPLOY_SETTINGS.memoryMib.read(env);
  const bqEmulator = s.bqEmulator.read(env);
  return {
    engine: s.engine.read(env) ?? "duckdb",
    bigquery: {
      billingProject: s.bqProject.read(env) || projectId,
      location: s.bqLocation.read(env),
      datasets: s.bqDatasets.read(env),
      maxBytesPerQuery: s.maxBytesPerQuery.read(env),
      maxBytesPerThread: s.maxBytesPerThread.read(env),
      timeoutMs: s.queryTimeoutMs.read(env),
      apiEndpoint: bqEmulator ? `http://${bqEmulator}` : undefined,
    },
    duckdb: {
      path: s.duckdbPath.read(env),
      files: s.duckdbFiles.read(env),
      memoryLimit: s.duckdbMemoryLimit.read(env) ?? `${Math.floor(memoryMib / 2)}MB`,
      threads: env.QUARRY_DUCKDB_THREADS ? s.duckdbThreads.read(env) : memoryMib >= 2048 ? 2 : 1,
    },
    maxRows: s.maxRows.read(env),
    previewRows: s.previewRows.read(env),
    previewChars: s.previewChars.read(env),
    maxResultChars: s.maxResultChars.read(env),
  };
}

export const WAREHOUSE_DOCS = docsOf(WAREHOUSE_SETTINGS);

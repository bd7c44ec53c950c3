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
    /** DuckDB's `memory_limit` per worker process, MiB (its buffer pool; also sizes the worker's address-space limit). */
    memoryMiB: number;
    /** DuckDB threads per worker process. */
    threads: number;
    /** Worker processes that run DuckDB apart from the function (0: in the function's own process). */
    workers: number;
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
    description:
      "CSV/TSV/Parquet files to load as tables: `table=path` (as `files.table`) or `dataset.table=path` (e.g. `finance.salaries=./salaries.csv`, a dataset beside `shop`).",
  }),
  duckdbMemoryMib: int("QUARRY_DUCKDB_MEMORY_MIB", {
    concern,
    default: 256,
    defaultText: "a quarter of `QUARRY_MEMORY_MIB` (`256` at 1024)",
    min: 64,
    max: 65_536,
    description:
      "DuckDB's `memory_limit` per worker process, MiB; the worker's address space is capped at what it takes at start plus 256 MiB plus this, so a query past it ends as a `too_large` tool error.",
  }),
  duckdbThreads: int("QUARRY_DUCKDB_THREADS", {
    concern,
    default: 1,
    min: 1,
    max: 64,
    description: "DuckDB's `threads` per worker process.",
  }),
  duckdbWorkers: int("QUARRY_DUCKDB_WORKERS", {
    concern,
    default: 2,
    min: 0,
    max: 16,
    description:
      "DuckDB worker processes per instance, started on need (a query that outgrows memory ends there, not in the function); `0` runs DuckDB in the function's own process.",
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
      memoryMiB: env.QUARRY_DUCKDB_MEMORY_MIB
        ? s.duckdbMemoryMib.read(env)
        : Math.max(Math.floor(memoryMib / 4), 64),
      threads: s.duckdbThreads.read(env),
      workers: s.duckdbWorkers.read(env),
    },
    maxRows: s.maxRows.read(env),
    previewRows: s.previewRows.read(env),
    previewChars: s.previewChars.read(env),
    maxResultChars: s.maxResultChars.read(env),
  };
}

export const WAREHOUSE_DOCS = docsOf(WAREHOUSE_SETTINGS);

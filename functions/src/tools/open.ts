/**
 * Opening the configured warehouse engine, once per instance and config. Light on purpose (the
 * function's app imports it to start the local engine early): the engines load with a dynamic
 * import on first use.
 */
import { config, type WarehouseConfig } from "../config";
import type { CredentialSource, Warehouse } from "./types";

const cache = new Map<string, Promise<Warehouse>>();
/** One source per process, so the cache keys the mode (user identity or not), not the source. */
const keyOf = (cfg: WarehouseConfig, credentials?: CredentialSource) =>
  JSON.stringify(cfg) + (credentials ? "|user" : "");

/**
 * Opens the configured engine (cached per config); DuckDB opens the generated sample dataset
 * read-only by default. `credentials` puts BigQuery in user identity mode (each person's calls with
 * their own token).
 */
export function getWarehouse(
  cfg: WarehouseConfig = config().warehouse,
  credentials?: CredentialSource,
): Promise<Warehouse> {
  const key = keyOf(cfg, credentials);
  let pending = cache.get(key);
  if (!pending) {
    pending = open(cfg, credentials);
    // A failed open (bad path, bad credentials) should be retried on the next call, not cached.
    pending.catch(() => cache.delete(key));
    cache.set(key, pending);
  }
  return pending;
}

async function open(cfg: WarehouseConfig, credentials?: CredentialSource): Promise<Warehouse> {
  if (cfg.engine === "bigquery") {
    const { BigQueryWarehouse } = await import("./bigquery/warehouse.js");
    // The uploads dataset is fenced off in every query (only a conversation's own uploads pass).
    const uploadsDataset = config().uploads.bigqueryDataset;
    return BigQueryWarehouse.create(cfg, { ...(credentials ? { credentials } : {}), uploadsDataset });
  }
  if (cfg.duckdb.workers === 0) {
    const { DuckDbWarehouse } = await import("./duckdb/warehouse.js");
    return DuckDbWarehouse.open(cfg);
  }
  // Worker processes by default: a query that outgrows memory ends there, not in the function.
  const { DuckDbPool } = await import("./duckdb/pool.js");
  return DuckDbPool.open(cfg);
}

/**
 * Starts opening the local engine now, when that means starting DuckDB's worker processes: they
 * start in processes of their own (a probe of the address space it takes, then the first worker),
 * on another core, so a fresh instance's first question finds them started instead of waiting
 * about a second with its own thread idle. Called at an instance's first admitted request; the
 * open is the one `getWarehouse` then returns (a failed one is retried there and reported to the
 * run). Nothing to do for BigQuery (a client loaded in the function's own thread would compete
 * with the request), with DuckDB in the function's own process, or in the functions emulator
 * (a worker process per concurrent request: each would start workers of its own).
 */
export function warmWarehouse(cfg: WarehouseConfig = config().warehouse): void {
  if (cfg.engine !== "duckdb" || cfg.duckdb.workers === 0 || config().inEmulator) return;
  getWarehouse(cfg).catch(() => {}); // the run that needs it reports why it could not open
}

/** Whether the engine for `cfg` (service mode) has been asked to open in this instance (tests). */
export function warehouseOpened(cfg: WarehouseConfig = config().warehouse): boolean {
  return cache.has(keyOf(cfg));
}

/** Closes every cached warehouse (tests, graceful shutdown). */
export async function closeWarehouses(): Promise<void> {
  const all = [...cache.values()];
  cache.clear();
  await Promise.all(all.map((p) => p.then((w) => w.close()).catch(() => undefined)));
}

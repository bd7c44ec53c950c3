/**
 * Public API of the warehouse layer. This module is light on purpose: the engines (DuckDB's native
 * binding, the BigQuery client) load with a dynamic import on first use, never on the function
 * entry's load path.
 */
import { config, type WarehouseConfig } from "../config";
import type { CredentialSource, Warehouse } from "./types";

export { createWarehouseTools } from "./model-tools";
export { MAX_SQL_CHARS } from "./policy";
export { auditedWarehouse } from "./audited";
export * from "./types";

const cache = new Map<string, Promise<Warehouse>>();

/**
 * Opens the configured engine (cached per config); DuckDB opens the generated sample dataset
 * read-only by default. `credentials` puts BigQuery in user identity mode (each person's calls with
 * their own token); one source per process, so the cache keys the mode, not the source.
 */
export function getWarehouse(
  cfg: WarehouseConfig = config().warehouse,
  credentials?: CredentialSource,
): Promise<Warehouse> {
  const key = JSON.stringify(cfg) + (credentials ? "|user" : "");
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

/** Closes every cached warehouse (tests, graceful shutdown). */
export async function closeWarehouses(): Promise<void> {
  const all = [...cache.values()];
  cache.clear();
  await Promise.all(all.map((p) => p.then((w) => w.close()).catch(() => undefined)));
}

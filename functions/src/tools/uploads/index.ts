/**
 * Where this deployment keeps uploaded tables: chosen from the warehouse engine, like the
 * warehouse itself. BigQuery needs a Quarry-owned uploads dataset; without one uploads are refused
 * (fail closed), never loaded somewhere a setting did not name.
 */
import type { RuntimeConfig } from "../../config";
import type { CredentialSource, UploadTarget } from "../types";
import { DuckDbUploads, duckDbUploadsDir } from "./duckdb-store";

/** The engine's upload target for this configuration. */
export async function createUploadTarget(
  cfg: RuntimeConfig,
  credentials?: CredentialSource,
): Promise<UploadTarget> {
  const ttlMs = cfg.uploads.ttlDays * 86_400_000;
  if (cfg.warehouse.engine === "duckdb")
    return new DuckDbUploads(duckDbUploadsDir(cfg.uploads.duckdbDir), ttlMs);
  const { BigQueryUploads } = await import("../bigquery/uploads.js");
  // Unset or misplaced QUARRY_BQ_UPLOADS_DATASET: every call is refused (unavailable:uploads), naming it.
  return BigQueryUploads.create(cfg.warehouse, cfg.uploads, credentials ? { credentials } : {});
}

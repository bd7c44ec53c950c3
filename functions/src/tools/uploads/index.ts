/**
 * Where this deployment keeps uploaded tables: chosen from the warehouse engine, like the
 * warehouse itself. BigQuery needs a Quarry-owned uploads dataset; without one uploads are refused
 * (fail closed), never loaded somewhere a setting did not name.
 */
import type { RuntimeConfig } from "../../config";
import { QuarryError } from "../../errors";
import type { CredentialSource, UploadTarget } from "../types";
import { DuckDbUploads, duckDbUploadsDir } from "./duckdb-store";

/** The engine's upload target for this configuration. */
export async function createUploadTarget(
  cfg: RuntimeConfig,
  _credentials?: CredentialSource,
): Promise<UploadTarget> {
  const ttlMs = cfg.uploads.ttlDays * 86_400_000;
  if (cfg.warehouse.engine === "duckdb")
    return new DuckDbUploads(duckDbUploadsDir(cfg.uploads.duckdbDir), ttlMs);
  throw new QuarryError(
    "unavailable:uploads",
    "Files cannot be brought in as tables on BigQuery yet: set QUARRY_BQ_UPLOADS_DATASET.",
  );
}

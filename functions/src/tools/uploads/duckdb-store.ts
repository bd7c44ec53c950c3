/**
 * Uploaded tables of the DuckDB engine: Parquet files in one folder (QUARRY_DUCKDB_UPLOADS_DIR,
 * default `quarry-uploads` in the OS temp dir) that every function instance and DuckDB worker of
 * the stack reads, one sub-folder per conversation. A file is written under a temporary name and
 * renamed, so a reader never sees half of one; each upload gets a new file name, so a query that
 * opened the old one keeps it. Files past their expiry are swept when the next one is put.
 */
import { randomUUID } from "node:crypto";
import { copyFile, mkdir, readdir, rename, rm, rmdir, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Caller, UploadPut, UploadTarget } from "../types";
import { threadKey } from "./keys";

/** The folder uploads live in. */
export function duckDbUploadsDir(configured: string | undefined): string {
  return path.resolve(configured ?? path.join(os.tmpdir(), "quarry-uploads"));
}

export class DuckDbUploads implements UploadTarget {
  constructor(
    private readonly dir: string,
    private readonly ttlMs: number,
  ) {}

  async put(upload: UploadPut, _caller?: Caller): Promise<string> {
    const folder = path.join(this.dir, threadKey(upload.threadId));
    // Readable by its owner only: a conversation's files are its owner's data.
    await mkdir(folder, { recursive: true, mode: 0o700 });
    const target = path.join(folder, `${upload.name}.${randomUUID().slice(0, 8)}.parquet`);
    const temp = `${target}.part`;
    try {
      await copyFile(upload.parquetPath, temp);
      await rename(temp, target);
    } catch (err) {
      await rm(temp, { force: true });
      throw err;
    }
    await this.sweep().catch(() => undefined);
    return target;
  }

  tableId(_location: string, name: string): string {
    return `uploads.${name}`;
  }

  async drop(location: string, _caller?: Caller): Promise<void> {
    // Only files inside the uploads folder are ever removed.
    const resolved = path.resolve(location);
    if (!resolved.startsWith(this.dir + path.sep)) return;
    await rm(resolved, { force: true });
    await rmdir(path.dirname(resolved)).catch(() => undefined); // only when now empty
  }

  /** Removes every conversation's files older than the expiry (the BigQuery table expiration's twin). */
  private async sweep(): Promise<void> {
    const cutoff = Date.now() - this.ttlMs;
    for (const folder of await readdir(this.dir)) {
      const full = path.join(this.dir, folder);
      for (const file of await readdir(full).catch(() => [] as string[])) {
        const at = path.join(full, file);
        const info = await stat(at).catch(() => undefined);
        if (info && info.mtimeMs < cutoff) await this.drop(at);
      }
    }
  }
}

/**
 * Setting up a DuckDB instance before it is locked: the configured files (QUARRY_DUCKDB_FILES)
 * and a conversation's uploads copied in, and the tables it then holds.
 */
import path from "node:path";
import type { DuckDBConnection } from "@duckdb/node-api";
import { ConfigError, type WarehouseConfig } from "../../config";
import { lit, quoteId } from "../sql-text";
import { WarehouseError, type TableInfo } from "../types";
import type { UploadRef } from "../uploads/types";

const FILES_SCHEMA = "files";
/** The schema a conversation's uploaded files become tables in; no configured file may use it. */
const UPLOADS_SCHEMA = "uploads";
const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/**
 * Loads `QUARRY_DUCKDB_FILES`: `table=path` becomes `files.table`, `dataset.table=path` becomes
 * `dataset.table` — so the local stack can hold more datasets than the sample (`shop`).
 */
export async function registerFiles(
  conn: DuckDBConnection,
  cfg: WarehouseConfig,
  alias: string,
  fileSchemas: Set<string>,
): Promise<void> {
  for (const [key, file] of Object.entries(cfg.duckdb.files)) {
    const [dataset, name] = key.includes(".") ? key.split(".", 2) : [FILES_SCHEMA, key];
    if (!NAME.test(name) || !NAME.test(dataset) || key.split(".").length > 2) {
      throw new ConfigError(
        `QUARRY_DUCKDB_FILES: "${key}" is not a valid table name: use table=path or dataset.table=path ` +
          "(letters, digits, _).",
      );
    }
    if (dataset.toLowerCase() === UPLOADS_SCHEMA) {
      throw new ConfigError(
        `QUARRY_DUCKDB_FILES: "${key}" uses the dataset "${UPLOADS_SCHEMA}", which holds each conversation's uploaded files; name another dataset.`,
      );
    }
    if (dataset.toLowerCase() === alias.toLowerCase() || dataset.toLowerCase() === "main") {
      throw new ConfigError(
        `QUARRY_DUCKDB_FILES: "${key}" would add to the dataset "${dataset}", which is the opened database's ` +
          "own; name another dataset (e.g. finance.salaries=./salaries.csv).",
      );
    }
    await conn.run(`CREATE SCHEMA IF NOT EXISTS "${dataset}"`);
    fileSchemas.add(dataset);
    const ext = path.extname(file).toLowerCase();
    const reader =
      ext === ".parquet" ? "read_parquet" : [".csv", ".tsv", ".txt"].includes(ext) ? "read_csv" : undefined;
    if (!reader) {
      throw new ConfigError(`QUARRY_DUCKDB_FILES: ${file} must be a .csv, .tsv or .parquet file.`);
    }
    // Copied into memory so the table keeps working after file access is switched off.
    await conn
      .run(`CREATE TABLE "${dataset}"."${name}" AS SELECT * FROM ${reader}(${lit(path.resolve(file))})`)
      .catch((err: unknown) => {
        throw new ConfigError(
          `QUARRY_DUCKDB_FILES: could not load ${file} as ${dataset}.${name}: ${(err as Error).message}`,
        );
      });
  }
}

/** Copies a conversation's uploaded Parquet files in as `uploads.<name>` (before file access is off). */
export async function registerUploads(
  conn: DuckDBConnection,
  uploads: readonly UploadRef[],
  fileSchemas: Set<string>,
): Promise<void> {
  if (!uploads.length) return;
  await conn.run(`CREATE SCHEMA "${UPLOADS_SCHEMA}"`);
  fileSchemas.add(UPLOADS_SCHEMA);
  for (const u of uploads) {
    if (!NAME.test(u.name))
      throw new WarehouseError("internal", `"${u.name}" is not an upload's table name.`);
    await conn
      .run(`CREATE TABLE "${UPLOADS_SCHEMA}"."${u.name}" AS SELECT * FROM read_parquet(${lit(u.location)})`)
      .catch((err: unknown) => {
        throw new WarehouseError(
          "not_found",
          `The uploaded file ${u.file} (uploads.${u.name}) could not be read back; it may have expired. Upload it again. (${(err as Error).message})`,
        );
      });
    const about = `The person's uploaded file ${u.file} (${u.rows} rows).`;
    await conn.run(`COMMENT ON TABLE "${UPLOADS_SCHEMA}"."${u.name}" IS ${lit(about)}`);
  }
}

export async function readTables(
  conn: DuckDBConnection,
  alias: string,
  fileSchemas: ReadonlySet<string>,
): Promise<TableInfo[]> {
  const reader = await conn.runAndReadAll(
    `SELECT database_name, schema_name, table_name, comment FROM duckdb_tables()
     WHERE (database_name = ${lit(alias)}) OR (database_name = current_database() AND schema_name IN (${[...fileSchemas, FILES_SCHEMA].map(lit).join(", ")}))
     ORDER BY database_name <> ${lit(alias)}, table_name`,
  );
  const out: TableInfo[] = [];
  for (const [db, schema, table, comment] of reader.getRows() as [string, string, string, string | null][]) {
    const id =
      db === alias
        ? schema === "main"
          ? `${db}.${table}`
          : `${db}.${schema}.${table}`
        : `${schema}.${table}`;
    const count = await conn.runAndReadAll(`SELECT count(*) FROM ${quoteId(id)}`);
    out.push({ id, description: comment || undefined, rowCount: Number(count.getRows()[0][0]) });
  }
  return out;
}

/** A catalog alias for a user-supplied database file: its base name, made a safe identifier. */
export function aliasFor(file: string): string {
  const base = path.basename(file, path.extname(file)).replace(/[^A-Za-z0-9_]/g, "_");
  return /^[A-Za-z_]/.test(base) ? base : `db_${base}`;
}

/** The `duckdb_tables()` / `duckdb_columns()` condition for a table id (`dataset.table`, or `db.schema.table`). */
export function whereTable(id: string, fileSchemas: ReadonlySet<string>): string {
  const parts = id.split(".");
  if (parts.length === 2 && (parts[0] === FILES_SCHEMA || fileSchemas.has(parts[0]))) {
    return `database_name = current_database() AND schema_name = ${lit(parts[0])} AND table_name = ${lit(parts[1])}`;
  }
  const [db, schema, table] = parts.length === 3 ? parts : [parts[0], "main", parts[1]];
  return `database_name = ${lit(db)} AND schema_name = ${lit(schema)} AND table_name = ${lit(table)}`;
}

/**
 * Builds the sample dataset's DuckDB file once and reuses it: generation takes about a second, so
 * it is cached on disk (keyed by generator version and seed) and written to a temporary name and
 * renamed, so concurrent processes never open a half-written file.
 */
import { existsSync } from "node:fs";
import { mkdir, rename, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { DuckDBAppender, DuckDBConnection } from "@duckdb/node-api";
import { SAMPLE_SEED, SAMPLE_VERSION, generateSampleData, type SampleData } from "./sample-data";
import { SAMPLE_TABLES, type SampleColumn } from "./sample-schema";
import { lit } from "../sql-text";

type Duck = typeof import("@duckdb/node-api");

/** Where the sample database is cached; /tmp is the only writable place on Cloud Functions. */
function sampleDbPath(dir: string = os.tmpdir()): string {
  return path.join(dir, `quarry-sample-v${SAMPLE_VERSION}-${SAMPLE_SEED}.duckdb`);
}

const building = new Map<string, Promise<string>>();

/** Returns the path of the sample database file, generating it first if needed. */
export function ensureSampleDb(dir?: string): Promise<string> {
  const file = sampleDbPath(dir);
  if (existsSync(file)) return Promise.resolve(file);
  let pending = building.get(file);
  if (!pending) {
    pending = build(file).finally(() => building.delete(file));
    building.set(file, pending);
  }
  return pending;
}

async function build(file: string): Promise<string> {
  const duck: Duck = await import("@duckdb/node-api");
  await mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  const instance = await duck.DuckDBInstance.create(tmp);
  try {
    const conn = await instance.connect();
    await writeTables(duck, conn, generateSampleData(SAMPLE_SEED));
    await conn.run("CHECKPOINT");
    conn.closeSync();
  } finally {
    instance.closeSync();
  }
  await rename(tmp, file);
  await rm(`${tmp}.wal`, { force: true });
  return file;
}

async function writeTables(duck: Duck, conn: DuckDBConnection, data: SampleData): Promise<void> {
  for (const table of SAMPLE_TABLES) {
    const cols = table.columns.map((c) => `"${c.name}" ${c.type}`).join(", ");
    await conn.run(`CREATE TABLE "${table.name}" (${cols})`);
    await conn.run(`COMMENT ON TABLE "${table.name}" IS ${lit(table.description)}`);
    for (const c of table.columns) {
      await conn.run(`COMMENT ON COLUMN "${table.name}"."${c.name}" IS ${lit(c.description)}`);
    }
    const appender = await conn.createAppender(table.name);
    const rows = data[table.name] as unknown as Record<string, unknown>[];
    for (const row of rows) {
      for (const c of table.columns) append(duck, appender, c, row[c.name]);
      appender.endRow();
    }
    appender.closeSync();
  }
}

function append(duck: Duck, appender: DuckDBAppender, column: SampleColumn, value: unknown): void {
  if (value === null || value === undefined) return appender.appendNull();
  switch (column.type) {
    case "INTEGER":
      return appender.appendInteger(value as number);
    case "BIGINT":
      return appender.appendBigInt(BigInt(value as number));
    case "VARCHAR":
      return appender.appendVarchar(value as string);
    case "BOOLEAN":
      return appender.appendBoolean(value as boolean);
    case "DATE":
      return appender.appendDate(new duck.DuckDBDateValue(value as number));
    case "TIMESTAMP":
      return appender.appendTimestamp(new duck.DuckDBTimestampValue(BigInt(value as number)));
    case "DECIMAL(10,2)":
      return appender.appendDecimal(new duck.DuckDBDecimalValue(BigInt(value as number), 10, 2));
  }
}

/**
 * DuckDB's estimate of the bytes a statement reads, counted the way BigQuery bills on demand: for
 * every table the statement scans, all its rows times the size of each column it reads (the
 * columns DuckDB's plan projects or filters on at the scan), with BigQuery's sizes — 8 bytes for a
 * number, date or timestamp, 16 for a decimal, 1 for a boolean, 2 + the UTF-8 bytes for a string.
 * A filter does not lower it (BigQuery bills the whole column unless the table is partitioned).
 * DuckDB bills nothing; the estimate is what lets an investigation's byte budget stop a step on
 * the local engine as it would on BigQuery.
 */
import type { DuckDBConnection } from "@duckdb/node-api";
import { ident, quoteId } from "../sql-text";
import { whereTable } from "./setup";

/** EXPLAIN names every scanned table `db.schema.table`: no file schema to resolve. */
const NO_FILE_SCHEMAS: ReadonlySet<string> = new Set();

/** One table's row count and the bytes of each of its columns (lower-cased names). */
interface TableBytes {
  rows: number;
  columns: Map<string, number>;
}

interface PlanNode {
  name?: string;
  children?: PlanNode[];
  extra_info?: { Table?: string; Projections?: string[] | string; Filters?: string[] | string };
}

const FIXED: [RegExp, number][] = [
  [/^BOOLEAN$/, 1],
  [/^(DECIMAL|HUGEINT|UHUGEINT|UUID|INTERVAL)/, 16],
  [/^(VARCHAR|BLOB|BIT)/, -1], // measured: 2 + the bytes of the values
];

/** Bytes of one value of a DuckDB type, or -1 where it is measured from the data (strings). */
function widthOf(type: string): number {
  for (const [re, bytes] of FIXED) if (re.test(type)) return bytes;
  return 8;
}

export class ByteEstimator {
  private readonly tables = new Map<string, Promise<TableBytes>>();

  /** The bytes `sql` reads, from DuckDB's plan of it and each scanned table's column sizes. */
  async estimate(conn: DuckDBConnection, sql: string): Promise<number> {
    const plan = await conn.runAndReadAll(`EXPLAIN (FORMAT JSON) ${sql}`);
    const rows = plan.getRows() as [string, string][];
    const scans: { table: string; columns: Set<string> }[] = [];
    for (const [, json] of rows) for (const node of JSON.parse(json) as PlanNode[]) collect(node, scans);
    let total = 0;
    for (const scan of scans) {
      const t = await this.table(conn, scan.table);
      // A scan that reads no column (COUNT(*)) bills nothing on BigQuery either.
      for (const c of scan.columns) if (t.columns.has(c)) total += t.rows * t.columns.get(c)!;
    }
    return Math.round(total);
  }

  /** A table's sizes, measured once per instance (the data is read-only once open). */
  private table(conn: DuckDBConnection, qualified: string): Promise<TableBytes> {
    const key = qualified.toLowerCase();
    let found = this.tables.get(key);
    if (!found) {
      found = measure(conn, qualified);
      this.tables.set(key, found);
      found.catch(() => this.tables.delete(key));
    }
    return found;
  }
}

function collect(node: PlanNode, out: { table: string; columns: Set<string> }[]): void {
  const info = node.extra_info;
  if (info?.Table) {
    const columns = new Set<string>();
    for (const p of list(info.Projections)) columns.add(bare(p));
    for (const f of list(info.Filters)) for (const id of identifiers(f)) columns.add(id);
    out.push({ table: info.Table, columns });
  }
  for (const child of node.children ?? []) collect(child, out);
}

function list(v: string[] | string | undefined): string[] {
  if (v === undefined) return [];
  return Array.isArray(v) ? v : v.split("\n");
}

function bare(name: string): string {
  return name.trim().replace(/^"|"$/g, "").toLowerCase();
}

/** The column names a pushed-down filter mentions (quoted or bare words; literals removed). */
function identifiers(filter: string): string[] {
  const noLiterals = filter.replace(/'(?:[^']|'')*'/g, " ");
  const quoted = [...noLiterals.matchAll(/"((?:[^"]|"")+)"/g)].map((m) => m[1].replaceAll('""', '"'));
  const words = noLiterals.replace(/"(?:[^"]|"")+"/g, " ").match(/[A-Za-z_][A-Za-z0-9_]*/g) ?? [];
  return [...quoted, ...words].map((w) => w.toLowerCase());
}

/** Row count and per-column bytes of `qualified` (`db.schema.table`), in one aggregate pass. */
async function measure(conn: DuckDBConnection, qualified: string): Promise<TableBytes> {
  const cols = (
    await conn.runAndReadAll(
      `SELECT column_name, data_type FROM duckdb_columns() WHERE ${whereTable(qualified, NO_FILE_SCHEMAS)} ORDER BY column_index`,
    )
  ).getRows() as [string, string][];
  const measured = cols.filter(([, type]) => widthOf(type) < 0);
  const sums = measured.map(
    ([name, type]) => `coalesce(sum(${type === "VARCHAR" ? "strlen" : "octet_length"}(${ident(name)})), 0)`,
  );
  const row = (
    await conn.runAndReadAll(
      `SELECT count(*)${sums.map((s) => `, ${s}`).join("")} FROM ${quoteId(qualified)}`,
    )
  ).getRows()[0];
  const rows = Number(row[0]);
  const columns = new Map<string, number>();
  for (const [name, type] of cols) {
    const i = measured.findIndex(([m]) => m === name);
    columns.set(name.toLowerCase(), i < 0 ? widthOf(type) : 2 + (rows ? Number(row[i + 1]) / rows : 0));
  }
  return { rows, columns };
}

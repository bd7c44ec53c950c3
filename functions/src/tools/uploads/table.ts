/**
 * The ingest's table `t` → the stored Parquet file and what the person is shown: column names as
 * plain identifiers, DuckDB's types kept, the first rows, and warnings about cells a spreadsheet
 * would run as formulas (they are data here: loaded as text, never interpreted).
 */
import type { DuckDBConnection, DuckDBValue } from "@duckdb/node-api";
import type { JsonValue, Row } from "../../contract/events";
import { QuarryError } from "../../errors";
import { columnInfo, createNormalizer } from "../duckdb/values";
import type { IngestResult } from "./types";
import { ident, lit } from "../sql-text";

type Duck = typeof import("@duckdb/node-api");

const PREVIEW_ROWS = 5;
const FORMULA_CELLS_SHOWN = 5;
const MAX_NAME = 63;

/** Lower-case identifiers `[a-z_][a-z0-9_]*`, unique (`_2`, `_3`…), `column_N` for an empty name. */
export function sanitiseColumns(names: string[]): string[] {
  const taken = new Set<string>();
  return names.map((raw, i) => {
    let base = identifierOf(raw) || `column_${i + 1}`;
    if (/^[0-9]/.test(base)) base = `c_${base}`.slice(0, MAX_NAME);
    let name = base;
    for (let n = 2; taken.has(name); n++) name = `${base.slice(0, MAX_NAME - String(n).length - 1)}_${n}`;
    taken.add(name);
    return name;
  });
}

/** Letters without accents, lower-case; anything else becomes `_`, runs of `_` collapsed. */
export function identifierOf(raw: string): string {
  return raw
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .slice(0, MAX_NAME)
    .replace(/_+$/, "");
}

/** Spreadsheet column letters: 0 → A, 25 → Z, 26 → AA. */
export function columnLetter(i: number): string {
  let s = "";
  for (let n = i + 1; n > 0; n = Math.floor((n - 1) / 26)) s = String.fromCharCode(65 + ((n - 1) % 26)) + s;
  return s;
}

interface Column {
  name: string;
  type: string;
}

async function describe(conn: DuckDBConnection): Promise<Column[]> {
  const r = await conn.runAndReadAll("DESCRIBE t");
  return r.getRowObjectsJson().map((c) => ({ name: String(c.column_name), type: String(c.column_type) }));
}

/**
 * Cells in text columns that start with =, +, - (not a number) or @: one warning listing the first
 * few as "B7" (column letter + line in the file; `linesBefore` = lines above the first data row).
 */
async function formulaWarning(conn: DuckDBConnection, cols: Column[], linesBefore: number) {
  const text = cols.map((c, i) => ({ ...c, i })).filter((c) => c.type === "VARCHAR");
  if (text.length === 0) return undefined;
  const hits = text
    .map(
      (c) =>
        `SELECT rowid AS r, ${c.i} AS c FROM t WHERE regexp_matches(${ident(c.name)}, '^[=+\\-@]') ` +
        `AND TRY_CAST(${ident(c.name)} AS DOUBLE) IS NULL`,
    )
    .join(" UNION ALL ");
  const r = await conn.runAndReadAll(
    `SELECT r, c, count(*) OVER () AS n FROM (${hits}) ORDER BY r, c LIMIT ${FORMULA_CELLS_SHOWN}`,
  );
  const rows = r.getRows();
  if (rows.length === 0) return undefined;
  const total = Number(rows[0][2]);
  const cells = rows.map(([row, col]) => `${columnLetter(Number(col))}${Number(row) + linesBefore + 1}`);
  const more = total > cells.length ? ` and ${total - cells.length} more` : "";
  return (
    `${total} cell(s) start with =, +, - or @ (${cells.join(", ")}${more}); ` +
    "they were loaded as text, exactly as written — never run as formulas."
  );
}

/** Text columns whose every value looks like a number with a decimal comma (1.234,5): kept as text, said so. */
async function decimalCommaWarnings(conn: DuckDBConnection, cols: Column[], names: string[]) {
  const warnings: string[] = [];
  for (const [i, c] of cols.entries()) {
    if (c.type !== "VARCHAR") continue;
    const pattern = lit("[+-]?(\\d{1,3}(\\.\\d{3})+|\\d+),\\d+");
    const r = await conn.runAndReadAll(
      `SELECT count(${ident(c.name)}), count(*) FILTER (WHERE regexp_full_match(${ident(c.name)}, ${pattern})) FROM t`,
    );
    const [all, matching] = r.getRows()[0].map(Number);
    if (all > 0 && all === matching) {
      warnings.push(
        `Column ${names[i]} looks like numbers with a decimal comma (e.g. 1,5); it was kept as text. ` +
          "Save the file with decimal points to have it read as numbers.",
      );
    }
  }
  return warnings;
}

/** Writes `t` as Parquet under sanitised names and reads back the columns and the first rows. */
export async function finishTable(
  duck: Duck,
  conn: DuckDBConnection,
  out: string,
  linesBefore: number,
  header?: string[],
): Promise<Pick<IngestResult, "columns" | "rows" | "preview" | "warnings">> {
  const rows = Number((await conn.runAndReadAll("SELECT count(*) FROM t")).getRows()[0][0]);
  if (rows === 0) {
    throw new QuarryError("bad_request:upload", "The file is empty: it has no rows of data.");
  }
  const cols = await describe(conn);
  const names = sanitiseColumns(cols.map((c, i) => header?.[i] ?? c.name));
  const warnings = [
    ...(await decimalCommaWarnings(conn, cols, names)),
    ...[await formulaWarning(conn, cols, linesBefore)].filter((w): w is string => w !== undefined),
  ];
  const select = `SELECT ${cols.map((c, i) => `${portable(c)} AS ${ident(names[i])}`).join(", ")} FROM t`;
  await conn.run(`COPY (${select}) TO ${lit(out)} (FORMAT parquet)`);
  const head = await conn.runAndReadAll(`${select} LIMIT ${PREVIEW_ROWS}`);
  const types = head.columnTypes();
  const norm = previewNormalizer(duck);
  const preview: Row[] = head.getRows().map((r) => Object.fromEntries(r.map((v, i) => [names[i], norm(v)])));
  return { columns: names.map((n, i) => columnInfo(duck, n, types[i])), rows, preview, warnings };
}

/**
 * Types both engines load from Parquet as they are; anything else (an INTERVAL, a LIST, a STRUCT,
 * a BLOB from a Parquet file …) is written as text, so the table means the same in BigQuery
 * (its schema maps these types; others become STRING, which only loads from text).
 */
const PORTABLE =
  /^(BOOLEAN|TINYINT|SMALLINT|INTEGER|BIGINT|UTINYINT|USMALLINT|UINTEGER|FLOAT|DOUBLE|DECIMAL\(\d+,\d+\)|VARCHAR|DATE|TIME|TIMESTAMP|TIMESTAMP WITH TIME ZONE)$/;

function portable(c: Column): string {
  return PORTABLE.test(c.type) ? ident(c.name) : `CAST(${ident(c.name)} AS VARCHAR)`;
}

/** The warehouse's JSON-safe values, except DECIMALs as numbers (a preview is for reading, not sums). */
function previewNormalizer(duck: Duck): (v: DuckDBValue) => JsonValue {
  const base = createNormalizer(duck);
  return (v) => (v instanceof duck.DuckDBDecimalValue ? v.toDouble() : base(v));
}

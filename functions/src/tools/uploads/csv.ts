/**
 * CSV/TSV into the ingest's table `t`: DuckDB's sniffer reads the whole file (`sample_size=-1`)
 * and decides the dialect, header and types; the file is then read with exactly that dialect, so
 * what the person is told ("comma-separated, header line, dates as %Y-%m-%d") is what was done.
 *
 * The sniffer does not fail on ragged rows: it falls back to one column, or skips the lines that
 * disagree. Both are caught here and the file is re-read strictly to name the line at fault.
 */
import type { DuckDBConnection } from "@duckdb/node-api";
import { QuarryError } from "../../errors";
import { firstLine } from "./sql";
import { lit } from "../sql-text";
import { headOf } from "./source";

/** What the CSV reading found, for the result. */
export interface CsvReading {
  format: "csv" | "tsv";
  dialect: string;
  warnings: string[];
  /** Lines before the first data row (skipped lines + the header), to number cells as the file does. */
  linesBefore: number;
  /** The header's names as written (DuckDB renames duplicates itself, `x_1`; Quarry's rule is `x_2`). */
  header?: string[];
}

interface Sniffed {
  Delimiter: string;
  Quote: string;
  Escape: string;
  NewLineDelimiter: string;
  Comment: string;
  SkipRows: number;
  HasHeader: boolean;
  Columns: { name: string; type: string }[];
  DateFormat: string | null;
  TimestampFormat: string | null;
}

type Encoding = "utf-8" | "latin-1";
const DELIMITERS = [",", ";", "\t", "|"];
const DELIMITER_NAMES: Record<string, string> = {
  ",": "comma",
  ";": "semicolon",
  "\t": "tab",
  "|": "pipe",
};
const empty = (s: string) => (s === "(empty)" ? "" : s);

/** Options for `csvLoad`: xlsx sheets arrive as a comma CSV whose first row is the header. */
export interface CsvOptions {
  maxRows: number;
  maxColumns: number;
  /** Fix the delimiter and header instead of sniffing them (a CSV written from a sheet). */
  fixed?: boolean;
}

/** Reads `file` into table `t`, retrying as Latin-1 when it is not UTF-8. */
export async function csvLoad(conn: DuckDBConnection, file: string, opts: CsvOptions): Promise<CsvReading> {
  try {
    return await loadAs(conn, file, opts, "utf-8");
  } catch (err) {
    if (err instanceof QuarryError || !/not utf-8 encoded|invalid unicode/i.test(String(err))) throw err;
  }
  const reading = await loadAs(conn, file, opts, "latin-1").catch((err: unknown) => {
    const line = /CSV Error on Line: (\d+)/.exec(String(err))?.[1];
    if (err instanceof QuarryError || !line) throw err;
    throw new QuarryError(
      "bad_request:upload",
      `Line ${line} is not text in UTF-8 or Latin-1; save the file as UTF-8 CSV and send it again.`,
    );
  });
  reading.warnings.unshift(
    "The file is not UTF-8; it was read as Latin-1 (ISO-8859-1). If accented letters look wrong, save it as UTF-8 and send it again.",
  );
  return reading;
}

async function loadAs(
  conn: DuckDBConnection,
  file: string,
  opts: CsvOptions,
  encoding: Encoding,
): Promise<CsvReading> {
  const sniffArgs = [
    "sample_size=-1",
    `encoding=${lit(encoding)}`,
    ...(opts.fixed ? ["delim=','", "header=true"] : []),
  ];
  let s: Sniffed;
  try {
    const r = await conn.runAndReadAll(`SELECT * FROM sniff_csv(${lit(file)}, ${sniffArgs.join(", ")})`);
    s = r.getRowObjectsJson()[0] as unknown as Sniffed;
  } catch (err) {
    throw csvError(err);
  }
  await refuseRagged(conn, file, s, encoding);
  if (s.Columns.length > opts.maxColumns) {
    throw new QuarryError(
      "payload_too_large:upload",
      `The file has ${s.Columns.length} columns; an uploaded table may have at most ${opts.maxColumns} (QUARRY_UPLOAD_MAX_COLUMNS).`,
    );
  }
  const reader = readerSql(file, s, encoding);
  try {
    await conn.run(`CREATE OR REPLACE TABLE t AS SELECT * FROM ${reader} LIMIT ${opts.maxRows + 1}`);
    const n = Number((await conn.runAndReadAll("SELECT count(*) FROM t")).getRows()[0][0]);
    if (n > opts.maxRows) {
      const all = Number((await conn.runAndReadAll(`SELECT count(*) FROM ${reader}`)).getRows()[0][0]);
      throw new QuarryError(
        "payload_too_large:upload",
        `The file has ${all} rows; an uploaded table may have at most ${opts.maxRows} (QUARRY_UPLOAD_MAX_ROWS).`,
      );
    }
  } catch (err) {
    throw csvError(err);
  }
  const header = s.HasHeader ? await headerNames(conn, file, s, encoding) : undefined;
  const warnings =
    s.SkipRows > 0
      ? [`The first ${s.SkipRows} line(s) did not look like part of the table and were skipped.`]
      : [];
  return {
    format: s.Delimiter === "\t" ? "tsv" : "csv",
    dialect: dialectWords(s, encoding, opts.fixed),
    warnings,
    linesBefore: s.SkipRows + (s.HasHeader ? 1 : 0),
    header,
  };
}

/** The header line's fields as written, read with the sniffed dialect. */
async function headerNames(conn: DuckDBConnection, file: string, s: Sniffed, encoding: Encoding) {
  const columns = s.Columns.map((_, i) => `c${i}`);
  const reader = readerSql(file, s, encoding, { columns, skip: Number(s.SkipRows), header: false });
  const r = await conn.runAndReadAll(`SELECT * FROM ${reader} LIMIT 1`);
  return r.getRows()[0]?.map((v) => (v === null ? "" : String(v)));
}

/**
 * `read_csv(...)` with the sniffed dialect spelled out (auto-detection off); `text` reads the given
 * columns as VARCHAR from line `skip` (header or not) instead of the sniffed columns and types.
 */
function readerSql(
  file: string,
  s: Sniffed,
  encoding: Encoding,
  text?: { columns: string[]; skip: number; header: boolean },
): string {
  const cols = text
    ? text.columns.map((c) => `${lit(c)}: 'VARCHAR'`)
    : s.Columns.map((c) => `${lit(c.name)}: ${lit(c.type)}`);
  const args = [
    lit(file),
    "auto_detect=false",
    `delim=${lit(s.Delimiter)}`,
    `quote=${lit(empty(s.Quote))}`,
    `escape=${lit(empty(s.Escape))}`,
    `comment=${lit(empty(s.Comment))}`,
    `skip=${text ? text.skip : Number(s.SkipRows)}`,
    `header=${text ? text.header : Boolean(s.HasHeader)}`,
    `columns={${cols.join(", ")}}`,
    `encoding=${lit(encoding)}`,
    ...(s.DateFormat && !text ? [`dateformat=${lit(s.DateFormat)}`] : []),
    ...(s.TimestampFormat && !text ? [`timestampformat=${lit(s.TimestampFormat)}`] : []),
  ];
  return `read_csv(${args.join(", ")})`;
}

/**
 * When the sniffer's columns disagree with the first line's fields (one column for a line with
 * commas, or lines skipped), the file is read strictly with the first line as header: DuckDB then
 * names the first line whose field count differs.
 */
async function refuseRagged(conn: DuckDBConnection, file: string, s: Sniffed, encoding: Encoding) {
  const first = (await headOf(file, 64 * 1024)).toString("latin1").split(/\r?\n/)[0] ?? "";
  const delim =
    s.Columns.length > 1
      ? s.Delimiter
      : DELIMITERS.map((d) => [d, first.split(d).length] as const).sort((a, b) => b[1] - a[1])[0][0];
  const fields = fieldCount(first, delim);
  if (fields < 2 || fields === s.Columns.length) return;
  const names = Array.from({ length: fields }, (_, i) => `c${i}`);
  const strict = { ...s, Delimiter: delim, Quote: '"', Escape: '"' };
  try {
    await conn.run(
      `SELECT count(*) FROM ${readerSql(file, strict, encoding, { columns: names, skip: 0, header: true })}`,
    );
  } catch (err) {
    throw csvError(err);
  }
}

/** Fields in one line, outside double quotes. */
function fieldCount(line: string, delim: string): number {
  let n = 1;
  let quoted = false;
  for (const ch of line) {
    if (ch === '"') quoted = !quoted;
    else if (ch === delim && !quoted) n++;
  }
  return n;
}

/** A DuckDB CSV error in the person's words, naming the line. */
function csvError(err: unknown): unknown {
  if (err instanceof QuarryError) return err;
  const raw = err instanceof Error ? err.message : String(err);
  const line = /CSV Error on Line: (\d+)/.exec(raw)?.[1];
  const counts = /Expected Number of Columns: (\d+) Found: (\d+)/.exec(raw);
  if (line && counts) {
    return new QuarryError(
      "bad_request:upload",
      `Line ${line} has ${counts[2]} fields, the header has ${counts[1]}. Fix that line (a missing or extra separator, or an unquoted value containing one) and send the file again.`,
    );
  }
  if (/not utf-8 encoded|invalid unicode/i.test(raw)) return err; // retried as Latin-1 by the caller
  if (line) {
    const why = /(Could not convert[^\n]*|Error when converting[^\n]*)/.exec(raw)?.[1];
    return new QuarryError(
      "bad_request:upload",
      `Line ${line} could not be read${why ? `: ${why}` : ""}. Fix that line and send the file again.`,
    );
  }
  if (/Error when sniffing|sniff/i.test(raw)) {
    return new QuarryError(
      "bad_request:upload",
      `The file could not be read as CSV or TSV (${firstLine(err)}).`,
    );
  }
  return err;
}

function dialectWords(s: Sniffed, encoding: Encoding, fixed?: boolean): string {
  const delim = DELIMITER_NAMES[s.Delimiter] ?? `"${s.Delimiter}"`;
  const parts = [
    `${delim}-separated${fixed ? "" : " (detected)"}`,
    s.HasHeader ? "the first line is the header" : "no header line (columns named column0, column1, …)",
    ...(s.DateFormat ? [`dates as ${s.DateFormat}`] : []),
    ...(s.TimestampFormat ? [`timestamps as ${s.TimestampFormat}`] : []),
    encoding === "utf-8" ? "UTF-8" : "Latin-1",
  ];
  return parts.join(", ");
}

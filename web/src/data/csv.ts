/**
 * CSV of a query result (RFC 4180: comma separated, CRLF rows, fields quoted when they hold a
 * comma, quote or line break, quotes doubled), for the "Download CSV" button.
 */
import { cellText, toNumber, type ColumnInfo, type Row } from "@quarry/functions/contract";

/**
 * Spreadsheet apps run cells that start with these as formulas (CSV injection). Text cells that
 * start with one get a leading apostrophe; numbers such as "-12" are left alone.
 */
const FORMULA_START = /^[=+\-@\t\r]/;

function field(value: Row[string] | undefined): string {
  let text = cellText(value);
  if (typeof value === "string" && FORMULA_START.test(text) && toNumber(value) === null) {
    text = `'${text}`;
  }
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** The whole result as CSV text: a header row of column names, then every row. */
export function toCsv(columns: Pick<ColumnInfo, "name">[], rows: Row[]): string {
  const lines = [columns.map((c) => field(c.name)).join(",")];
  for (const row of rows) lines.push(columns.map((c) => field(row[c.name])).join(","));
  return lines.join("\r\n") + "\r\n";
}

/** A file name for a download: the first words of the question or "result", the date, the extension. */
export function fileName(hint: string, ext: string, date = new Date()): string {
  const slug =
    hint
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 40)
      .replace(/-+$/, "") || "result";
  return `${slug}-${date.toISOString().slice(0, 10)}.${ext}`;
}

/** The CSV download's file name. */
export function csvFileName(hint: string, date = new Date()): string {
  return fileName(hint, "csv", date);
}

/**
 * Engine-independent result shaping: the row and character caps for the client's copy of a
 * result, and the bounded text preview the model sees. Both engines feed rows through these, so
 * the caps hold the same way on BigQuery and DuckDB.
 */
import type { ColumnInfo, JsonValue, Row } from "./types";

export interface Caps {
  maxRows: number;
  maxResultChars: number;
  previewRows: number;
  previewChars: number;
}

/** A text value cut to `max` characters, marked with an ellipsis; lists and records cut inside. */
function cutLong(v: JsonValue, max: number): JsonValue {
  if (typeof v === "string") return v.length > max ? `${v.slice(0, max - 1)}…` : v;
  if (Array.isArray(v)) return v.map((x) => cutLong(x, max));
  if (v && typeof v === "object")
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, cutLong(x, max)]));
  return v;
}

/**
 * Keeps rows until the row or character cap is hit; everything after only counts. A text value
 * longer than half the character cap is cut (marked "…"), so a row holding one huge value still
 * reaches the person's table instead of emptying it.
 */
export class RowCollector {
  readonly rows: Row[] = [];
  private chars = 2; // the enclosing [] of the JSON array the client receives
  private full = false;
  truncated = false;
  seen = 0;

  constructor(private readonly caps: Pick<Caps, "maxRows" | "maxResultChars">) {}

  /** Characters per kept row so far (JSON), for sizing the next page of a paged read. */
  get charsPerRow(): number {
    return this.rows.length ? this.chars / this.rows.length : 0;
  }

  /** Adds one row; returns false once the cap is reached (the caller may stop fetching). */
  add(raw: Row): boolean {
    this.seen++;
    if (this.full) {
      this.truncated = true;
      return false;
    }
    const row = cutLong(raw, Math.max(Math.floor(this.caps.maxResultChars / 2), 1)) as Row;
    const size = JSON.stringify(row).length + 1;
    if (this.rows.length >= this.caps.maxRows || this.chars + size > this.caps.maxResultChars) {
      this.full = true;
      this.truncated = true;
      return false;
    }
    this.chars += size;
    this.rows.push(row);
    return true;
  }

  /** True once no further row will be kept. */
  get isFull(): boolean {
    return this.full;
  }
}

function cell(v: JsonValue): string {
  if (v === null) return "NULL";
  const s = typeof v === "string" ? v : JSON.stringify(v);
  // One row per line: tabs and newlines inside values would break the layout the model reads.
  const flat = s.replace(/[\t\r\n]+/g, " ");
  return flat.length > 200 ? `${flat.slice(0, 199)}…` : flat;
}

/**
 * Renders the model's view of a result: a header line with column names and types, then
 * tab-separated rows, cut at `previewRows` rows and `previewChars` characters on a line boundary,
 * with a footer that says how much was left out (so the model does not mistake a preview for
 * the whole answer).
 */
export function renderPreview(
  columns: ColumnInfo[],
  rows: Row[],
  totalRows: number,
  truncated: boolean,
  caps: Pick<Caps, "previewRows" | "previewChars">,
): { preview: string; previewRows: number } {
  const head = `Columns: ${columns.map((c) => `${c.name} (${c.type})`).join(", ")}\n`;
  const header = columns.map((c) => c.name).join("\t");
  const lines: string[] = [head.trimEnd(), header];
  let used = head.length + header.length + 1;
  const budget = Math.max(caps.previewChars - 120, 0); // room for the footer
  let shown = 0;
  for (const row of rows) {
    if (shown >= caps.previewRows) break;
    const line = columns.map((c) => cell(row[c.name] ?? null)).join("\t");
    if (used + line.length + 1 > budget) break;
    lines.push(line);
    used += line.length + 1;
    shown++;
  }
  const total = truncated && totalRows <= rows.length ? `more than ${rows.length}` : String(totalRows);
  if (totalRows === 0) lines.push("(no rows)");
  else if (shown < totalRows || truncated) {
    lines.push(
      `… showing ${shown} of ${total} rows; the full result (up to ${rows.length} rows) goes to the user's table.`,
    );
  } else lines.push(`(${shown} row${shown === 1 ? "" : "s"})`);
  let preview = lines.join("\n");
  if (preview.length > caps.previewChars) preview = `${preview.slice(0, caps.previewChars - 1)}…`;
  return { preview, previewRows: shown };
}

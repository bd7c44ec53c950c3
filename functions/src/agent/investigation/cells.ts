/**
 * Citations of result cells: the report writer types `{{s<step>.r<row>.<column>}}` (row 1 is the
 * first row) where a figure goes, and Quarry puts the cell's value there, formatted by its column.
 * The model never types a number the reader sees.
 */
import type { StepOutcome } from "../../contract/investigations";

/** A well-formed citation. */
export const CITATION = /\{\{\s*s(\d+)\.r(\d+)\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;
/** Anything in double braces (a malformed citation is refused, not shown). */
const BRACES = /\{\{[^}]*\}\}/g;

export interface Citation {
  raw: string;
  step: number;
  row: number;
  column: string;
}

export function citationsIn(text: string): { citations: Citation[]; malformed: string[] } {
  const citations = [...text.matchAll(CITATION)].map((m) => ({
    raw: m[0],
    step: Number(m[1]),
    row: Number(m[2]),
    column: m[3],
  }));
  const malformed = (text.match(BRACES) ?? []).filter((b) => !new RegExp(CITATION.source).test(b));
  return { citations, malformed };
}

/** A cell's numeric value (DuckDB and BigQuery give NUMERIC/DECIMAL as strings), or undefined. */
export function numeric(v: unknown): number | undefined {
  if (typeof v === "number" && Number.isFinite(v)) return v;
  if (typeof v === "string" && /^-?\d+(\.\d+)?(e[+-]?\d+)?$/i.test(v.trim())) return Number(v);
  return undefined;
}

const isRatio = (column: string) =>
  /(_pct|^share|_share|share_of_change)$/.test(column) || column === "share";

/** How a cell reads in the report: ratios as percentages, money and counts with separators. */
export function formatCell(column: string, value: unknown): string {
  if (value === null || value === undefined) return "n/a";
  const n = numeric(value);
  if (n === undefined) return String(value);
  if (isRatio(column))
    return `${(n * 100).toLocaleString("en-US", { maximumFractionDigits: 1, minimumFractionDigits: 1 })}%`;
  const whole = Number.isInteger(n);
  return n.toLocaleString("en-US", whole ? {} : { minimumFractionDigits: 2, maximumFractionDigits: 2 });
}

export type CellLookup = { ok: true; value: unknown } | { ok: false; error: string };

/** The cited cell, or why it cannot be cited (no such step, not run, no such row or column). */
export function lookup(outcomes: StepOutcome[], c: Citation): CellLookup {
  const step = outcomes.find((o) => o.id === c.step);
  if (!step) return { ok: false, error: `${c.raw} cites step ${c.step}, which is not in the plan` };
  if (step.status !== "done" || !step.rows || !step.columns)
    return { ok: false, error: `${c.raw} cites step ${c.step}, which has no result (${step.status})` };
  const row = step.rows[c.row - 1];
  if (c.row < 1 || !row)
    return {
      ok: false,
      error: `${c.raw} cites row ${c.row} of step ${c.step}, which has ${step.rows.length} rows`,
    };
  if (!step.columns.some((col) => col.name === c.column)) {
    const names = step.columns.map((col) => col.name).join(", ");
    return {
      ok: false,
      error: `${c.raw}: step ${c.step} has no column "${c.column}" (its columns: ${names})`,
    };
  }
  return { ok: true, value: row[c.column] };
}

/** The text with every citation replaced by its formatted cell (call after the checker passed). */
export function fill(text: string, outcomes: StepOutcome[]): string {
  return text.replace(CITATION, (raw, step: string, row: string, column: string) => {
    const cell = lookup(outcomes, { raw, step: Number(step), row: Number(row), column });
    return cell.ok ? formatCell(column, cell.value) : raw;
  });
}

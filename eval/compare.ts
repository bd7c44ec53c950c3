/**
 * Execution accuracy: do two queries return the same answer? Column names and column order are
 * ignored (each gold column must be matched by a distinct column of the prediction, which may have
 * more); row order is ignored unless the question orders; numbers match within a small tolerance.
 */
export type Row = Record<string, unknown>;

export interface Table {
  columns: string[];
  rows: Row[];
}

/**
 * Numbers (and numeric strings, as BigQuery sends NUMERIC) within 0.01 or 0.01%: two correct
 * queries may round a half-cent differently (parallel floating-point sums are not ordered).
 */
function sameValue(a: unknown, b: unknown): boolean {
  const na = asNumber(a);
  const nb = asNumber(b);
  if (na !== undefined && nb !== undefined) {
    return Math.abs(na - nb) <= Math.max(0.01 + 1e-9, 1e-4 * Math.max(Math.abs(na), Math.abs(nb)));
  }
  return normal(a) === normal(b);
}

function asNumber(v: unknown): number | undefined {
  if (typeof v === "number" && Number.isFinite(v)) return v;
  if (typeof v === "bigint") return Number(v);
  if (typeof v === "string" && /^-?\d+(\.\d+)?(e[+-]?\d+)?$/i.test(v.trim())) return Number(v);
  return undefined;
}

/** Text for non-numbers: dates and timestamps compared by their first 19 characters' meaning. */
function normal(v: unknown): string {
  if (v === null || v === undefined) return "∅";
  if (v instanceof Date) return v.toISOString().replace(/\.000Z$|Z$/, "");
  const s = typeof v === "object" ? JSON.stringify(v) : String(v);
  // "2025-01-01", "2025-01-01 00:00:00" and "2025-01-01T00:00:00.000Z" are the same month start.
  const date = /^(\d{4}-\d{2}-\d{2})(?:[ T]00:00:00(?:\.0+)?Z?)?$/.exec(s);
  return date ? date[1] : s.trim();
}

/** Orders values so equal ones end up together: numbers by value first, then text. */
function compareValues(x: unknown, y: unknown): number {
  const nx = asNumber(x);
  const ny = asNumber(y);
  if (nx !== undefined && ny !== undefined) return nx - ny;
  if (nx !== undefined) return -1;
  if (ny !== undefined) return 1;
  const sx = normal(x);
  const sy = normal(y);
  return sx < sy ? -1 : sx > sy ? 1 : 0;
}

function compareRows(a: unknown[], b: unknown[]): number {
  for (let i = 0; i < a.length; i++) {
    const c = compareValues(a[i], b[i]);
    if (c !== 0) return c;
  }
  return 0;
}

function column(t: Table, name: string): unknown[] {
  return t.rows.map((r) => r[name]);
}

function sameList(a: unknown[], b: unknown[]): boolean {
  return a.length === b.length && a.every((v, i) => sameValue(v, b[i]));
}

function sorted(values: unknown[]): unknown[] {
  return [...values].sort(compareValues);
}

/** Gold column → a distinct predicted column whose values match (as lists, or as multisets). */
function matchColumns(gold: Table, pred: Table, ordered: boolean): string[] | null {
  const used = new Set<string>();
  const mapping: string[] = [];
  for (const g of gold.columns) {
    const gv = ordered ? column(gold, g) : sorted(column(gold, g));
    const hit = pred.columns.find((p) => {
      if (used.has(p)) return false;
      const pv = ordered ? column(pred, p) : sorted(column(pred, p));
      return sameList(gv, pv);
    });
    if (!hit) return null;
    used.add(hit);
    mapping.push(hit);
  }
  return mapping;
}

/** True when `pred` answers like `gold` (see the file's header). */
export function sameResult(gold: Table, pred: Table, ordered: boolean): boolean {
  if (gold.rows.length !== pred.rows.length) return false;
  const mapping = matchColumns(gold, pred, ordered);
  if (!mapping) return false;
  const goldRows = gold.rows.map((r) => gold.columns.map((c) => r[c]));
  const predRows = pred.rows.map((r) => mapping.map((c) => r[c]));
  if (ordered) return goldRows.every((r, i) => sameList(r, predRows[i]));
  // Rows as whole tuples, multiset-equal: sort both the same way and compare in order.
  const a = [...goldRows].sort(compareRows);
  const b = [...predRows].sort(compareRows);
  return a.every((r, i) => sameList(r, b[i]));
}

/** Whether a question asks for an order ("top", "rank", "by month", "sorted", …), so row order counts. */
export function questionOrders(question: string, sql: string): boolean {
  return (
    /\border\s+by\b/i.test(sql) &&
    /\b(top|rank|highest|lowest|most|least|largest|smallest|sort|order|first|last)\b/i.test(question)
  );
}

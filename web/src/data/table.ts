/** Sorting and paging of a result table (pure: the component only renders what these return). */
import { cellText, columnKind, toNumber, type ColumnInfo, type Row } from "@quarry/functions/contract";

type SortDirection = "ascending" | "descending";
export interface SortState {
  column: string;
  direction: SortDirection;
}

/**
 * Rows sorted by one column: numbers numerically (numeric strings included), dates and text in
 * order (text by locale, numbers inside text naturally); empty cells always last; ties keep their
 * original order.
 */
export function sortRows(rows: Row[], columns: ColumnInfo[], sort: SortState | null): Row[] {
  if (!sort) return rows;
  const col = columns.find((c) => c.name === sort.column);
  if (!col) return rows;
  const kind = columnKind(col);
  const sign = sort.direction === "ascending" ? 1 : -1;
  const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: "base" });
  const isEmpty = (v: Row[string] | undefined) => v === null || v === undefined || v === "";
  const compare = (a: Row[string], b: Row[string]): number => {
    if (kind === "quantitative") {
      const x = toNumber(a);
      const y = toNumber(b);
      if (x !== null && y !== null) return x - y;
    }
    if (typeof a === "boolean" && typeof b === "boolean") return Number(a) - Number(b);
    return collator.compare(cellText(a), cellText(b));
  };
  return rows
    .map((row, index) => ({ row, index }))
    .sort((p, q) => {
      const a = p.row[sort.column];
      const b = q.row[sort.column];
      const ea = isEmpty(a);
      const eb = isEmpty(b);
      if (ea || eb) return ea === eb ? p.index - q.index : ea ? 1 : -1;
      return sign * compare(a, b) || p.index - q.index;
    })
    .map((p) => p.row);
}

/** The next sort after a click on a column header: ascending, then descending, then unsorted. */
export function nextSort(current: SortState | null, column: string): SortState | null {
  if (!current || current.column !== column) return { column, direction: "ascending" };
  if (current.direction === "ascending") return { column, direction: "descending" };
  return null;
}

export interface Page {
  rows: Row[];
  /** 0-based page actually shown (clamped). */
  page: number;
  pageCount: number;
  /** 1-based index of the first row shown, 0 when there are none. */
  from: number;
  /** 1-based index of the last row shown. */
  to: number;
  total: number;
}

/** One page of rows; an out-of-range page is clamped to the last one. */
export function paginate(rows: Row[], page: number, pageSize: number): Page {
  const size = Math.max(1, Math.floor(pageSize));
  const pageCount = Math.max(1, Math.ceil(rows.length / size));
  const p = Math.min(Math.max(0, Math.floor(page)), pageCount - 1);
  const slice = rows.slice(p * size, p * size + size);
  return {
    rows: slice,
    page: p,
    pageCount,
    from: slice.length ? p * size + 1 : 0,
    to: p * size + slice.length,
    total: rows.length,
  };
}

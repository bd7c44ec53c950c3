/** A result as a sortable, paginated table. Headers are buttons; aria-sort tells screen readers. */
import { useMemo, useState } from "react";
import {
  browserLocale,
  cellText,
  columnKind,
  columnStyles,
  formatNumber,
  type ColumnInfo,
  type Row,
} from "@quarry/functions/contract";
import { nextSort, paginate, sortRows, type SortState } from "../data/table";
import { formatCount } from "../data/format";
import { PAGE_SIZES } from "../settings/useSettings";

interface Props {
  columns: ColumnInfo[];
  rows: Row[];
  caption: string;
  pageSize: number;
  onPageSizeChange?(size: number): void;
}

export function DataTable({ columns, rows, caption, pageSize, onPageSizeChange }: Props) {
  const [sort, setSort] = useState<SortState | null>(null);
  const [page, setPage] = useState(0);
  const sorted = useMemo(() => sortRows(rows, columns, sort), [rows, columns, sort]);
  const view = paginate(sorted, page, pageSize);
  // Numbers read like a report (separators, money, percent); sorting and the CSV use the raw values.
  const styles = useMemo(() => columnStyles(columns, rows), [columns, rows]);
  const locale = browserLocale();
  const show = (c: ColumnInfo, v: Row[string] | undefined) =>
    styles[c.name] && v !== undefined ? formatNumber(v, styles[c.name], locale) : cellText(v);

  return (
    <div className="table-wrap">
      <div className="table-scroll" tabIndex={0} role="region" aria-label={`${caption} (scrollable)`}>
        <table>
          <caption className="sr-only">{caption}</caption>
          <thead>
            <tr>
              {columns.map((c) => {
                const active = sort?.column === c.name ? sort.direction : undefined;
                return (
                  <th
                    key={c.name}
                    scope="col"
                    aria-sort={active ?? "none"}
                    className={columnKind(c) === "quantitative" ? "num" : undefined}
                  >
                    <button
                      type="button"
                      onClick={() => {
                        setSort(nextSort(sort, c.name));
                        setPage(0);
                      }}
                      title={`${c.type}${c.description ? ` — ${c.description}` : ""}. Sort`}
                    >
                      {c.name}
                      <span aria-hidden="true" className="sort-mark">
                        {active === "ascending" ? " ▲" : active === "descending" ? " ▼" : ""}
                      </span>
                    </button>
                  </th>
                );
              })}
            </tr>
          </thead>
          <tbody>
            {view.rows.map((r, i) => (
              <tr key={view.from + i}>
                {columns.map((c) => (
                  <td
                    key={c.name}
                    className={columnKind(c) === "quantitative" ? "num" : undefined}
                    title={styles[c.name] && r[c.name] !== null ? cellText(r[c.name]) : undefined}
                  >
                    {r[c.name] === null ? <span className="null">null</span> : show(c, r[c.name])}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <Pager
        view={view}
        pageSize={pageSize}
        onPage={setPage}
        onPageSizeChange={
          onPageSizeChange &&
          ((n) => {
            onPageSizeChange(n);
            setPage(0);
          })
        }
      />
    </div>
  );
}

/** The pager under the table: previous, where we are, next, and the page size. */
function Pager({
  view,
  pageSize,
  onPage,
  onPageSizeChange,
}: {
  view: ReturnType<typeof paginate>;
  pageSize: number;
  onPage(page: number): void;
  onPageSizeChange?(size: number): void;
}) {
  return (
    <div className="pager" role="group" aria-label="Table pages">
      <button type="button" onClick={() => onPage(view.page - 1)} disabled={view.page === 0}>
        ‹ Previous
      </button>
      <span aria-live="polite">
        Rows {formatCount(view.from)}–{formatCount(view.to)} of {formatCount(view.total)}
      </span>
      <button type="button" onClick={() => onPage(view.page + 1)} disabled={view.page >= view.pageCount - 1}>
        Next ›
      </button>
      {onPageSizeChange && (
        <label className="page-size">
          Rows per page{" "}
          <select value={pageSize} onChange={(e) => onPageSizeChange(Number(e.target.value))}>
            {PAGE_SIZES.map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
        </label>
      )}
    </div>
  );
}

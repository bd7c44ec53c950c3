/**
 * Draws a tool's structured content — `ask`'s `result` or `run_sql`'s own rows — as the chart
 * Quarry's page draws (the server's Vega-Lite spec, with the page's number formats) and a table.
 * DOM only through `textContent`, so nothing in the data is parsed as HTML.
 */
import embed from "vega-embed";
import { expressionInterpreter } from "vega-interpreter";
import {
  AXIS_FORMAT,
  FULL_FORMAT,
  browserLocale,
  cellText,
  columnKind,
  columnStyles,
  formatAxis,
  formatNumber,
  parseStyleKey,
  type ColumnInfo,
  type Row,
} from "../src/contract";

/** The rows of a result as the tools send them (functions/src/mcp/results.ts). */
export interface ViewResult {
  sql: string;
  columns: ColumnInfo[];
  rows: Row[];
  note: string;
  chart?: { spec?: Record<string, unknown>; reason?: string };
}

/** `ask` nests the result; `run_sql` is one. */
export function resultOf(content: Record<string, unknown> | undefined): ViewResult | undefined {
  if (!content) return undefined;
  const r = (content.result ?? content) as Partial<ViewResult>;
  return Array.isArray(r.columns) && Array.isArray(r.rows) ? (r as ViewResult) : undefined;
}

function el<K extends keyof HTMLElementTagNameMap>(tag: K, text?: string, className?: string) {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (className) e.className = className;
  return e;
}

function table(r: ViewResult, locale: string | undefined): HTMLElement {
  const styles = columnStyles(r.columns, r.rows);
  const numeric = r.columns.map((c) => columnKind(c) === "quantitative");
  const t = el("table");
  const head = t.createTHead().insertRow();
  r.columns.forEach((c, i) => head.appendChild(el("th", c.name, numeric[i] ? "num" : undefined)));
  const body = t.createTBody();
  for (const row of r.rows) {
    const tr = body.insertRow();
    r.columns.forEach((c, i) => {
      const v = row[c.name];
      const style = styles[c.name];
      const text = numeric[i] && style ? formatNumber(v as number | null, style, locale) : cellText(v);
      tr.appendChild(el("td", text, numeric[i] ? "num" : undefined));
    });
  }
  const wrap = el("div", undefined, "table-wrap");
  wrap.appendChild(t);
  return wrap;
}

async function chart(host: HTMLElement, spec: Record<string, unknown>, dark: boolean, locale?: string) {
  await embed(host, spec as never, {
    actions: false,
    renderer: "svg",
    // No eval under a host's Content-Security-Policy: expressions run in vega-interpreter.
    ast: true,
    expr: expressionInterpreter,
    expressionFunctions: {
      [AXIS_FORMAT]: (value: unknown, key: string) =>
        typeof value === "number" ? formatAxis(value, parseStyleKey(key), locale) : String(value),
      [FULL_FORMAT]: (value: unknown, key: string) =>
        formatNumber(value as number | null, parseStyleKey(key), locale),
    },
    ...(dark ? { theme: "dark" as const } : {}),
  });
}

/** Replaces `root`'s content with the result's chart, table and SQL. */
export async function render(root: HTMLElement, r: ViewResult | undefined, dark: boolean): Promise<void> {
  root.replaceChildren();
  if (!r) {
    root.appendChild(el("p", "No rows in this answer.", "muted"));
    return;
  }
  const locale = browserLocale();
  const host = el("div", undefined, "chart-host");
  if (r.chart?.spec) root.appendChild(host);
  if (r.chart?.reason) root.appendChild(el("p", r.chart.reason, "muted small"));
  root.appendChild(table(r, locale));
  root.appendChild(el("p", r.note, "muted small"));
  const sql = el("details");
  sql.append(el("summary", "SQL"), el("pre", r.sql));
  root.appendChild(sql);
  if (r.chart?.spec) {
    await chart(host, r.chart.spec, dark, locale).catch((e: unknown) => {
      host.replaceWith(el("p", `The chart could not be drawn: ${(e as Error).message}`, "muted small"));
    });
  }
}

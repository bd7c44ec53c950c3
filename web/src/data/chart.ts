/**
 * Which chart fits a result, from its column types, and the Vega-Lite spec that draws it.
 * - a date/time column and a number → line over time;
 * - a text column and a number → bar per category;
 * - two numbers and nothing to group by → scatter;
 * - a second text column (with few values) colours the series.
 * A single value, or no number at all, gets no chart: the table says it better.
 */
import type { TopLevelSpec } from "vega-lite";
import { columnKind, toNumber, type ColumnInfo, type ColumnKind, type Row } from "./columns";

export type ChartType = "bar" | "line" | "scatter";

/** Most points drawn; the table and CSV still hold every row. */
const MAX_CHART_ROWS = 5000;
/** A colour series needs few distinct values to be readable. */
const MAX_SERIES = 12;

export interface ChartPlan {
  type: ChartType;
  x: ColumnInfo;
  y: ColumnInfo;
  color?: ColumnInfo;
  xKind: ColumnKind;
}

const byKind = (columns: ColumnInfo[], kind: ColumnKind) => columns.filter((c) => columnKind(c) === kind);

function distinct(rows: Row[], name: string, limit: number): number {
  const seen = new Set<string>();
  for (const r of rows) {
    seen.add(String(r[name]));
    if (seen.size > limit) break;
  }
  return seen.size;
}

/** The chart types this result can be drawn as, best first (empty: no chart). */
export function availableCharts(columns: ColumnInfo[], rows: Row[]): ChartType[] {
  const quant = byKind(columns, "quantitative");
  const temporal = byKind(columns, "temporal");
  const nominal = byKind(columns, "nominal");
  if (rows.length < 2 || quant.length === 0) return [];
  const out: ChartType[] = [];
  if (temporal.length) out.push("line", "bar");
  else if (nominal.length) out.push("bar", "line");
  if (quant.length >= 2) out.push("scatter");
  if (!out.length) return [];
  return [...new Set(out)];
}

/** The default chart: the first available one. */
export function chooseChart(columns: ColumnInfo[], rows: Row[]): ChartType | null {
  return availableCharts(columns, rows)[0] ?? null;
}

/** Which columns go on which channel for a chart type, or null when it cannot be drawn. */
export function planChart(type: ChartType, columns: ColumnInfo[], rows: Row[]): ChartPlan | null {
  if (!availableCharts(columns, rows).includes(type)) return null;
  const quant = byKind(columns, "quantitative");
  const temporal = byKind(columns, "temporal");
  const nominal = byKind(columns, "nominal");
  if (type === "scatter") {
    const color = nominal.find((c) => distinct(rows, c.name, MAX_SERIES) <= MAX_SERIES);
    return { type, x: quant[0], y: quant[1], color, xKind: "quantitative" };
  }
  const x = temporal[0] ?? nominal[0];
  const xKind = columnKind(x);
  const color = nominal.find((c) => c !== x && distinct(rows, c.name, MAX_SERIES) <= MAX_SERIES);
  return { type, x, y: quant[0], color, xKind };
}

/** Vega-Lite reads dots and brackets in field names as paths; escape them. */
export function fieldRef(name: string): string {
  return name.replace(/([.[\]\\])/g, "\\$1");
}

/** Rows for the chart: numbers that arrived as strings (INT64, NUMERIC) become numbers. */
function chartData(plan: ChartPlan, rows: Row[]): Row[] {
  const numeric = [plan.y, ...(plan.xKind === "quantitative" ? [plan.x] : [])].map((c) => c.name);
  return rows.slice(0, MAX_CHART_ROWS).map((r) => {
    const out: Row = { ...r };
    for (const n of numeric) out[n] = toNumber(r[n]);
    return out;
  });
}

/** The Vega-Lite spec of a plan, sized to its container. */
export function chartSpec(plan: ChartPlan, rows: Row[], title?: string): TopLevelSpec {
  const xType =
    plan.xKind === "temporal" ? "temporal" : plan.xKind === "quantitative" ? "quantitative" : "nominal";
  const x = {
    field: fieldRef(plan.x.name),
    type: xType,
    title: plan.x.name,
    ...(plan.type === "bar" && xType === "nominal" ? { sort: "-y" as const } : {}),
  };
  const y = { field: fieldRef(plan.y.name), type: "quantitative" as const, title: plan.y.name };
  const color = plan.color
    ? { field: fieldRef(plan.color.name), type: "nominal" as const, title: plan.color.name }
    : undefined;
  const mark =
    plan.type === "line"
      ? { type: "line" as const, point: rows.length <= 60, tooltip: true }
      : plan.type === "scatter"
        ? { type: "point" as const, filled: true, tooltip: true }
        : { type: "bar" as const, tooltip: true };
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    ...(title ? { title } : {}),
    width: "container",
    height: 280,
    autosize: { type: "fit", contains: "padding" },
    data: { values: chartData(plan, rows) },
    mark,
    encoding: {
      x: x as never,
      y,
      ...(color ? { color } : {}),
    },
  } as TopLevelSpec;
}

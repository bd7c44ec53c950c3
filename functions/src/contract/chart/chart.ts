/**
 * Which chart fits a result, from what its columns mean rather than only their engine types:
 * - time (DATE/TIMESTAMP, or text such as `2025-01`, `Jan 2025`, `2025-Q1`, `2025-W05`, or an
 *   integer `year`) goes on the x axis in calendar order, drawn as a line (bars offered);
 * - a category and a number → bars, in the SQL's ORDER BY when it has one, else by value;
 * - a second category with few values colours the series (several lines, grouped bars);
 * - two numbers and nothing to group by → scatter; with time or categories and no series column,
 *   numbers of one kind (revenue and its cost or target) are drawn together as series, with a
 *   legend naming them (a fold of the measures); others leave the first number drawn;
 * - shares and rates get a percent axis, money a currency axis (numbers.ts);
 * - too many categories become the top ones plus "Other"; too many points, no chart, with the reason.
 * Pure: the view draws what `chooseChart` decides, with `chartSpec` (chart-spec.ts).
 */
import { columnKind, toNumber } from "./columns";
import type { ColumnInfo, Row } from "../events";
import { numberStyle, type NumberStyle } from "./numbers";
import { timeColumn, type TimeColumn } from "./time";

export type ChartType = "bar" | "line" | "scatter";

/** Most points drawn; the table and CSV still hold every row. */
const MAX_CHART_ROWS = 5000;
/** A colour series needs few distinct values to be readable. */
const MAX_SERIES = 12;
/** More categories than this on an axis become the top ones plus "Other". */
const MAX_CATEGORIES = 25;
/** How many categories are kept when there are too many. */
export const TOP_N = 20;
/** The label of the bar that sums the categories left out. */
export const OTHER = "Other";
/** The label of an empty category. */
const EMPTY = "(empty)";

/** What the chart shows, decided from the result; `options` empty = no chart (see `reason`). */
export interface ChartChoice {
  /** Chart types this result can be drawn as, best first. */
  options: ChartType[];
  /** Why there is no chart, or what the chart leaves out. */
  reason?: string;
  x?: ColumnInfo;
  y?: ColumnInfo;
  color?: ColumnInfo;
  /**
   * Numbers drawn together as series (y is the first), when there is no series column: the spec
   * folds them into one value per measure, coloured by the measure's name.
   */
  measures?: ColumnInfo[];
  /** The x axis: time (calendar order), categories, or a number (scatter). */
  xAxis: "time" | "category" | "quantitative";
  /** For a time axis: its grain, and whether it is drawn on a temporal scale (dates) or as labels. */
  time?: Pick<TimeColumn, "unit" | "native">;
  /** How the x values are ordered: calendar, the SQL's ORDER BY, or by value (largest first). */
  order?: "time" | "sql" | "value";
  /** The x values in drawing order (time and category axes). */
  xOrder: string[];
  yStyle: NumberStyle;
  /** The rows to draw: numbers parsed, time in order, categories folded into "Other" when needed. */
  rows: Row[];
}

interface ChooseOptions {
  /** The SQL that produced the result: its top-level ORDER BY decides the category order. */
  sql?: string;
}

const NO_CHART = (reason: string): ChartChoice => ({
  options: [],
  reason,
  xAxis: "category",
  xOrder: [],
  yStyle: { kind: "number" },
  rows: [],
});

/** Whether the SQL sorts its final result (an ORDER BY outside any parentheses). */
export function hasTopLevelOrderBy(sql: string | undefined): boolean {
  if (!sql) return false;
  const code = sql
    .replace(/--[^\n]*/g, " ")
    .replace(/\/\*[\s\S]*?\*\//g, " ")
    .replace(/'(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.)*"|`[^`]*`/g, "''");
  let depth = 0;
  for (let i = 0; i < code.length; i++) {
    const ch = code[i];
    if (ch === "(") depth++;
    else if (ch === ")") depth = Math.max(0, depth - 1);
    else if (depth === 0 && /o/i.test(ch) && /^order\s+by\b/i.test(code.slice(i, i + 12))) {
      if (i === 0 || /\W/.test(code[i - 1])) return true;
    }
  }
  return false;
}

function distinctCount(rows: Row[], name: string, limit = Infinity): number {
  const seen = new Set<string>();
  for (const r of rows) {
    seen.add(String(r[name]));
    if (seen.size > limit) break;
  }
  return seen.size;
}

const label = (v: Row[string] | undefined): string =>
  v === null || v === undefined || v === "" ? EMPTY : typeof v === "object" ? JSON.stringify(v) : String(v);

/** The columns' roles: the time column, the categories, the numbers. */
function roles(columns: ColumnInfo[], rows: Row[]) {
  let time: { column: ColumnInfo; info: TimeColumn } | undefined;
  for (const c of columns) {
    const info = timeColumn(
      c,
      rows.map((r) => r[c.name]),
    );
    if (info) {
      time = { column: c, info };
      break;
    }
  }
  const rest = columns.filter((c) => c !== time?.column);
  const quant = rest.filter((c) => columnKind(c) === "quantitative");
  const nominal = rest.filter((c) => columnKind(c) === "nominal" || (columnKind(c) === "temporal" && !time));
  return { time, quant, nominal };
}

/** Chooses the chart for a result: type options, channels, order, formats and the rows to draw. */
export function chooseChart(columns: ColumnInfo[], rows: Row[], opts: ChooseOptions = {}): ChartChoice {
  if (rows.length < 2) return NO_CHART("One row: the table says it better than a chart.");
  const { time, quant, nominal } = roles(columns, rows);
  if (!quant.length) return NO_CHART("No number to chart.");
  const y = quant[0];
  const yStyle = numberStyle(
    y,
    rows.slice(0, 200).map((r) => r[y.name]),
  );
  if (rows.length > MAX_CHART_ROWS) {
    return NO_CHART(
      `Too many rows to chart (${rows.length.toLocaleString()}; at most ${MAX_CHART_ROWS.toLocaleString()}). The table and the CSV hold them all.`,
    );
  }
  const series = (exclude?: ColumnInfo) =>
    nominal.find((c) => c !== exclude && distinctCount(rows, c.name, MAX_SERIES) <= MAX_SERIES);
  if (time) {
    const color = series();
    return timeChoice(time, { y, yStyle, color, measures: color ? [] : measuresWith(y, quant, rows) }, rows);
  }
  if (nominal.length) {
    // Two categories: the one with more values on the axis, the other (if few) as colour.
    const [a, b] = nominal;
    const swap = b && distinctCount(rows, b.name) > distinctCount(rows, a.name) && series(b) === a;
    const x = swap ? b : a;
    const color = swap ? a : series(x);
    const drawn = { y, yStyle, color, measures: color ? [] : measuresWith(y, quant, rows) };
    return categoryChoice(x, drawn, hasTopLevelOrderBy(opts.sql), rows);
  }
  if (quant.length >= 2) {
    return {
      options: ["scatter"],
      x: quant[0],
      y: quant[1],
      color: series(),
      xAxis: "quantitative",
      xOrder: [],
      yStyle: numberStyle(
        quant[1],
        rows.slice(0, 200).map((r) => r[quant[1].name]),
      ),
      rows: parseNumbers(rows, [quant[0], quant[1]]),
    };
  }
  return NO_CHART("Nothing to chart the number against.");
}

/** Names of a measure that is compared with another of the same unit, whatever its own name says. */
const COMPARED =
  /(^|[^a-z])(target|targets|goal|goals|budget|forecast|plan|planned|quota|expected|projected|baseline|benchmark|prior|previous|last_year)([^a-z]|$)/i;

/**
 * The numbers that can share y's axis as series: not identifiers (`plain`), and of y's kind —
 * money with money, counts with counts, percentages with percentages — or named as what y is
 * compared with (a target, a budget, a forecast: the page cannot know their unit, so they read
 * like y). Revenue and its target or its cost, not orders beside revenue. Fewer than two: none.
 */
function measuresWith(y: ColumnInfo, quant: ColumnInfo[], rows: Row[]): ColumnInfo[] {
  const kindOf = (c: ColumnInfo) =>
    numberStyle(
      c,
      rows.slice(0, 200).map((r) => r[c.name]),
    ).kind;
  const yKind = kindOf(y);
  if (yKind === "plain") return [];
  const found = quant.filter((c) => {
    if (c === y) return true;
    const kind = kindOf(c);
    return kind === yKind || (kind === "number" && COMPARED.test(c.name.replace(/([a-z])([A-Z])/g, "$1_$2")));
  });
  return found.length >= 2 ? found.slice(0, MAX_SERIES) : [];
}

/** What is drawn up the y axis: one number (perhaps coloured by a series column) or several measures. */
interface Drawn {
  y: ColumnInfo;
  yStyle: NumberStyle;
  color: ColumnInfo | undefined;
  measures: ColumnInfo[];
}

const drawnFields = ({ y, color, measures }: Drawn) => ({
  color,
  ...(measures.length ? { measures } : {}),
  numbers: measures.length ? measures : [y],
});

function parseNumbers(rows: Row[], cols: ColumnInfo[]): Row[] {
  return rows.map((r) => {
    const out: Row = { ...r };
    for (const c of cols) out[c.name] = toNumber(r[c.name]);
    return out;
  });
}

function timeChoice(time: { column: ColumnInfo; info: TimeColumn }, what: Drawn, rows: Row[]): ChartChoice {
  const { y, yStyle } = what;
  const { numbers, ...series } = drawnFields(what);
  const x = time.column;
  const keyed = rows
    .map((row, index) => ({ row, index, key: time.info.key(row[x.name]) }))
    .filter((p): p is { row: Row; index: number; key: number } => p.key !== null);
  const dropped = rows.length - keyed.length;
  if (keyed.length < 2) return NO_CHART(`Fewer than two rows have a ${x.name}: nothing to draw over time.`);
  keyed.sort((p, q) => p.key - q.key || p.index - q.index);
  const drawn = parseNumbers(
    keyed.map((p) => p.row),
    numbers,
  ).map((r) => (time.info.native ? r : { ...r, [x.name]: label(r[x.name]) }));
  const xOrder = [...new Set(drawn.map((r) => label(r[x.name])))];
  return {
    options: ["line", "bar"],
    ...(dropped ? { reason: `${dropped} row${dropped === 1 ? "" : "s"} without a ${x.name} left out.` } : {}),
    x,
    y,
    ...series,
    xAxis: "time",
    time: { unit: time.info.unit, native: time.info.native },
    order: "time",
    xOrder,
    yStyle,
    rows: drawn,
  };
}

/** Categories in order (SQL's, else by total value), folded to the top ones plus "Other" when many. */
function categoryChoice(x: ColumnInfo, what: Drawn, sqlOrdered: boolean, rows: Row[]): ChartChoice {
  const { y, yStyle } = what;
  const { numbers, ...series } = drawnFields(what);
  const { color } = series;
  let drawn = parseNumbers(rows, numbers).map((r) => ({ ...r, [x.name]: label(r[x.name]) }));
  const totals = new Map<string, number>();
  for (const r of drawn) {
    const k = r[x.name] as string;
    totals.set(k, (totals.get(k) ?? 0) + ((r[y.name] as number | null) ?? 0));
  }
  const byValue = [...totals.keys()].sort((a, b) => totals.get(b)! - totals.get(a)!);
  let xOrder = sqlOrdered ? [...totals.keys()] : byValue;
  let reason: string | undefined;
  if (xOrder.length > MAX_CATEGORIES) {
    const keep = new Set(byValue.slice(0, TOP_N));
    const left = xOrder.length - TOP_N;
    // A sum of shares or averages means nothing: "Other" only for amounts and counts, without colour.
    const foldable = !color && !series.measures && yStyle.kind !== "percent";
    const other = drawn.filter((r) => !keep.has(r[x.name] as string));
    drawn = drawn.filter((r) => keep.has(r[x.name] as string));
    xOrder = xOrder.filter((k) => keep.has(k));
    if (foldable) {
      const sum = other.reduce((s, r) => s + ((r[y.name] as number | null) ?? 0), 0);
      drawn.push({ [x.name]: OTHER, [y.name]: sum });
      xOrder.push(OTHER);
    }
    reason =
      `Showing the top ${TOP_N} of ${(left + TOP_N).toLocaleString()} ${x.name} values by ${y.name}` +
      (foldable ? `; the other ${left.toLocaleString()} are summed as “${OTHER}”.` : ".");
  }
  return {
    options: ["bar", "line"],
    ...(reason ? { reason } : {}),
    x,
    y,
    ...series,
    xAxis: "category",
    order: sqlOrdered ? "sql" : "value",
    xOrder,
    yStyle,
    rows: drawn,
  };
}

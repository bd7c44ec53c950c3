/**
 * Time hidden in text and integers: SQL often returns a month as `'2025-01'` (strftime → VARCHAR),
 * a quarter as `'2025-Q1'`, a year as an INT64. These are time, and belong on a time axis in
 * calendar order — not on a category axis sorted by value. Pure: each value gets a sortable key.
 */
import { columnKind, toNumber } from "./columns";
import type { ColumnInfo, JsonValue } from "../events";

/** The grain of a time column. `date`/`datetime` come from engine types or ISO date text. */
type TimeUnit = "year" | "quarter" | "month" | "week" | "date" | "datetime";

const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];

/** A month written as a name ("Jan", "January"); NaN for any other word. */
function monthKey(year: number, name: string): number {
  const i = MONTHS.indexOf(name.slice(0, 3).toLowerCase());
  const full = new Date(Date.UTC(2000, i)).toLocaleString("en", { month: "long", timeZone: "UTC" });
  return i >= 0 && full.toLowerCase().startsWith(name.toLowerCase()) ? Date.UTC(year, i) : NaN;
}

/** One recogniser per text shape: its unit and the value's sort key (ms since epoch, UTC). */
const SHAPES: { unit: TimeUnit; re: RegExp; key(m: RegExpExecArray): number }[] = [
  { unit: "year", re: /^(\d{4})$/, key: (m) => (+m[1] >= 1900 && +m[1] <= 2200 ? Date.UTC(+m[1], 0) : NaN) },
  { unit: "month", re: /^(\d{4})[-/](\d{1,2})$/, key: (m) => Date.UTC(+m[1], +m[2] - 1) },
  {
    unit: "month",
    re: /^([A-Za-z]{3,9})\.?[ -](\d{4})$/,
    key: (m) => monthKey(+m[2], m[1]),
  },
  {
    unit: "month",
    re: /^(\d{4})[ -]([A-Za-z]{3,9})$/,
    key: (m) => monthKey(+m[1], m[2]),
  },
  { unit: "quarter", re: /^(\d{4})[- ]?Q([1-4])$/i, key: (m) => Date.UTC(+m[1], (+m[2] - 1) * 3) },
  { unit: "quarter", re: /^Q([1-4])[- ]?(\d{4})$/i, key: (m) => Date.UTC(+m[2], (+m[1] - 1) * 3) },
  {
    unit: "week",
    re: /^(\d{4})[- ]?W(\d{1,2})$/i,
    key: (m) => Date.UTC(+m[1], 0, 1) + (+m[2] - 1) * 7 * 86_400_000,
  },
  { unit: "date", re: /^(\d{4})-(\d{2})-(\d{2})$/, key: (m) => Date.UTC(+m[1], +m[2] - 1, +m[3]) },
  {
    unit: "datetime",
    re: /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?/,
    key: (m) => Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +(m[6] ?? 0)),
  },
];

/** Integer columns named like a year (`year`, `order_year`, `yr`) whose values look like years. */
const YEAR_NAME = /(^|[^a-z])(year|yr)([^a-z]|$)/i;

/** A column that is time: its unit and each value's sort key (null for empty or unreadable). */
export interface TimeColumn {
  unit: TimeUnit;
  /** True for engine DATE/TIMESTAMP types (drawn on a temporal scale); false for text and years. */
  native: boolean;
  key(value: JsonValue | undefined): number | null;
}

function shapeKey(value: JsonValue | undefined, unit: TimeUnit): number | null {
  if (typeof value !== "string" && typeof value !== "number") return null;
  const text = String(value).trim();
  for (const s of SHAPES) {
    if (s.unit !== unit) continue;
    const m = s.re.exec(text);
    if (m) {
      const k = s.key(m);
      if (Number.isFinite(k)) return k;
    }
  }
  return null;
}

/** The unit every non-empty text value matches, or undefined (mixed shapes, other text). */
function textUnit(values: readonly (JsonValue | undefined)[]): TimeUnit | undefined {
  const present = values.filter((v) => v !== null && v !== undefined && v !== "");
  if (!present.length) return undefined;
  const units: TimeUnit[] = ["month", "quarter", "week", "date", "datetime", "year"];
  return units.find((u) => present.every((v) => shapeKey(v, u) !== null));
}

/**
 * Whether a column is time, and how its values sort. Engine DATE/TIMESTAMP columns are time;
 * text columns whose every value is a month, quarter, week, year or ISO date are; so are integer
 * columns named like a year whose values lie in 1900–2200.
 */
export function timeColumn(
  column: Pick<ColumnInfo, "name" | "type" | "mode">,
  values: readonly (JsonValue | undefined)[],
): TimeColumn | undefined {
  const kind = columnKind(column);
  if (kind === "temporal") {
    const unit: TimeUnit = /^DATE$/i.test(column.type.trim()) ? "date" : "datetime";
    return {
      unit,
      native: true,
      key: (v) => (typeof v === "string" && !Number.isNaN(Date.parse(v)) ? Date.parse(v) : null),
    };
  }
  if (kind === "nominal" && /STRING|VARCHAR|TEXT/i.test(column.type)) {
    const unit = textUnit(values);
    if (!unit) return undefined;
    // ISO dates in text draw like DATE columns; months, quarters, weeks and years stay labelled as written.
    return { unit, native: unit === "date" || unit === "datetime", key: (v) => shapeKey(v, unit) };
  }
  if (kind === "quantitative" && YEAR_NAME.test(column.name)) {
    const nums = values.map((v) => toNumber(v ?? null)).filter((n): n is number => n !== null);
    if (nums.length && nums.every((n) => Number.isInteger(n) && n >= 1900 && n <= 2200)) {
      return { unit: "year", native: false, key: (v) => shapeKey(toNumber(v ?? null) ?? null, "year") };
    }
  }
  return undefined;
}

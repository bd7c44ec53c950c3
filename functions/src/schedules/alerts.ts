/**
 * Alert conditions on a scheduled question's rows, evaluated deterministically without a model: a
 * column crosses a threshold, a column's total changes by more than N % against the previous run,
 * or the query returns any row / no row. Each evaluation says what it saw in one line of words.
 *
 * Values may be numbers, numeric strings (BigQuery NUMERIC and BIGNUMERIC arrive as strings),
 * bigints (DuckDB BIGINT) or objects whose text is a number (big.js); null and undefined are empty
 * and ignored, and the summary says so when nothing but empties was found.
 */
import { z } from "zod";
import { parse } from "../runs/schemas";
import { QuarryError } from "../errors";

const OPS = [">", ">=", "<", "<=", "==", "!="] as const;
type Op = (typeof OPS)[number];

const OP_WORDS: Record<Op, string> = {
  ">": "above",
  ">=": "at or above",
  "<": "below",
  "<=": "at or below",
  "==": "equal to",
  "!=": "not equal to",
};

const column = z
  .string({ message: "column must name a column of the answer's result" })
  .trim()
  .min(1, "column must name a column of the answer's result")
  .max(300, "column is too long to be a column name");

/** An alert condition as the API takes it (`alert` in `POST /schedules`), strict. */
export const AlertConditionSpec = z.discriminatedUnion(
  "kind",
  [
    z.strictObject({
      kind: z.literal("threshold"),
      column,
      op: z.enum(OPS, { message: `op must be one of ${OPS.join(" ")}` }),
      value: z
        .number({ message: "value must be a number, like 100000 (a number, not text in quotes)" })
        .finite("value must be a finite number"),
      row: z.enum(["any", "all", "first"], { message: 'row must be "any", "all" or "first"' }).optional(),
    }),
    z.strictObject({
      kind: z.literal("change"),
      column,
      direction: z.enum(["down", "up", "either"], { message: 'direction must be "down", "up" or "either"' }),
      percent: z
        .number({ message: "percent must be a number greater than 0, like 20 for 20 %" })
        .finite("percent must be a finite number")
        .positive("percent must be greater than 0, like 20 for 20 %"),
    }),
    z.strictObject({
      kind: z.literal("rows"),
      when: z.enum(["any", "none"], { message: 'when must be "any" (some row returned) or "none" (no row)' }),
    }),
  ],
  { message: "kind must be threshold, change or rows" },
);
export type AlertCondition = z.infer<typeof AlertConditionSpec>;

/** One result row, column name → value, as the warehouses return them. */
export type Row = Readonly<Record<string, unknown>>;

/** What an evaluation found. */
export interface AlertOutcome {
  fired: boolean;
  /** One line in words, e.g. "revenue fell 21.4 % (from 120,000 to 94,300)". */
  summary: string;
  /** For `change`: this run's figure, to store and pass as `previous` next run; absent when there was none. */
  figure?: number;
  /** Set when the condition could not be checked at all (its column is missing or holds no numbers). */
  problem?: string;
}

/**
 * The condition, checked; throws a 400 naming each field to fix. With `columns` (the answer's
 * result columns), a column the result does not have is refused too.
 */
export function validateCondition(cond: unknown, columns?: readonly string[]): AlertCondition {
  const condition = parse(AlertConditionSpec, cond, "alert");
  if (columns && condition.kind !== "rows" && resolveColumn(condition.column, columns) === undefined) {
    throw new QuarryError(
      "bad_request:body",
      `Invalid alert: column: the result has no column "${condition.column}"; its columns are ${columns.join(", ")}.`,
    );
  }
  return condition;
}

/**
 * Evaluates a condition on this run's rows. `previous` is the figure the last run stored (for
 * `change`); without one, a change alert does not fire and says it is the first run.
 */
export function evaluate(cond: AlertCondition, rows: readonly Row[], previous?: number | null): AlertOutcome {
  if (cond.kind === "rows") return evaluateRows(cond.when, rows.length);
  const name = rows.length ? resolveColumn(cond.column, Object.keys(rows[0])) : cond.column;
  if (name === undefined) {
    const problem = `the result has no column "${cond.column}" (its columns are ${Object.keys(rows[0]).join(", ")})`;
    return { fired: false, summary: `${problem}: the alert cannot be checked`, problem };
  }
  const values = numbersOf(rows, name);
  if (!values.numbers.length) return nothingToCompare(cond.column, rows.length, values);
  return cond.kind === "threshold"
    ? evaluateThreshold(cond, values, rows.length)
    : evaluateChange(cond, values.numbers, previous);
}

function evaluateRows(when: "any" | "none", count: number): AlertOutcome {
  const summary = count
    ? `the query returned ${count.toLocaleString("en-US")} row${count === 1 ? "" : "s"}`
    : "the query returned no rows";
  return { fired: when === "any" ? count > 0 : count === 0, summary };
}

interface Values {
  /** The numbers in row order; `first` is the first row's, possibly empty (undefined). */
  numbers: number[];
  first: number | undefined;
  empty: number;
  notNumbers: number;
}

function numbersOf(rows: readonly Row[], name: string): Values {
  const out: Values = { numbers: [], first: undefined, empty: 0, notNumbers: 0 };
  rows.forEach((row, i) => {
    const raw = row[name];
    if (raw === null || raw === undefined) return void out.empty++;
    const n = toNumber(raw);
    if (n === undefined) return void out.notNumbers++;
    out.numbers.push(n);
    if (i === 0) out.first = n;
  });
  return out;
}

/** A number from a warehouse value, or undefined when it is not one. */
function toNumber(raw: unknown): number | undefined {
  if (typeof raw === "number") return Number.isFinite(raw) ? raw : undefined;
  if (typeof raw === "bigint") return Number(raw);
  if (typeof raw === "boolean") return undefined;
  const text = typeof raw === "object" ? String(raw as object) : typeof raw === "string" ? raw : "";
  return /^\s*[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?\s*$/i.test(text) ? Number(text) : undefined;
}

function nothingToCompare(column: string, count: number, values: Values): AlertOutcome {
  if (!count) return { fired: false, summary: `the query returned no rows: no ${column} to compare` };
  if (values.notNumbers) {
    const problem = `${column} holds no numbers (${describeCounts(values)} of ${plural(count, "row")})`;
    return { fired: false, summary: `${problem}: the alert cannot be checked`, problem };
  }
  return {
    fired: false,
    summary: `${column} is empty in ${count === 1 ? "the only row" : `all ${count.toLocaleString("en-US")} rows`}: nothing to compare`,
  };
}

function compare(a: number, op: Op, b: number): boolean {
  switch (op) {
    case ">":
      return a > b;
    case ">=":
      return a >= b;
    case "<":
      return a < b;
    case "<=":
      return a <= b;
    case "==":
      return a === b;
    case "!=":
      return a !== b;
  }
}

type Threshold = Extract<AlertCondition, { kind: "threshold" }>;

function evaluateThreshold(cond: Threshold, values: Values, count: number): AlertOutcome {
  const { column: col, op, value } = cond;
  const words = `${OP_WORDS[op]} ${fmt(value)}`;
  if ((cond.row ?? "any") === "first" || count === 1) {
    if (values.first === undefined)
      return { fired: false, summary: `${col} is empty in the first row: nothing to compare` };
    const fired = compare(values.first, op, value);
    const where = count === 1 ? "" : " in the first row";
    return { fired, summary: `${col} is ${fmt(values.first)}${where}, ${fired ? "" : "not "}${words}` };
  }
  const hits = values.numbers.filter((n) => compare(n, op, value)).length;
  const total = values.numbers.length;
  const fired = cond.row === "all" ? hits === total : hits > 0;
  const notes = [];
  if (op.startsWith(">")) notes.push(`highest ${fmt(Math.max(...values.numbers))}`);
  if (op.startsWith("<")) notes.push(`lowest ${fmt(Math.min(...values.numbers))}`);
  if (values.empty + values.notNumbers) notes.push(`${describeCounts(values)} ignored`);
  const n = (k: number) => k.toLocaleString("en-US");
  const share =
    hits === total ? `all ${n(total)}` : hits ? `${n(hits)} of ${n(total)}` : `none of ${n(total)}`;
  const note = notes.length ? ` (${notes.join("; ")})` : "";
  return { fired, summary: `${col} is ${words} in ${share} rows${note}` };
}

type Change = Extract<AlertCondition, { kind: "change" }>;

/**
 * The figure compared is the sum of the column over the rows (one row: its value), so "revenue by
 * region" compares total revenue. A previous figure of 0 makes any change infinite: it fires for
 * the matching direction.
 */
function evaluateChange(cond: Change, numbers: number[], previous?: number | null): AlertOutcome {
  const figure = numbers.reduce((a, b) => a + b, 0);
  const col = cond.column;
  if (previous === undefined || previous === null || !Number.isFinite(previous)) {
    return { fired: false, summary: `first run, nothing to compare (${col} is ${fmt(figure)})`, figure };
  }
  if (figure === previous) return { fired: false, summary: `${col} is unchanged at ${fmt(figure)}`, figure };
  const up = figure > previous;
  const pct = previous === 0 ? Infinity : (Math.abs(figure - previous) / Math.abs(previous)) * 100;
  const moved = `${col} ${up ? "rose" : "fell"}${Number.isFinite(pct) ? ` ${pct.toFixed(1)} %` : ""} (from ${fmt(previous)} to ${fmt(figure)})`;
  const directionOk = cond.direction === "either" || (cond.direction === "up") === up;
  // A tolerance so a change of exactly the percent fires despite binary fractions.
  const bigEnough = pct >= cond.percent - 1e-9;
  if (directionOk && bigEnough) return { fired: true, summary: moved, figure };
  const why = directionOk
    ? `less than ${fmt(cond.percent)} %`
    : `the alert watches for a ${cond.direction === "up" ? "rise" : "fall"}`;
  return { fired: false, summary: `${moved}; ${why}`, figure };
}

/** The column as the result spells it: exact, else the one matching without case (BigQuery's rule). */
function resolveColumn(wanted: string, columns: readonly string[]): string | undefined {
  if (columns.includes(wanted)) return wanted;
  const matches = columns.filter((c) => c.toLowerCase() === wanted.toLowerCase());
  return matches.length === 1 ? matches[0] : undefined;
}

function describeCounts(values: Values): string {
  const parts = [];
  if (values.empty) parts.push(`${values.empty.toLocaleString("en-US")} empty`);
  if (values.notNumbers) parts.push(`${values.notNumbers.toLocaleString("en-US")} not numbers`);
  return parts.join(", ");
}

function plural(n: number, word: string): string {
  return `${n.toLocaleString("en-US")} ${word}${n === 1 ? "" : "s"}`;
}

/** A figure for people: grouped thousands, at most two decimals (three significant below 1). */
function fmt(n: number): string {
  const small = n !== 0 && Math.abs(n) < 1;
  return n.toLocaleString("en-US", small ? { maximumSignificantDigits: 3 } : { maximumFractionDigits: 2 });
}

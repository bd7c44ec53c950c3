/**
 * Numbers as a report prints them: how a column's values should read (money, a percentage, a plain
 * count, or an identifier such as a year that must not get separators), decided from the column's
 * name and its note, and the formatting for table cells (full) and chart axes (compact). Pure: the
 * locale is a parameter (the page passes the browser's). The CSV keeps the raw values.
 */
import { columnKind, toNumber } from "./columns";
import type { ColumnInfo, JsonValue } from "../events";

/**
 * How a numeric column reads. `percent` with `scale: 1` holds fractions (0.25 → 25%), with
 * `scale: 100` numbers already in percent (25 → 25%). `plain`: years, ids and codes, printed as is.
 */
export type NumberStyle =
  | { kind: "currency"; currency: string }
  | { kind: "percent"; scale: 1 | 100 }
  | { kind: "number" }
  | { kind: "plain" };

const CURRENCY_CODES = ["usd", "eur", "gbp", "jpy", "chf", "cad", "aud", "inr", "cny", "sek", "nok", "dkk"];
/** Words in a name or note that mean money. */
const MONEY =
  /(^|[^a-z])(revenue|sales|turnover|gmv|price|prices|cost|costs|amount|spend|spent|income|profit|margin|aov|arpu|ltv|fee|fees|payment|payments|discount|shipping|total_value|order_value|basket)([^a-z]|$)/i;
/** Words that mean a share or a rate. */
const PERCENT_WORDS =
  /(^|[^a-z])(share|rate|ratio|pct|percent|percentage|conversion|growth|churn)([^a-z]|$)/i;
/** Names of values in percent units already (12.5 means 12.5%). */
const PERCENT_UNITS = /(^|[^a-z])(pct|percent|percentage)([^a-z]|$)|%/i;
/** Identifiers and calendar numbers: never "2,025". */
const PLAIN =
  /(^|[^a-z])(year|yr|id|zip|postcode|postal_code|code|phone|week|month|quarter|day|hour)([^a-z]|$)/i;

/** The currency a name or note names (`*_usd`, "in EUR", "$"), or undefined. */
function currencyOf(text: string): string | undefined {
  const lower = text.toLowerCase();
  for (const code of CURRENCY_CODES) {
    if (new RegExp(`(^|[^a-z])${code}([^a-z]|$)`).test(lower)) return code.toUpperCase();
  }
  if (/\$|dollar/.test(lower)) return "USD";
  if (/€|euro/.test(lower)) return "EUR";
  if (/£/.test(lower)) return "GBP";
  return undefined;
}

/**
 * How a numeric column's values read, from its name and note (the authored description).
 * `values` (optional) tells a share in fractions (all within ±1) from one in percent units.
 * Money without a named currency is taken as `defaultCurrency`.
 */
export function numberStyle(
  column: Pick<ColumnInfo, "name" | "type" | "description">,
  values: readonly (JsonValue | undefined)[] = [],
  defaultCurrency = "USD",
): NumberStyle {
  const name = column.name.replace(/([a-z])([A-Z])/g, "$1_$2");
  const note = column.description ?? "";
  if (PERCENT_WORDS.test(name) || PERCENT_UNITS.test(name) || /percent|%/i.test(note)) {
    const nums = values.map(toNumber).filter((n): n is number => n !== null);
    const fractions = nums.length > 0 && nums.every((n) => Math.abs(n) <= 1);
    const units = PERCENT_UNITS.test(name) || /in percent|percentage points/i.test(note);
    return { kind: "percent", scale: units || !fractions ? 100 : 1 };
  }
  // A currency in the name (`price_usd`) or the note ("in EUR") says money outright.
  const currency = currencyOf(name) ?? currencyOf(note);
  if (currency) return { kind: "currency", currency };
  if (MONEY.test(name)) return { kind: "currency", currency: currency ?? defaultCurrency };
  if (PLAIN.test(name)) return { kind: "plain" };
  return { kind: "number" };
}

/** Fraction digits a value needs: integers none, others up to two (money always two). */
function digits(n: number): number {
  return Number.isInteger(n) ? 0 : 2;
}

function formatter(style: NumberStyle, locale: string | undefined, compact: boolean, n: number) {
  const base: Intl.NumberFormatOptions = compact
    ? { notation: "compact", minimumFractionDigits: 0, maximumFractionDigits: Math.abs(n) < 1000 ? 2 : 1 }
    : { maximumFractionDigits: digits(n) };
  switch (style.kind) {
    case "currency":
      return new Intl.NumberFormat(locale, {
        ...base,
        style: "currency",
        currency: style.currency,
        ...(compact ? {} : { minimumFractionDigits: Number.isInteger(n) ? 0 : 2, maximumFractionDigits: 2 }),
      });
    case "percent":
      return new Intl.NumberFormat(locale, {
        style: "percent",
        maximumFractionDigits: compact ? 1 : 2,
      });
    default:
      return new Intl.NumberFormat(locale, base);
  }
}

/**
 * A cell's number for the table: separators, currency or percent; full precision for money
 * (two decimals). A value that is not a number comes back as its text; null as "".
 */
export function formatNumber(value: JsonValue | undefined, style: NumberStyle, locale?: string): string {
  const n = toNumber(value ?? null);
  if (n === null) return value === null || value === undefined ? "" : String(value);
  if (style.kind === "plain") return String(value);
  if (style.kind === "percent") return formatter(style, locale, false, n).format(n / style.scale);
  // INT64 beyond 2^53 arrives as a string: Intl formats the digits exactly.
  const exact = typeof value === "string" && Number.isInteger(n) && !Number.isSafeInteger(n);
  return formatter(style, locale, false, n).format(exact ? (value as unknown as number) : n);
}

/** An axis label: compact ("$1.2M", "350K", "12%"); years and ids as they are. */
export function formatAxis(value: number, style: NumberStyle, locale?: string): string {
  if (!Number.isFinite(value)) return "";
  if (style.kind === "plain") return String(value);
  if (style.kind === "percent") return formatter(style, locale, true, value).format(value / style.scale);
  return formatter(style, locale, true, value).format(value);
}

/** The number style of every numeric column of a result (others are absent). */
export function columnStyles(
  columns: ColumnInfo[],
  rows: readonly Record<string, JsonValue>[],
): Record<string, NumberStyle> {
  const out: Record<string, NumberStyle> = {};
  for (const c of columns) {
    if (columnKind(c) !== "quantitative") continue;
    out[c.name] = numberStyle(
      c,
      rows.slice(0, 200).map((r) => r[c.name]),
    );
  }
  return out;
}

/**
 * The first of `tags` that Intl accepts, cleaned of POSIX suffixes and underscores
 * (`en_US.UTF-8@posix` → `en-US`); undefined lets Intl use its default. A browser can report a
 * tag Intl rejects (headless Chromium under a POSIX locale says `en-US@posix`): Intl would throw.
 */
export function validLocale(tags: readonly (string | undefined)[]): string | undefined {
  for (const tag of tags) {
    const clean = tag?.replace(/[.@].*$/, "").replace(/_/g, "-");
    if (!clean) continue;
    try {
      if (Intl.NumberFormat.supportedLocalesOf(clean).length) return clean;
    } catch {
      /* not a language tag: try the next */
    }
  }
  return undefined;
}

/** The browser's locale, one Intl accepts (undefined: Intl's default). */
export function browserLocale(): string | undefined {
  if (typeof navigator === "undefined") return undefined;
  return validLocale([...(navigator.languages ?? []), navigator.language]);
}

/** A style as a short string, for Vega's custom format type (`format: "currency:USD"`). */
export function styleKey(style: NumberStyle): string {
  if (style.kind === "currency") return `currency:${style.currency}`;
  if (style.kind === "percent") return `percent:${style.scale}`;
  return style.kind;
}

/** The style a `styleKey` names (unknown keys read as plain numbers). */
export function parseStyleKey(key: string): NumberStyle {
  const [kind, arg] = key.split(":");
  if (kind === "currency" && arg) return { kind, currency: arg };
  if (kind === "percent") return { kind, scale: arg === "1" ? 1 : 100 };
  if (kind === "plain") return { kind };
  return { kind: "number" };
}

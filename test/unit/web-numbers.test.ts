/** Numbers as a report prints them: styles from names and notes, cells in full, axes compact, per locale. */
import { describe, expect, it } from "vitest";
import {
  formatAxis,
  formatNumber,
  numberStyle,
  parseStyleKey,
  styleKey,
  validLocale,
} from "../../functions/src/contract/chart/numbers";
import { toCsv } from "../../web/src/data/csv";

const col = (name: string, type = "DOUBLE", description?: string) => ({ name, type, description });

describe("number styles from the column's name and note", () => {
  it.each([
    ["revenue", undefined, [], "currency:USD"],
    ["total_price", undefined, [], "currency:USD"],
    ["amount_eur", undefined, [], "currency:EUR"],
    ["total", "Order value in GBP", [], "currency:GBP"],
    ["share", undefined, [0.2, 0.8], "percent:1"],
    ["conversion_rate", undefined, [0.03], "percent:1"],
    ["growth_pct", undefined, [0.5], "percent:100"],
    ["share", undefined, [20, 80], "percent:100"],
    ["orders", undefined, [], "number"],
    ["year", undefined, [], "plain"],
    ["customer_id", undefined, [], "plain"],
  ] as const)("%s (%s) → %s", (name, note, values, key) => {
    expect(styleKey(numberStyle(col(name, "DOUBLE", note), values))).toBe(key);
  });

  it("round-trips a style through its key", () => {
    for (const key of ["currency:EUR", "percent:1", "percent:100", "number", "plain"]) {
      expect(styleKey(parseStyleKey(key))).toBe(key);
    }
  });
});

describe("cells in full, axes compact", () => {
  const usd = { kind: "currency", currency: "USD" } as const;
  it("table cells: separators, money with cents, percent, years untouched", () => {
    expect(formatNumber("506464.61", usd, "en-US")).toBe("$506,464.61");
    expect(formatNumber(1200, usd, "en-US")).toBe("$1,200");
    expect(formatNumber("12345678", { kind: "number" }, "en-US")).toBe("12,345,678");
    expect(formatNumber(0.256, { kind: "percent", scale: 1 }, "en-US")).toBe("25.6%");
    expect(formatNumber(12.5, { kind: "percent", scale: 100 }, "en-US")).toBe("12.5%");
    expect(formatNumber(2025, { kind: "plain" }, "en-US")).toBe("2025");
    expect(formatNumber(null, usd, "en-US")).toBe("");
    // INT64 past 2^53 arrives as a string and keeps every digit.
    expect(formatNumber("9007199254740993", { kind: "number" }, "en-US")).toBe("9,007,199,254,740,993");
  });

  it("the browser's locale decides separators and symbols", () => {
    expect(formatNumber("506464.61", { kind: "number" }, "de-DE")).toBe("506.464,61");
    expect(formatNumber("506464.61", { kind: "currency", currency: "EUR" }, "de-DE")).toMatch(
      /^506\.464,61\s€$/,
    );
  });

  it("axis labels: compact", () => {
    expect(formatAxis(1_000_000, usd, "en-US")).toBe("$1M");
    expect(formatAxis(450_000, usd, "en-US")).toBe("$450K");
    expect(formatAxis(1_500, { kind: "number" }, "en-US")).toBe("1.5K");
    expect(formatAxis(0.25, { kind: "percent", scale: 1 }, "en-US")).toBe("25%");
    expect(formatAxis(40, { kind: "percent", scale: 100 }, "en-US")).toBe("40%");
    expect(formatAxis(2024, { kind: "plain" }, "en-US")).toBe("2024");
  });

  it("the CSV keeps the raw values", () => {
    expect(toCsv([{ name: "revenue" }], [{ revenue: "506464.61" }])).toBe("revenue\r\n506464.61\r\n");
  });
});

describe("the browser's locale", () => {
  it("takes the first tag Intl accepts, cleaned of POSIX suffixes", () => {
    expect(validLocale(["en-US@posix"])).toBe("en-US");
    expect(validLocale(["de_DE.UTF-8"])).toBe("de-DE");
    expect(validLocale(["", "not a tag!", "fr-FR"])).toBe("fr-FR");
    expect(validLocale([undefined])).toBeUndefined();
    // What it returns never makes Intl throw.
    expect(() => new Intl.NumberFormat(validLocale(["en-US@posix"])).format(1)).not.toThrow();
  });
});

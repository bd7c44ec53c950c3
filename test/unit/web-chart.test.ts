/**
 * Chart choice from what a result means: a table of result shapes (months as text, dates, integer
 * years, quarters, weeks, categories with and without ORDER BY, two categories, percentages, one
 * row, 1,000 rows, nulls…) → the chart type, the x axis, its order and the number format. Every
 * charted case's spec must also compile with Vega-Lite.
 */
import { describe, expect, it } from "vitest";
import { compile as compileSpec, type TopLevelSpec } from "vega-lite";
import { expressionFunction, parse, View } from "vega";
import {
  chooseChart,
  hasTopLevelOrderBy,
  OTHER,
  TOP_N,
  type ChartChoice,
} from "../../functions/src/contract/chart/chart";
import { AXIS_FORMAT, FULL_FORMAT, chartSpec, fieldRef } from "../../functions/src/contract/chart/chart-spec";
import type { ColumnInfo, Row } from "../../functions/src/contract/events";
import { styleKey } from "../../functions/src/contract/chart/numbers";
import type { VegaLiteSpec } from "../../functions/src/contract/chart/chart-spec";

/** Vega-Lite's own compiler on the contract's loosely typed spec. */
const compile = (spec: VegaLiteSpec) => compileSpec(spec as unknown as TopLevelSpec);

const col = (name: string, type: string, description?: string): ColumnInfo => ({
  name,
  type,
  ...(description ? { description } : {}),
});

const MONTHS_2025 = ["01", "02", "03", "04", "05", "06", "07", "08", "09", "10", "11", "12"].map(
  (m) => `2025-${m}`,
);
/** Revenue per month, listed largest first (as a result sorted by value would arrive). */
const revenueByMonthText: Row[] = MONTHS_2025.map((month, i) => ({
  month,
  revenue: (400_000 + ((i * 7919) % 12) * 9_000 + 0.61).toFixed(2),
})).sort((a, b) => Number(b.revenue) - Number(a.revenue));

const channels = ["web", "mobile_app", "marketplace"];
const countries = Array.from({ length: 60 }, (_, i) => `C${String(i).padStart(2, "0")}`);

interface Case {
  name: string;
  columns: ColumnInfo[];
  rows: Row[];
  sql?: string;
  /** First chart type offered, or null for no chart. */
  type: "line" | "bar" | "scatter" | null;
  xAxis?: ChartChoice["xAxis"];
  x?: string;
  color?: string;
  order?: ChartChoice["order"];
  /** The first x values in drawing order. */
  xStart?: string[];
  /** The y axis's number style. */
  style?: string;
  reason?: RegExp;
  rowsDrawn?: number;
}

const CASES: Case[] = [
  {
    name: "months as text (strftime → VARCHAR), rows sorted by revenue",
    columns: [col("month", "VARCHAR"), col("revenue", "DOUBLE")],
    rows: revenueByMonthText,
    type: "line",
    xAxis: "time",
    order: "time",
    xStart: ["2025-01", "2025-02", "2025-03", "2025-04"],
    style: "currency:USD",
  },
  {
    name: "months as 'Jan 2025' text, reversed",
    columns: [col("month", "STRING"), col("orders", "INT64")],
    rows: [
      { month: "Mar 2025", orders: "30" },
      { month: "Feb 2025", orders: "20" },
      { month: "Jan 2025", orders: "10" },
      { month: "Dec 2024", orders: "5" },
    ],
    type: "line",
    xAxis: "time",
    xStart: ["Dec 2024", "Jan 2025", "Feb 2025", "Mar 2025"],
    style: "number",
  },
  {
    name: "DATE column (date_trunc) in any row order",
    columns: [col("month", "DATE"), col("revenue", "NUMERIC")],
    rows: [
      { month: "2024-03-01", revenue: "1500.25" },
      { month: "2024-01-01", revenue: "1200.50" },
      { month: "2024-02-01", revenue: "980.00" },
    ],
    type: "line",
    xAxis: "time",
    xStart: ["2024-01-01", "2024-02-01", "2024-03-01"],
    style: "currency:USD",
  },
  {
    name: "ISO dates as text",
    columns: [col("day", "VARCHAR"), col("sessions", "BIGINT")],
    rows: [
      { day: "2025-01-03", sessions: 7 },
      { day: "2025-01-01", sessions: 5 },
      { day: "2025-01-02", sessions: 6 },
    ],
    type: "line",
    xAxis: "time",
    xStart: ["2025-01-01", "2025-01-02", "2025-01-03"],
  },
  {
    name: "TIMESTAMP column",
    columns: [col("hour", "TIMESTAMP"), col("events", "INT64")],
    rows: [
      { hour: "2025-01-01T10:00:00Z", events: 4 },
      { hour: "2025-01-01T09:00:00Z", events: 3 },
    ],
    type: "line",
    xAxis: "time",
    xStart: ["2025-01-01T09:00:00Z", "2025-01-01T10:00:00Z"],
  },
  {
    name: "years as integers, most recent first",
    columns: [col("year", "INT64"), col("revenue", "DOUBLE")],
    rows: [
      { year: 2025, revenue: 12 },
      { year: 2023, revenue: 10 },
      { year: 2024, revenue: 11 },
    ],
    type: "line",
    xAxis: "time",
    x: "year",
    xStart: ["2023", "2024", "2025"],
    style: "currency:USD",
  },
  {
    name: "order_year as BIGINT strings",
    columns: [col("order_year", "BIGINT"), col("orders", "BIGINT")],
    rows: [
      { order_year: "2025", orders: "9" },
      { order_year: "2024", orders: "8" },
    ],
    type: "line",
    xAxis: "time",
    x: "order_year",
    xStart: ["2024", "2025"],
  },
  {
    name: "quarters as '2025-Q1' text",
    columns: [col("quarter", "STRING"), col("revenue", "FLOAT64")],
    rows: [
      { quarter: "2025-Q3", revenue: 3 },
      { quarter: "2024-Q4", revenue: 4 },
      { quarter: "2025-Q1", revenue: 1 },
      { quarter: "2025-Q2", revenue: 2 },
    ],
    type: "line",
    xAxis: "time",
    xStart: ["2024-Q4", "2025-Q1", "2025-Q2", "2025-Q3"],
  },
  {
    name: "quarters as 'Q1 2025' text",
    columns: [col("q", "VARCHAR"), col("orders", "INTEGER")],
    rows: [
      { q: "Q2 2025", orders: 2 },
      { q: "Q1 2025", orders: 1 },
    ],
    type: "line",
    xAxis: "time",
    xStart: ["Q1 2025", "Q2 2025"],
  },
  {
    name: "ISO weeks as text",
    columns: [col("week", "VARCHAR"), col("orders", "INTEGER")],
    rows: [
      { week: "2025-W10", orders: 3 },
      { week: "2025-W02", orders: 1 },
      { week: "2025-W09", orders: 2 },
    ],
    type: "line",
    xAxis: "time",
    xStart: ["2025-W02", "2025-W09", "2025-W10"],
  },
  {
    name: "categories with ORDER BY: the SQL's order is kept",
    columns: [col("category", "VARCHAR"), col("revenue", "DOUBLE")],
    rows: [
      { category: "Books", revenue: 10 },
      { category: "Toys", revenue: 30 },
      { category: "Garden", revenue: 20 },
    ],
    sql: "SELECT category, SUM(x) AS revenue FROM t GROUP BY category ORDER BY category",
    type: "bar",
    xAxis: "category",
    order: "sql",
    xStart: ["Books", "Toys", "Garden"],
  },
  {
    name: "categories without ORDER BY: sorted by value, largest first",
    columns: [col("category", "VARCHAR"), col("revenue", "DOUBLE")],
    rows: [
      { category: "Books", revenue: 10 },
      { category: "Toys", revenue: 30 },
      { category: "Garden", revenue: 20 },
    ],
    sql: "SELECT category, SUM(x) AS revenue FROM t GROUP BY category",
    type: "bar",
    xAxis: "category",
    order: "value",
    xStart: ["Toys", "Garden", "Books"],
  },
  {
    name: "an ORDER BY only inside a window or subquery is not the result's order",
    columns: [col("category", "VARCHAR"), col("n", "INT64")],
    rows: [
      { category: "a", n: 1 },
      { category: "b", n: 2 },
    ],
    sql: "SELECT category, n FROM (SELECT category, ROW_NUMBER() OVER (ORDER BY x) AS n FROM t) -- ORDER BY n",
    type: "bar",
    order: "value",
    xStart: ["b", "a"],
  },
  {
    name: "revenue by month and channel: month on the axis, channel as colour",
    columns: [col("month", "VARCHAR"), col("channel", "VARCHAR"), col("revenue", "DOUBLE")],
    rows: MONTHS_2025.slice(0, 3)
      .reverse()
      .flatMap((month, i) => channels.map((channel, j) => ({ month, channel, revenue: 100 * i + j }))),
    type: "line",
    xAxis: "time",
    x: "month",
    color: "channel",
    xStart: ["2025-01", "2025-02", "2025-03"],
  },
  {
    name: "two categories: the one with many values on the axis, the few as colour",
    columns: [col("channel", "VARCHAR"), col("country", "VARCHAR"), col("orders", "INT64")],
    rows: countries
      .slice(0, 15)
      .flatMap((country, i) => channels.map((channel, j) => ({ channel, country, orders: i * 3 + j }))),
    type: "bar",
    xAxis: "category",
    x: "country",
    color: "channel",
  },
  {
    name: "a share in fractions → percent axis",
    columns: [col("channel", "VARCHAR"), col("share", "DOUBLE")],
    rows: [
      { channel: "web", share: 0.5 },
      { channel: "mobile_app", share: 0.3 },
      { channel: "marketplace", share: 0.2 },
    ],
    type: "bar",
    style: "percent:1",
  },
  {
    name: "a percentage in percent units (growth_pct) → percent axis",
    columns: [col("category", "VARCHAR"), col("growth_pct", "DOUBLE")],
    rows: [
      { category: "Books", growth_pct: 12.5 },
      { category: "Toys", growth_pct: -3.1 },
    ],
    type: "bar",
    style: "percent:100",
  },
  {
    name: "a conversion rate by month",
    columns: [col("month", "VARCHAR"), col("conversion_rate", "DOUBLE")],
    rows: [
      { month: "2025-02", conversion_rate: 0.031 },
      { month: "2025-01", conversion_rate: 0.028 },
    ],
    type: "line",
    xStart: ["2025-01", "2025-02"],
    style: "percent:1",
  },
  {
    name: "money named by its note",
    columns: [col("total", "DOUBLE", "Order value in EUR"), col("segment", "VARCHAR")],
    rows: [
      { total: 5, segment: "consumer" },
      { total: 7, segment: "business" },
    ],
    type: "bar",
    x: "segment",
    style: "currency:EUR",
  },
  {
    name: "price_usd column",
    columns: [col("product", "VARCHAR"), col("price_usd", "NUMERIC")],
    rows: [
      { product: "a", price_usd: "1.50" },
      { product: "b", price_usd: "2.00" },
    ],
    type: "bar",
    style: "currency:USD",
  },
  {
    name: "one row: no chart",
    columns: [col("month", "VARCHAR"), col("revenue", "DOUBLE")],
    rows: [{ month: "2025-01", revenue: 1 }],
    type: null,
    reason: /One row/,
  },
  {
    name: "text only: no chart",
    columns: [col("a", "STRING"), col("b", "STRING")],
    rows: [
      { a: "x", b: "y" },
      { a: "z", b: "w" },
    ],
    type: null,
    reason: /No number/,
  },
  {
    name: "two numbers and nothing to group by → scatter",
    columns: [col("price", "FLOAT64"), col("qty", "INT64")],
    rows: [
      { price: 1.5, qty: 2 },
      { price: 3, qty: 1 },
    ],
    type: "scatter",
    xAxis: "quantitative",
  },
  {
    name: "1,000 daily rows → a line over time",
    columns: [col("day", "DATE"), col("orders", "INT64")],
    rows: Array.from({ length: 1000 }, (_, i) => ({
      day: new Date(Date.UTC(2023, 0, 1) + (999 - i) * 86_400_000).toISOString().slice(0, 10),
      orders: i,
    })),
    type: "line",
    xAxis: "time",
    xStart: ["2023-01-01", "2023-01-02"],
    rowsDrawn: 1000,
  },
  {
    name: "1,000 categories → the top 20 plus Other",
    columns: [col("customer", "VARCHAR"), col("revenue", "DOUBLE")],
    rows: Array.from({ length: 1000 }, (_, i) => ({ customer: `cust-${i}`, revenue: i })),
    type: "bar",
    xAxis: "category",
    xStart: ["cust-999", "cust-998"],
    reason: /top 20 of 1,000 customer values by revenue; the other 980 are summed as “Other”/,
    rowsDrawn: TOP_N + 1,
  },
  {
    name: "60 countries by share: the top 20, no Other (shares do not add up)",
    columns: [col("country", "VARCHAR"), col("share", "DOUBLE")],
    rows: countries.map((country, i) => ({ country, share: i / 1000 })),
    type: "bar",
    reason: /top 20 of 60 country values by share\.$/,
    rowsDrawn: TOP_N,
  },
  {
    name: "more rows than a chart can draw: no chart, with the reason",
    columns: [col("a", "FLOAT64"), col("b", "FLOAT64")],
    rows: Array.from({ length: 6000 }, (_, i) => ({ a: i, b: i })),
    type: null,
    reason: /Too many rows to chart \(6,000; at most 5,000\)/,
  },
  {
    name: "nulls: a month missing is left out, with the reason",
    columns: [col("month", "VARCHAR"), col("revenue", "DOUBLE")],
    rows: [
      { month: "2025-02", revenue: 2 },
      { month: null, revenue: 9 },
      { month: "2025-01", revenue: null },
    ],
    type: "line",
    xAxis: "time",
    xStart: ["2025-01", "2025-02"],
    reason: /1 row without a month left out/,
    rowsDrawn: 2,
  },
  {
    name: "nulls: an empty category is drawn as (empty)",
    columns: [col("segment", "VARCHAR"), col("customers", "INT64")],
    rows: [
      { segment: "consumer", customers: 5 },
      { segment: null, customers: 2 },
    ],
    type: "bar",
    xStart: ["consumer", "(empty)"],
  },
  {
    name: "text that is not time (codes) stays a category",
    columns: [col("sku", "VARCHAR"), col("units", "INT64")],
    rows: [
      { sku: "A-100", units: 1 },
      { sku: "2025-13-77x", units: 2 },
    ],
    type: "bar",
    xAxis: "category",
  },
  {
    name: "mixed shapes (a month and a word) are not time",
    columns: [col("period", "VARCHAR"), col("n", "INT64")],
    rows: [
      { period: "2025-01", n: 1 },
      { period: "Total", n: 2 },
    ],
    type: "bar",
    xAxis: "category",
  },
];

describe("chart choice from a result's meaning (shape table)", () => {
  it(`has at least 25 shapes (${CASES.length})`, () => {
    expect(CASES.length).toBeGreaterThanOrEqual(25);
  });

  it.each(CASES)("$name", (c) => {
    const choice = chooseChart(c.columns, c.rows, { sql: c.sql });
    expect(choice.options[0] ?? null).toBe(c.type);
    if (c.xAxis) expect(choice.xAxis).toBe(c.xAxis);
    if (c.x) expect(choice.x?.name).toBe(c.x);
    if (c.color) expect(choice.color?.name).toBe(c.color);
    if (c.order) expect(choice.order).toBe(c.order);
    if (c.xStart) expect(choice.xOrder.slice(0, c.xStart.length)).toEqual(c.xStart);
    if (c.style) expect(styleKey(choice.yStyle)).toBe(c.style);
    if (c.reason) expect(choice.reason).toMatch(c.reason);
    else if (c.type) expect(choice.reason).toBeUndefined();
    if (c.rowsDrawn !== undefined) expect(choice.rows).toHaveLength(c.rowsDrawn);
    for (const type of choice.options) expect(() => compile(chartSpec(choice, type))).not.toThrow();
  });
});

describe("chart details", () => {
  it("months as text: the drawn rows are in calendar order and numbers are numbers", () => {
    const choice = chooseChart([col("month", "VARCHAR"), col("revenue", "DOUBLE")], revenueByMonthText);
    expect(choice.rows.map((r) => r.month)).toEqual(MONTHS_2025);
    expect(choice.rows.every((r) => typeof r.revenue === "number")).toBe(true);
    expect(revenueByMonthText[0].revenue).toMatch(/^\d+\.\d\d$/); // the input is untouched
    const spec = chartSpec(choice, "line") as unknown as {
      encoding: Record<string, Record<string, unknown>>;
    };
    expect(spec.encoding.x).toMatchObject({ type: "ordinal", sort: MONTHS_2025 });
    expect(spec.encoding.y.axis).toEqual({ format: "currency:USD", formatType: AXIS_FORMAT });
    // The compiled Vega spec labels the y axis through the registered formatter.
    const axes = (compile(chartSpec(choice, "line")).spec.axes ?? []) as {
      encode?: { labels?: { update?: { text?: { signal?: string } } } };
    }[];
    expect(axes.map((a) => a.encode?.labels?.update?.text?.signal)).toContain(
      `${AXIS_FORMAT}(datum.value, "currency:USD")`,
    );
  });

  it("Other sums the categories left out", () => {
    const rows = Array.from({ length: 30 }, (_, i) => ({ c: `k${i}`, orders: 1 }));
    const choice = chooseChart([col("c", "VARCHAR"), col("orders", "INT64")], rows);
    expect(choice.rows.at(-1)).toEqual({ c: OTHER, orders: 10 });
  });

  it("grouped bars for a time series with colour, side by side", () => {
    const rows = [
      { month: "2025-01", channel: "web", revenue: 1 },
      { month: "2025-01", channel: "app", revenue: 2 },
    ];
    const choice = chooseChart(
      [col("month", "VARCHAR"), col("channel", "VARCHAR"), col("revenue", "DOUBLE")],
      rows,
    );
    const spec = chartSpec(choice, "bar") as unknown as { encoding: Record<string, unknown> };
    expect(spec.encoding.xOffset).toEqual({ field: "channel" });
  });

  it("revenue against target by month: both measures drawn as two series with a legend", async () => {
    const rows = MONTHS_2025.map((month, i) => ({
      month,
      revenue: (610_000 + i * 2_000 + 0.5).toFixed(2), // an order of magnitude above the targets
      target: String(40_000 + i * 2_500),
    }));
    const columns = [col("month", "VARCHAR"), col("revenue", "DOUBLE"), col("target", "BIGINT")];
    const choice = chooseChart(columns, rows, { sql: "SELECT … ORDER BY t.month" });
    expect(choice.options).toEqual(["line", "bar"]);
    expect(choice.measures?.map((m) => m.name)).toEqual(["revenue", "target"]);
    expect(choice.color).toBeUndefined();
    expect(choice.rows[0]).toEqual({ month: "2025-01", revenue: 610_000.5, target: 40_000 });
    for (const name of [AXIS_FORMAT, FULL_FORMAT]) expressionFunction(name, (v: unknown) => String(v));
    for (const type of choice.options) {
      // Vega runs the compiled chart (the page's number formats registered as plain text): its colour scale (the legend) holds the measures' names, in order.
      const view = new View(parse(compile(chartSpec(choice, type)).spec), { renderer: "none" });
      await view.runAsync();
      expect(view.scale("color").domain()).toEqual(["revenue", "target"]);
      // One drawn value per month and measure.
      expect(view.data("data_0")).toHaveLength(24);
      view.finalize();
    }
    const spec = chartSpec(choice, "bar") as unknown as {
      transform: unknown[];
      encoding: Record<string, Record<string, unknown>>;
    };
    expect(spec.transform).toEqual([{ fold: ["revenue", "target"], as: [" measure", " value"] }]);
    expect(spec.encoding.xOffset.field).toBe(" measure");
    expect(spec.encoding.y.title).toBe("revenue, target");
  });

  it("numbers of another kind are not drawn together: the first number alone", () => {
    const months = MONTHS_2025.slice(0, 3);
    const byMonth = (other: (i: number) => number, name: string, type = "INT64") =>
      chooseChart(
        [col("month", "VARCHAR"), col("revenue", "DOUBLE"), col(name, type)],
        months.map((month, i) => ({ month, revenue: 400_000 + i, [name]: other(i) })),
      );
    expect(byMonth((i) => 1_200 + i, "orders").measures).toBeUndefined();
    expect(byMonth((i) => 0.1 * i, "growth_rate", "FLOAT64").measures).toBeUndefined();
    expect(byMonth((i) => 2020 + i, "year").measures).toBeUndefined();
    // Money with money; a plain number named as what revenue is measured against reads like it.
    expect(byMonth((i) => 390_000 + i, "cost").measures?.map((m) => m.name)).toEqual(["revenue", "cost"]);
    expect(byMonth((i) => 25_000 + i, "monthlyBudget").measures?.map((m) => m.name)).toEqual([
      "revenue",
      "monthlyBudget",
    ]);
    // A series column colours the lines: the measures are not folded on top of it.
    const coloured = chooseChart(
      [col("month", "VARCHAR"), col("channel", "VARCHAR"), col("revenue", "DOUBLE"), col("cost", "DOUBLE")],
      months.flatMap((month) => channels.map((channel) => ({ month, channel, revenue: 10, cost: 9 }))),
    );
    expect(coloured.color?.name).toBe("channel");
    expect(coloured.measures).toBeUndefined();
  });

  it("categories with two measures: grouped bars, and no Other (a sum of two measures means nothing)", () => {
    const rows = Array.from({ length: 30 }, (_, i) => ({ c: `k${i}`, revenue: 100 + i, target: 110 }));
    const choice = chooseChart([col("c", "VARCHAR"), col("revenue", "DOUBLE"), col("target", "INT64")], rows);
    expect(choice.options[0]).toBe("bar");
    expect(choice.measures?.map((m) => m.name)).toEqual(["revenue", "target"]);
    expect(choice.rows).toHaveLength(TOP_N);
    expect(choice.rows.some((r) => r.c === OTHER)).toBe(false);
    expect(() => compile(chartSpec(choice, "bar"))).not.toThrow();
  });

  it("finds the result's own ORDER BY, not one in a string, comment, window or subquery", () => {
    expect(hasTopLevelOrderBy("select a from t order by a")).toBe(true);
    expect(hasTopLevelOrderBy("SELECT a FROM t\nORDER\n BY a DESC LIMIT 5")).toBe(true);
    expect(hasTopLevelOrderBy("SELECT 'order by' AS a FROM t")).toBe(false);
    expect(hasTopLevelOrderBy("SELECT a FROM t /* ORDER BY a */")).toBe(false);
    expect(hasTopLevelOrderBy("SELECT rank() OVER (ORDER BY a) FROM t")).toBe(false);
    expect(hasTopLevelOrderBy("SELECT reorder_by FROM t")).toBe(false);
    expect(hasTopLevelOrderBy(undefined)).toBe(false);
  });

  it("escapes field names with dots and brackets", () => {
    expect(fieldRef("a.b[0]")).toBe("a\\.b\\[0\\]");
    const cols = [col("t.name", "STRING"), col("sum[x]", "INT64")];
    const rows = [
      { "t.name": "a", "sum[x]": 1 },
      { "t.name": "b", "sum[x]": 2 },
    ];
    const spec = chartSpec(chooseChart(cols, rows), "bar");
    expect(() => compile(spec)).not.toThrow();
    expect(JSON.stringify(spec)).toContain("t\\\\.name");
  });
});

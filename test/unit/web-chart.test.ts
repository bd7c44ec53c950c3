import { describe, expect, it } from "vitest";
import { compile } from "vega-lite";
import { availableCharts, chartSpec, chooseChart, fieldRef, planChart } from "../../web/src/data/chart";
import type { ColumnInfo, Row } from "../../web/src/data/columns";

const col = (name: string, type: string): ColumnInfo => ({ name, type });

describe("chart choice from column types", () => {
  const byMonth = [col("month", "DATE"), col("revenue", "NUMERIC")];
  const monthRows: Row[] = [
    { month: "2024-01-01", revenue: "1200.50" },
    { month: "2024-02-01", revenue: "980.00" },
    { month: "2024-03-01", revenue: "1500.25" },
  ];

  it("a date and a number → line, also drawable as bars", () => {
    expect(chooseChart(byMonth, monthRows)).toBe("line");
    expect(availableCharts(byMonth, monthRows)).toEqual(["line", "bar"]);
  });

  it("a category and a number → bar", () => {
    const cols = [col("country", "STRING"), col("orders", "INT64")];
    const rows = [
      { country: "FR", orders: 3 },
      { country: "DE", orders: 5 },
    ];
    expect(chooseChart(cols, rows)).toBe("bar");
    expect(planChart("bar", cols, rows)).toMatchObject({ x: { name: "country" }, y: { name: "orders" } });
  });

  it("two numbers and nothing to group by → scatter", () => {
    const cols = [col("price", "FLOAT64"), col("qty", "INT64")];
    const rows = [
      { price: 1.5, qty: 2 },
      { price: 3, qty: 1 },
    ];
    expect(chooseChart(cols, rows)).toBe("scatter");
    expect(availableCharts(cols, rows)).toEqual(["scatter"]);
  });

  it("no chart for a single value, text only, or nested columns", () => {
    expect(chooseChart([col("n", "INT64")], [{ n: 42 }])).toBeNull();
    expect(
      chooseChart(
        [col("a", "STRING"), col("b", "STRING")],
        [
          { a: "x", b: "y" },
          { a: "z", b: "w" },
        ],
      ),
    ).toBeNull();
    expect(
      chooseChart(
        [col("s", "STRUCT<a INT64>"), col("t", "JSON")],
        [
          { s: {}, t: 1 },
          { s: {}, t: 2 },
        ],
      ),
    ).toBeNull();
    expect(chooseChart(byMonth, monthRows.slice(0, 1))).toBeNull();
  });

  it("refuses a chart type the columns cannot draw", () => {
    expect(planChart("scatter", byMonth, monthRows)).toBeNull();
  });

  it("colours series by a second category with few values, not by one with many", () => {
    const cols = [col("month", "DATE"), col("region", "STRING"), col("sales", "INT64")];
    const few = [
      { month: "2024-01-01", region: "EU", sales: 1 },
      { month: "2024-01-01", region: "US", sales: 2 },
    ];
    expect(planChart("line", cols, few)?.color?.name).toBe("region");
    const many = Array.from({ length: 40 }, (_, i) => ({ month: "2024-01-01", region: `r${i}`, sales: i }));
    expect(planChart("line", cols, many)?.color).toBeUndefined();
  });
});

describe("chartSpec", () => {
  it("compiles with Vega-Lite and turns numeric strings into numbers", () => {
    const cols = [col("month", "DATE"), col("revenue", "NUMERIC")];
    const rows: Row[] = [
      { month: "2024-01-01", revenue: "1200.50" },
      { month: "2024-02-01", revenue: "980" },
    ];
    for (const type of availableCharts(cols, rows)) {
      const spec = chartSpec(planChart(type, cols, rows)!, rows);
      expect(() => compile(spec)).not.toThrow();
      const values = (spec.data as { values: Row[] }).values;
      expect(values.map((v) => v.revenue)).toEqual([1200.5, 980]);
      expect(rows[0].revenue).toBe("1200.50");
    }
  });

  it("escapes field names with dots and brackets", () => {
    expect(fieldRef("a.b[0]")).toBe("a\\.b\\[0\\]");
    const cols = [col("t.name", "STRING"), col("sum[x]", "INT64")];
    const rows = [
      { "t.name": "a", "sum[x]": 1 },
      { "t.name": "b", "sum[x]": 2 },
    ];
    const spec = chartSpec(planChart("bar", cols, rows)!, rows);
    const compiled = compile(spec).spec as { data?: unknown };
    expect(compiled).toBeTruthy();
    expect(JSON.stringify(spec)).toContain("t\\\\.name");
  });
});

import { describe, expect, it } from "vitest";
import { QuarryError } from "../../../functions/src/errors";
import { evaluate, validateCondition, type Row } from "../../../functions/src/schedules/alerts";

function problem(cond: unknown, columns?: string[]): string {
  try {
    validateCondition(cond, columns);
  } catch (err) {
    expect(err).toBeInstanceOf(QuarryError);
    expect((err as QuarryError).code).toBe("bad_request:body");
    return (err as QuarryError).message;
  }
  throw new Error(`accepted ${JSON.stringify(cond)}`);
}

const regions: Row[] = [
  { region: "north", revenue: "52000.50" }, // BigQuery NUMERIC arrives as a string
  { region: "south", revenue: 30000 },
  { region: "east", revenue: null },
  { region: "west", revenue: 12000n }, // DuckDB BIGINT
];

describe("threshold", () => {
  it("fires on one row's value and says it in words", () => {
    const out = evaluate({ kind: "threshold", column: "revenue", op: "<", value: 100_000 }, [
      { revenue: 94_300 },
    ]);
    expect(out).toEqual({ fired: true, summary: "revenue is 94,300, below 100,000" });
    const not = evaluate({ kind: "threshold", column: "revenue", op: "<", value: 100_000 }, [
      { revenue: "120000" },
    ]);
    expect(not).toEqual({ fired: false, summary: "revenue is 120,000, not below 100,000" });
  });

  it("reads numeric strings and bigints, and ignores empty values, saying so", () => {
    const any = evaluate({ kind: "threshold", column: "revenue", op: ">", value: 50_000 }, regions);
    expect(any.fired).toBe(true);
    expect(any.summary).toBe("revenue is above 50,000 in 1 of 3 rows (highest 52,000.5; 1 empty ignored)");
    const none = evaluate({ kind: "threshold", column: "revenue", op: ">", value: 60_000 }, regions);
    expect(none.fired).toBe(false);
    expect(none.summary).toMatch(/^revenue is above 60,000 in none of 3 rows/);
  });

  it('with row "all" fires only when every value matches; with "first" looks at the first row', () => {
    const all = { kind: "threshold", column: "revenue", op: ">=", value: 12_000, row: "all" } as const;
    expect(evaluate(all, regions)).toMatchObject({
      fired: true,
      summary: expect.stringMatching(/in all 3 rows/),
    });
    expect(evaluate({ ...all, value: 12_001 }, regions).fired).toBe(false);
    const first = { kind: "threshold", column: "revenue", op: "==", value: 52_000.5, row: "first" } as const;
    expect(evaluate(first, regions)).toEqual({
      fired: true,
      summary: "revenue is 52,000.5 in the first row, equal to 52,000.5",
    });
    const emptyFirst = evaluate(first, [{ revenue: null }, { revenue: 52_000.5 }]);
    expect(emptyFirst).toEqual({
      fired: false,
      summary: "revenue is empty in the first row: nothing to compare",
    });
  });

  it("does not fire when every value is empty, and says so", () => {
    const out = evaluate({ kind: "threshold", column: "revenue", op: "<", value: 1 }, [
      { revenue: null },
      { revenue: null },
    ]);
    expect(out).toEqual({ fired: false, summary: "revenue is empty in all 2 rows: nothing to compare" });
    expect(out.problem).toBeUndefined();
  });

  it("reports a problem when the column is missing or holds no numbers", () => {
    const missing = evaluate({ kind: "threshold", column: "revenu", op: "<", value: 1 }, regions);
    expect(missing.fired).toBe(false);
    expect(missing.problem).toBe('the result has no column "revenu" (its columns are region, revenue)');
    const text = evaluate({ kind: "threshold", column: "region", op: "<", value: 1 }, regions);
    expect(text.fired).toBe(false);
    expect(text.problem).toBe("region holds no numbers (4 not numbers of 4 rows)");
  });

  it("finds the column without regard to case, as BigQuery does", () => {
    expect(evaluate({ kind: "threshold", column: "REVENUE", op: ">", value: 0 }, regions).fired).toBe(true);
  });
});

describe("change", () => {
  const down20 = { kind: "change", column: "revenue", direction: "down", percent: 20 } as const;

  it("fires on a fall of 20 % against the previous run, comparing the column's sum", () => {
    const rows = [{ revenue: "60000" }, { revenue: 34_300 }];
    const out = evaluate({ ...down20, percent: 15 }, rows, 120_000);
    expect(out).toEqual({
      fired: true,
      summary: "revenue fell 21.4 % (from 120,000 to 94,300)",
      figure: 94_300,
    });
    // Exactly the percent fires too.
    expect(evaluate(down20, [{ revenue: 96_000 }], 120_000)).toMatchObject({ fired: true, figure: 96_000 });
  });

  it("does not fire on a fall of 10 %, nor on a rise when it watches for a fall", () => {
    expect(evaluate(down20, [{ revenue: 108_000 }], 120_000)).toEqual({
      fired: false,
      summary: "revenue fell 10.0 % (from 120,000 to 108,000); less than 20 %",
      figure: 108_000,
    });
    expect(evaluate(down20, [{ revenue: 200_000 }], 120_000)).toEqual({
      fired: false,
      summary: "revenue rose 66.7 % (from 120,000 to 200,000); the alert watches for a fall",
      figure: 200_000,
    });
    expect(evaluate({ ...down20, direction: "either" }, [{ revenue: 200_000 }], 120_000).fired).toBe(true);
    expect(evaluate({ ...down20, direction: "up" }, [{ revenue: 200_000 }], 120_000).fired).toBe(true);
  });

  it("does not fire on the first run, and gives the figure to store", () => {
    expect(evaluate(down20, [{ revenue: 120_000 }])).toEqual({
      fired: false,
      summary: "first run, nothing to compare (revenue is 120,000)",
      figure: 120_000,
    });
    expect(evaluate(down20, [{ revenue: 120_000 }], null).fired).toBe(false);
  });

  it("gives no figure when there are no values, so the previous one is kept", () => {
    const out = evaluate(down20, [], 120_000);
    expect(out).toEqual({ fired: false, summary: "the query returned no rows: no revenue to compare" });
    expect(evaluate(down20, [{ revenue: null }], 120_000).figure).toBeUndefined();
  });

  it("treats a change from zero as larger than any percent", () => {
    expect(evaluate({ ...down20, direction: "up" }, [{ revenue: 5 }], 0)).toEqual({
      fired: true,
      summary: "revenue rose (from 0 to 5)",
      figure: 5,
    });
    expect(evaluate(down20, [{ revenue: 0 }], 0)).toMatchObject({
      fired: false,
      summary: "revenue is unchanged at 0",
    });
  });
});

describe("rows", () => {
  it("fires on any row or on none", () => {
    expect(evaluate({ kind: "rows", when: "any" }, [{ id: 1 }, { id: 2 }])).toEqual({
      fired: true,
      summary: "the query returned 2 rows",
    });
    expect(evaluate({ kind: "rows", when: "any" }, [])).toEqual({
      fired: false,
      summary: "the query returned no rows",
    });
    expect(evaluate({ kind: "rows", when: "none" }, [])).toEqual({
      fired: true,
      summary: "the query returned no rows",
    });
    expect(evaluate({ kind: "rows", when: "none" }, [{ id: 1 }])).toEqual({
      fired: false,
      summary: "the query returned 1 row",
    });
  });
});

describe("validateCondition", () => {
  it("accepts each kind", () => {
    expect(validateCondition({ kind: "rows", when: "none" })).toEqual({ kind: "rows", when: "none" });
    expect(
      validateCondition({ kind: "change", column: "revenue", direction: "down", percent: 20 }, ["revenue"])
        .kind,
    ).toBe("change");
    expect(
      validateCondition({ kind: "threshold", column: "Revenue", op: ">", value: 0 }, ["revenue"]).kind,
    ).toBe("threshold");
  });

  it("names the field to fix", () => {
    expect(problem({ kind: "threshold", column: "revenue", op: ">", value: "100" })).toMatch(
      /value: value must be a number/,
    );
    expect(problem({ kind: "threshold", column: "revenue", op: "=>", value: 1 })).toMatch(
      /op: op must be one of/,
    );
    expect(problem({ kind: "change", column: "revenue", direction: "down", percent: 0 })).toMatch(
      /percent: percent must be greater than 0/,
    );
    expect(problem({ kind: "change", column: "revenue", direction: "down", percent: -5 })).toMatch(
      /percent: /,
    );
    expect(problem({ kind: "change", column: "revenue", direction: "down", percent: "20%" })).toMatch(
      /percent: percent must be a number/,
    );
    expect(problem({ kind: "change", column: "revenue", direction: "sideways", percent: 5 })).toMatch(
      /direction: direction must be/,
    );
    expect(problem({ kind: "sometimes" })).toMatch(/kind: kind must be threshold, change or rows/);
    expect(problem({ kind: "threshold", column: "profit", op: ">", value: 1 }, ["region", "revenue"])).toBe(
      'Invalid alert: column: the result has no column "profit"; its columns are region, revenue.',
    );
  });
});

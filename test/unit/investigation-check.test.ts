/**
 * The investigation's pure parts: the plan's validation and the person's answers to it, the
 * citation syntax and formats, and the report checker's rules, one by one.
 */
import { describe, expect, it } from "vitest";
import type { StepOutcome } from "../../functions/src/contract/investigations";
import { checkPlan, decide } from "../../functions/src/agent/investigation/plan";
import { fill, formatCell } from "../../functions/src/agent/investigation/cells";
import { checkReport, type DraftReport } from "../../functions/src/agent/investigation/check";
import { stepSql } from "../../functions/src/agent/investigation/sql";
import { PLANTED_PLAN } from "../support/investigation-script";

const plan = PLANTED_PLAN;
const outcomes: StepOutcome[] = [
  {
    id: 1,
    status: "done",
    columns: ["base_value", "current_value", "change", "change_pct"].map((name) => ({ name })),
    rows: [{ base_value: "1000.00", current_value: "700.00", change: "-300.00", change_pct: -0.3 }],
  },
  {
    id: 2,
    status: "done",
    columns: ["region", "channel", "base_value", "current_value", "change", "share_of_change"].map(
      (name) => ({
        name,
      }),
    ),
    rows: [
      {
        region: "south",
        channel: "marketplace",
        base_value: 400,
        current_value: 50,
        change: -350,
        share_of_change: 1.1667,
      },
      {
        region: "north",
        channel: "web",
        base_value: 600,
        current_value: 650,
        change: 50,
        share_of_change: -0.1667,
      },
    ],
  },
  { id: 3, status: "skipped", reason: "not started: the investigation's time budget (60 s) ran out" },
  { id: 4, status: "failed", reason: "Binder Error" },
];

const draft = (text: string, steps = [2], summary = "What changed."): DraftReport => ({
  title: "Revenue in March",
  summary,
  sections: [{ heading: "Finding", text, steps }],
});

describe("the plan", () => {
  it("accepts the planted plan and refuses one over QUARRY_INVESTIGATION_MAX_STEPS", () => {
    expect(checkPlan(plan, 8).ok).toBe(true);
    const over = checkPlan(plan, 3);
    expect(over).toEqual({ ok: false, errors: ["steps: at most 3 steps (QUARRY_INVESTIGATION_MAX_STEPS)"] });
  });

  it("says what to fix in a bad plan", () => {
    const bad = {
      ...plan,
      metric: { ...plan.metric, expression: "revenue; DROP TABLE x" },
      steps: [
        { ...plan.steps[0], base: { from: "2025-03-01", to: "2025-02-01" } },
        { ...plan.steps[1], id: 1, dimensions: ["region", "channel", "sku"] },
        { id: 5, kind: "anomalies", title: "April" },
      ],
    };
    const out = checkPlan(bad, 8);
    expect(out.ok).toBe(false);
    expect(!out.ok && out.errors).toEqual(
      expect.arrayContaining([
        "metric.expression: metric.expression must be one SQL expression: no ';' and no comments",
        "steps.0.base: `from` must be before `to` (`to` is exclusive)",
        "steps.1.dimensions: at most 2 dimensions per step",
        "steps.2.kind: kind must be one of compare, breakdown, contribution, drivers, trend, forecast",
      ]),
    );
    expect(checkPlan({ ...plan, metric: { ...plan.metric, expression: "revenue" } }, 8)).toEqual({
      ok: false,
      errors: ["metric.expression: must be an aggregate such as SUM(revenue) or COUNT(*)"],
    });
  });

  it("applies the person's answer: run, drop, an edited plan, cancel; refuses what it cannot apply", () => {
    expect(decide(plan, "", 8)).toMatchObject({ action: "run", plan });
    const dropped = decide(plan, "drop 2 and 4", 8);
    expect(dropped.action === "run" && dropped.plan.steps.map((s) => s.id)).toEqual([1, 3]);
    expect(decide(plan, '{"drop": [1]}', 8)).toMatchObject({ action: "run", edited: ["dropped step 1"] });
    expect(decide(plan, "cancel", 8)).toEqual({ action: "cancel" });
    expect(decide(plan, "drop 1, 2, 3, 4", 8)).toEqual({
      action: "refused",
      errors: ["That drops every step: keep at least one."],
    });
    const edit = decide(plan, JSON.stringify({ plan: { ...plan, steps: [] } }), 8);
    expect(edit).toEqual({ action: "refused", errors: ["steps: plan at least one step"] });
    expect(decide(plan, "make it faster", 8)).toMatchObject({ action: "refused" });
  });

  it("writes each kind as one SELECT in each dialect", () => {
    const duck = plan.steps.map((s) => stepSql(plan, s, "duckdb"));
    expect(duck.every((sql) => /^(SELECT|WITH) /.test(sql) && !sql.includes(";"))).toBe(true);
    expect(duck[1]).toContain("FULL OUTER JOIN c ON b.region IS NOT DISTINCT FROM c.region");
    expect(stepSql(plan, plan.steps[3], "bigquery")).toContain("DATE_TRUNC(CAST(sale_date AS DATE), MONTH)");
    expect(stepSql(plan, plan.steps[0], "bigquery")).toContain("FROM `retail.sales`");
  });
});

describe("citations", () => {
  it("fills a cell with its column's format", () => {
    expect(fill("{{s1.r1.change}} ({{s1.r1.change_pct}}) in {{s2.r1.region}}", outcomes)).toBe(
      "-300 (-30.0%) in south",
    );
    expect(formatCell("value", "1234567.891")).toBe("1,234,567.89");
    expect(formatCell("share", 0.4256)).toBe("42.6%");
  });
});

describe("the report checker", () => {
  it("passes a report whose figures are all cited and whose cause rests on the contribution step", () => {
    const text =
      "The fall is driven by {{s2.r1.channel}} in {{s2.r1.region}}: {{s2.r1.change}} of {{s1.r1.change}}.";
    expect(checkReport(draft(text, [2]), plan, outcomes)).toEqual([]);
  });

  it("refuses a typed number, but not a year of the plan's periods nor a step number", () => {
    const errors = checkReport(
      draft("Revenue fell by 300 (30%) in March 2025, step 1 shows.", [1]),
      plan,
      outcomes,
    );
    expect(errors).toEqual([
      'section 1 ("Finding"): the number "300" is typed, not cited from a result; replace it with the cell it comes from, {{s<step>.r<row>.<column>}}',
      'section 1 ("Finding"): the number "30%" is typed, not cited from a result; replace it with the cell it comes from, {{s<step>.r<row>.<column>}}',
    ]);
  });

  it("refuses citations of a missing step, row or column, a step without a result, and malformed ones", () => {
    const text = "{{s9.r1.change}} {{s2.r5.change}} {{s2.r1.revenue}} {{s3.r1.value}} {{step 2 row 1}}";
    const errors = checkReport(draft(text, [2]), plan, outcomes);
    expect(errors).toEqual([
      'section 1 ("Finding"): "{{step 2 row 1}}" is not a citation; write {{s<step>.r<row>.<column>}}, e.g. {{s1.r1.change}}',
      'section 1 ("Finding"): {{s9.r1.change}} cites step 9, which is not in the plan',
      'section 1 ("Finding"): {{s2.r5.change}} cites row 5 of step 2, which has 2 rows',
      'section 1 ("Finding"): {{s2.r1.revenue}}: step 2 has no column "revenue" (its columns: region, channel, base_value, current_value, change, share_of_change)',
      'section 1 ("Finding"): {{s3.r1.value}} cites step 3, which has no result (skipped)',
    ]);
  });

  it("refuses a finding that rests on no step, and a cause without a driver step", () => {
    expect(checkReport(draft("Revenue fell.", []), plan, outcomes)).toEqual([
      'section 1 ("Finding") rests on no step: list the steps it uses and cite their cells',
    ]);
    expect(
      checkReport(draft("It fell {{s1.r1.change}} due to fewer shoppers.", [1]), plan, outcomes),
    ).toEqual([
      'section 1 ("Finding") claims a cause ("due to") without a contribution, drivers or breakdown step behind it: cite such a step\'s cells, or state the change without a cause',
    ]);
    const summary = draft("{{s2.r1.change}}", [2], "Revenue fell because of the south.");
    expect(checkReport(summary, plan, outcomes)).toEqual([
      'the summary claims a cause ("because") without a contribution, drivers or breakdown step behind it: cite such a step\'s cells, or state the change without a cause',
    ]);
  });

  it("refuses segments reported as parts of a total they do not add up to", () => {
    const off = outcomes.map((o) =>
      o.id === 2 ? { ...o, rows: [...o.rows!, { ...o.rows![1], region: "(all)", change: -300 }] } : o,
    );
    expect(checkReport(draft("{{s2.r1.change}} of {{s1.r1.change}}", [2]), plan, off)).toEqual([
      "The segments of step 2 add up to a change of -600, not the total -300 of step 1: do not report them as parts of that total",
    ]);
  });
});

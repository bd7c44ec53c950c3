/**
 * A plan step as one read-only SELECT, written by Quarry from the step's typed fields — so the
 * result's columns are known (the report cites them) and a contribution's segments are detail rows
 * only (no rollup row summed with its parts). The planner writes only the metric's aggregate and
 * filter, which the warehouse's gate checks like any query (dry run, SELECT only, scope, bytes).
 */
import type { InvestigationPlan, Period, PlanStep } from "../../contract/investigations";
import { driversSql, forecastSql } from "./sql-models";
import { series, table, within, type Dialect } from "./sql-parts";

export type { Dialect } from "./sql-parts";

function grouped(plan: InvestigationPlan, dims: string[], p: Period, dialect: Dialect): string {
  const d = dims.join(", ");
  return (
    `SELECT ${d}, ${plan.metric.expression} AS value FROM ${table(plan.metric.table, dialect)} ` +
    `WHERE ${within(plan, p)} GROUP BY ${d}`
  );
}

/** The step's SQL in the warehouse's dialect. */
export function stepSql(plan: InvestigationPlan, step: PlanStep, dialect: Dialect): string {
  const { expression } = plan.metric;
  const from = table(plan.metric.table, dialect);
  switch (step.kind) {
    case "compare":
      return (
        `SELECT b.value AS base_value, c.value AS current_value, c.value - b.value AS change, ` +
        `(c.value - b.value) / NULLIF(b.value, 0) AS change_pct ` +
        `FROM (SELECT ${expression} AS value FROM ${from} WHERE ${within(plan, step.base)}) b ` +
        `CROSS JOIN (SELECT ${expression} AS value FROM ${from} WHERE ${within(plan, step.current)}) c`
      );
    case "breakdown": {
      const d = step.dimensions.join(", ");
      return (
        `SELECT ${d}, ${expression} AS value, ${expression} / NULLIF(SUM(${expression}) OVER (), 0) AS share ` +
        `FROM ${from} WHERE ${within(plan, step.period)} GROUP BY ${d} ORDER BY value DESC`
      );
    }
    case "contribution":
      return contributionSql(plan, step, dialect);
    case "drivers":
      return driversSql(plan, step, dialect);
    case "trend":
      return `${series(plan, step.range, step.grain, dialect)} ORDER BY period`;
    case "forecast":
      return forecastSql(plan, step, dialect);
  }
}

/**
 * Each segment's value in both periods, its change, and its share of the total change; largest
 * movers first. A segment present in one period only counts as 0 in the other.
 */
function contributionSql(
  plan: InvestigationPlan,
  step: Extract<PlanStep, { kind: "contribution" }>,
  dialect: Dialect,
): string {
  const dims = step.dimensions;
  const pick = dims.map((d) => `COALESCE(c.${d}, b.${d}) AS ${d}`).join(", ");
  const on = dims.map((d) => `b.${d} IS NOT DISTINCT FROM c.${d}`).join(" AND ");
  const change = "COALESCE(c.value, 0) - COALESCE(b.value, 0)";
  return (
    `WITH b AS (${grouped(plan, dims, step.base, dialect)}), c AS (${grouped(plan, dims, step.current, dialect)}) ` +
    `SELECT ${pick}, COALESCE(b.value, 0) AS base_value, COALESCE(c.value, 0) AS current_value, ` +
    `${change} AS change, (${change}) / NULLIF(SUM(${change}) OVER (), 0) AS share_of_change ` +
    `FROM b FULL OUTER JOIN c ON ${on} ORDER BY ABS(${change}) DESC`
  );
}

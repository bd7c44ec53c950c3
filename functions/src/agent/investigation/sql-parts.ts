/** The pieces every step's SQL is built from: the table, the periods, the metric per period. */
import type { InvestigationPlan, Period } from "../../contract/investigations";

export type Dialect = "duckdb" | "bigquery";
export type Grain = "day" | "week" | "month";

export function table(name: string, dialect: Dialect): string {
  return dialect === "bigquery" ? `\`${name}\`` : name;
}

/** The date column inside a period (no filter). */
export function inPeriod(plan: InvestigationPlan, p: Period): string {
  const col = `CAST(${plan.metric.dateColumn} AS DATE)`;
  return `${col} >= DATE '${p.from}' AND ${col} < DATE '${p.to}'`;
}

/** The plan's filter, then the period. */
export function within(plan: InvestigationPlan, p: Period): string {
  const range = inPeriod(plan, p);
  return plan.metric.filter ? `(${plan.metric.filter}) AND ${range}` : range;
}

/** The metric per `grain` over `range`: `period` (a DATE) and `value`. */
export function series(plan: InvestigationPlan, range: Period, grain: Grain, dialect: Dialect): string {
  const day = `CAST(${plan.metric.dateColumn} AS DATE)`;
  const bucket =
    dialect === "bigquery"
      ? `DATE_TRUNC(${day}, ${grain.toUpperCase()})`
      : `CAST(DATE_TRUNC('${grain}', ${day}) AS DATE)`;
  return (
    `SELECT ${bucket} AS period, ${plan.metric.expression} AS value FROM ${table(plan.metric.table, dialect)} ` +
    `WHERE ${within(plan, range)} GROUP BY period`
  );
}

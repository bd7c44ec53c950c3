/**
 * The two steps that use the warehouse's own analysis functions on BigQuery, and the same question
 * as plain SQL on DuckDB, with the same result columns either way (the report cites them):
 * - drivers: BigQuery's `AI.KEY_DRIVERS` (contribution analysis without a model): every segment of
 *   the dimensions, alone and combined, and the `all` row — `segment` ("region=south, channel=web"),
 *   `base_value`, `current_value`, `change`, `unexpected_change` (the change beyond what the total's
 *   change predicts for the segment: current − base × total current / total base), `support` (the
 *   segment's share of the metric over both periods); largest changes first;
 * - forecast: BigQuery's `AI.FORECAST` (TimesFM) of the metric per grain over the range, `horizon`
 *   periods on — `period`, `value`, `lower_bound`, `upper_bound` (a 90 % interval); on DuckDB a
 *   least-squares line through the history, its interval ± 1.645 × the residuals' standard error.
 */
import type { InvestigationPlan, PlanStep } from "../../contract/investigations";
import { summable } from "./plan";
import { inPeriod, series, table, type Dialect } from "./sql-parts";

type Drivers = Extract<PlanStep, { kind: "drivers" }>;
type Forecast = Extract<PlanStep, { kind: "forecast" }>;

/** A 90 % interval: BigQuery's `confidence_level`, and the normal quantile DuckDB's line uses. */
const CONFIDENCE = 0.9;
const Z_90 = 1.645;

/** The rows of both periods: the dimensions as text, the row's share of the metric, which period. */
function labelled(plan: InvestigationPlan, step: Drivers, dialect: Dialect): string {
  const text = dialect === "bigquery" ? "STRING" : "VARCHAR";
  const dims = step.dimensions.map((d) => `CAST(${d} AS ${text}) AS ${d}`).join(", ");
  const periods = `((${inPeriod(plan, step.base)}) OR (${inPeriod(plan, step.current)}))`;
  const where = plan.metric.filter ? `(${plan.metric.filter}) AND ${periods}` : periods;
  return (
    `SELECT ${dims}, ${summable(plan.metric.expression)} AS metric, ` +
    `(${inPeriod(plan, step.current)}) AS is_current FROM ${table(plan.metric.table, dialect)} WHERE ${where}`
  );
}

export function driversSql(plan: InvestigationPlan, step: Drivers, dialect: Dialect): string {
  if (dialect === "bigquery") {
    const dims = step.dimensions.map((d) => `'${d}'`).join(", ");
    return (
      `SELECT ARRAY_TO_STRING(drivers, ', ') AS segment, metric_reference AS base_value, ` +
      `metric_interest AS current_value, difference AS change, unexpected_difference AS unexpected_change, ` +
      `apriori_support AS support FROM AI.KEY_DRIVERS((${labelled(plan, step, dialect)}), ` +
      `metric_col => 'metric', dimension_cols => [${dims}], interest_label_col => 'is_current', ` +
      // 0: every segment however small (and a metric that can be negative, e.g. refunds, is allowed).
      `min_apriori_support => 0) ORDER BY ABS(difference) DESC`
    );
  }
  const dims = step.dimensions;
  const grouping = dims.map((d, i) => `GROUPING(${d}) AS g${i}`).join(", ");
  const all = dims.map((_, i) => `g${i} = 1`).join(" AND ");
  const named = dims.map((d, i) => `CASE WHEN g${i} = 0 THEN '${d}=' || COALESCE(${d}, 'NULL') END`);
  const change = "current_value - base_value";
  return (
    `WITH r AS (${labelled(plan, step, dialect)}), ` +
    `s AS (SELECT ${dims.join(", ")}, ${grouping}, ` +
    `COALESCE(SUM(metric) FILTER (WHERE NOT is_current), 0) AS base_value, ` +
    `COALESCE(SUM(metric) FILTER (WHERE is_current), 0) AS current_value FROM r GROUP BY CUBE (${dims.join(", ")})), ` +
    `t AS (SELECT base_value AS total_base, current_value AS total_current FROM s WHERE ${all}) ` +
    `SELECT CASE WHEN ${all} THEN 'all' ELSE concat_ws(', ', ${named.join(", ")}) END AS segment, ` +
    `base_value, current_value, ${change} AS change, ` +
    `current_value - base_value * total_current / NULLIF(total_base, 0) AS unexpected_change, ` +
    `(base_value + current_value) / NULLIF(total_base + total_current, 0) AS support ` +
    `FROM s CROSS JOIN t ORDER BY ABS(${change}) DESC, segment`
  );
}

export function forecastSql(plan: InvestigationPlan, step: Forecast, dialect: Dialect): string {
  const history = series(plan, step.range, step.grain, dialect);
  if (dialect === "bigquery") {
    return (
      `SELECT CAST(forecast_timestamp AS DATE) AS period, forecast_value AS value, ` +
      `prediction_interval_lower_bound AS lower_bound, prediction_interval_upper_bound AS upper_bound ` +
      `FROM AI.FORECAST((SELECT TIMESTAMP(period) AS period, value FROM (${history})), ` +
      `data_col => 'value', timestamp_col => 'period', horizon => ${step.horizon}, ` +
      `confidence_level => ${CONFIDENCE}) ORDER BY period`
    );
  }
  const next = { day: "to_days", week: "to_weeks", month: "to_months" }[step.grain];
  const at = "f.intercept + f.slope * (f.last_i + k)";
  return (
    `WITH h AS (${history}), ` +
    `n AS (SELECT period, CAST(value AS DOUBLE) AS value, CAST(row_number() OVER (ORDER BY period) - 1 AS DOUBLE) AS i FROM h), ` +
    `f AS (SELECT regr_slope(value, i) AS slope, regr_intercept(value, i) AS intercept, max(i) AS last_i, max(period) AS last_period FROM n), ` +
    `e AS (SELECT sqrt(sum(power(n.value - (f.intercept + f.slope * n.i), 2)) / NULLIF(count(*) - 2, 0)) AS se FROM n CROSS JOIN f), ` +
    `ks AS (SELECT unnest(generate_series(1, ${step.horizon})) AS k) ` +
    `SELECT CAST(f.last_period + ${next}(CAST(k AS INTEGER)) AS DATE) AS period, ${at} AS value, ` +
    `${at} - ${Z_90} * e.se AS lower_bound, ${at} + ${Z_90} * e.se AS upper_bound ` +
    `FROM f CROSS JOIN e CROSS JOIN ks ORDER BY period`
  );
}

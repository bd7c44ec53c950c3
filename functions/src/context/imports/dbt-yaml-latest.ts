/**
 * dbt's latest semantic-layer YAML spec (dbt Fusion, dbt Core 1.12: "Migrate to the latest YAML
 * spec" in dbt's docs) read into the legacy spec's shapes, so one compiler (metricflow.ts) serves
 * both, as dbt Fusion's parser resolves it (dbt-core's crates/dbt-parser resolve_semantic_models.rs
 * and resolve_metrics.rs):
 *
 * - a model with `semantic_model:` (`true`, or `{enabled: true, name?}`) is a semantic model named
 *   as the model (or `name`) over the model's table; `agg_time_dimension` and `primary_entity` sit
 *   at the model's top level;
 * - a column's `entity:` or `dimension:` (a mapping, or only its type) is an entity or dimension
 *   named as the column unless it says `name`, whose expression is the column; a time dimension's
 *   grain is the column's `granularity:`; `derived_semantics:` adds those written with an `expr`;
 * - a simple metric under the model's `metrics:` carries its own `agg` and `expr` (its name when
 *   absent): it becomes a measure of the same name in that semantic model, which the metric reads;
 * - keys promoted out of `type_params` (`numerator`, `input_metrics`, `input_metric`, `window`,
 *   `base_metric`, …) go back under it, for metrics under a model or under the top-level `metrics:`.
 *
 * A wrong shape or kind is refused naming the file and line.
 */
import { ImportError } from "./errors";

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === "object" && !Array.isArray(v) ? (v as Obj) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/** A YAML path (keys and list indices) → `file:line` where it is written. */
export type Locate = (path: readonly (string | number)[]) => string;

const ENTITY_TYPES = ["primary", "foreign", "unique", "natural"];
const DIMENSION_TYPES = ["categorical", "time"];
/** dbt's AggregationType (dbt-jsonschema's latest_fusion schema). */
const AGGREGATIONS = [
  "sum",
  "min",
  "max",
  "count_distinct",
  "sum_boolean",
  "average",
  "percentile",
  "median",
  "count",
];

/** `value` lower-cased when it is one of `allowed`, else refused where it is written. */
function oneOf(value: unknown, allowed: string[], what: string, at: string): string {
  const v = str(value)?.trim().toLowerCase();
  if (v && allowed.includes(v)) return v;
  throw new ImportError(
    at,
    `${what} ${value == null ? "is missing" : `"${String(value)}" is not one dbt knows`}: ` +
      `write one of ${allowed.join(", ")}`,
  );
}

/** A metric's type as dbt defaults it (simple). */
const typeOf = (m: Obj) => String(m.type ?? "simple").toLowerCase();

/** `semantic_model:` as written: absent, `true`/`false`, or a mapping whose `enabled` is a boolean. */
function semanticModelOf(m: Obj, at: Locate, path: (string | number)[]) {
  const sm = m.semantic_model;
  if (sm == null) return undefined;
  if (typeof sm === "boolean") return { enabled: sm, config: {} as Obj };
  const o = obj(sm);
  if (typeof o.enabled !== "boolean") {
    throw new ImportError(
      at([...path, "semantic_model"]),
      `model "${String(m.name)}": semantic_model needs enabled: true (or false)`,
    );
  }
  return { enabled: o.enabled, name: str(o.name), config: o };
}

/** The semantic model's entities and dimensions from its columns and `derived_semantics:`. */
function elementsOf(m: Obj, at: Locate, path: (string | number)[]) {
  const entities: Obj[] = [];
  const dimensions: Obj[] = [];
  arr(m.columns).forEach((c, i) => {
    const col = obj(c);
    const name = String(col.name);
    const here = [...path, "columns", i];
    if (col.entity != null) {
      const e = typeof col.entity === "string" ? { type: col.entity } : obj(col.entity);
      entities.push({
        name: str(e.name) ?? name,
        type: oneOf(e.type, ENTITY_TYPES, `column "${name}": the entity type`, at([...here, "entity"])),
        // The docs allow an expr when the key is not the column itself; Fusion writes the column.
        expr: str(e.expr) ?? name,
        description: str(e.description) ?? str(col.description) ?? null,
        label: str(e.label) ?? null,
      });
    }
    if (col.dimension != null) {
      const d = typeof col.dimension === "string" ? { type: col.dimension } : obj(col.dimension);
      const grain = str(col.granularity);
      dimensions.push({
        name: str(d.name) ?? name,
        type: oneOf(
          d.type,
          DIMENSION_TYPES,
          `column "${name}": the dimension type`,
          at([...here, "dimension"]),
        ),
        expr: name,
        description: str(d.description) ?? str(col.description) ?? null,
        label: str(d.label) ?? null,
        is_partition: d.is_partition === true,
        type_params:
          grain || d.validity_params
            ? { time_granularity: grain ?? null, validity_params: d.validity_params }
            : null,
      });
    }
  });
  const derived = obj(m.derived_semantics);
  const needsExpr = (x: Obj, kind: string, where: string) => {
    if (!str(x.name) || x.expr == null)
      throw new ImportError(where, `a derived ${kind} needs a name, a type and an expr`);
  };
  arr(derived.entities).forEach((x, i) => {
    const e = obj(x);
    const where = at([...path, "derived_semantics", "entities", i]);
    needsExpr(e, "entity", where);
    entities.push({
      name: String(e.name),
      type: oneOf(e.type, ENTITY_TYPES, `the derived entity "${String(e.name)}": its type`, where),
      expr: String(e.expr),
      description: str(e.description) ?? null,
      label: str(e.label) ?? null,
    });
  });
  arr(derived.dimensions).forEach((x, i) => {
    const d = obj(x);
    const where = at([...path, "derived_semantics", "dimensions", i]);
    needsExpr(d, "dimension", where);
    const grain = str(d.granularity);
    dimensions.push({
      name: String(d.name),
      type: oneOf(d.type, DIMENSION_TYPES, `the derived dimension "${String(d.name)}": its type`, where),
      expr: String(d.expr),
      description: str(d.description) ?? null,
      label: str(d.label) ?? null,
      is_partition: d.is_partition === true,
      type_params:
        grain || d.validity_params
          ? { time_granularity: grain ?? null, validity_params: d.validity_params }
          : null,
    });
  });
  return { entities, dimensions };
}

/** A simple metric's own aggregation as the measure it stands for (named as the metric). */
function measureOf(metric: Obj, where: string): Obj {
  const name = String(metric.name);
  const agg = oneOf(metric.agg, AGGREGATIONS, `metric "${name}": the aggregation (agg)`, where);
  const percentile = typeof metric.percentile === "number" ? metric.percentile : null;
  const nad = metric.non_additive_dimension == null ? null : obj(metric.non_additive_dimension);
  return {
    name,
    agg,
    // Absent: the column named as the metric (dbt's docs; MetricFlow reads `expr or name`).
    expr: metric.expr == null ? null : String(metric.expr),
    description: str(metric.description) ?? null,
    label: str(metric.label) ?? null,
    agg_params:
      percentile == null
        ? null
        : { percentile, use_discrete_percentile: metric.percentile_type === "discrete" },
    agg_time_dimension: str(metric.agg_time_dimension) ?? null,
    non_additive_dimension: nad && {
      name: nad.name,
      window_choice: nad.window_agg,
      window_groupings: nad.group_by ?? [],
    },
  };
}

/**
 * A metric's latest-spec keys as the legacy `type_params` (ratio, derived, cumulative, conversion;
 * `hidden` as `is_private`). Keys already under `type_params` (the legacy spec) win.
 */
export function latestTypeParams(m: Obj): Obj {
  const type = typeOf(m);
  const p: Obj = {};
  if (m.numerator != null) p.numerator = m.numerator;
  if (m.denominator != null) p.denominator = m.denominator;
  if (m.input_metrics != null) p.metrics = m.input_metrics;
  if (type !== "simple" && m.expr != null) p.expr = String(m.expr);
  if (type === "cumulative") {
    p.cumulative_type_params = {
      metric: m.input_metric ?? null,
      window: m.window ?? null,
      grain_to_date: m.grain_to_date ?? null,
      period_agg: m.period_agg ?? null,
    };
  }
  if (type === "conversion") {
    p.conversion_type_params = {
      entity: m.entity ?? null,
      calculation: m.calculation ?? null,
      base_metric: m.base_metric ?? null,
      conversion_metric: m.conversion_metric ?? null,
      window: m.window ?? null,
      constant_properties: m.constant_properties ?? null,
    };
  }
  if (m.hidden === true) p.is_private = true;
  return p;
}

/**
 * A top-level `metrics:` entry: a simple metric there has no semantic model to aggregate over, so
 * one written with the latest spec's `agg` (and no legacy `type_params.measure`) is refused.
 */
export function checkTopLevelMetric(m: Obj, where: string): void {
  if (typeOf(m) === "simple" && m.agg != null && obj(m.type_params).measure == null) {
    throw new ImportError(
      where,
      `metric "${String(m.name)}": a simple metric with agg belongs under its model's metrics: ` +
        "(dbt's latest spec), or names a measure under type_params (the legacy spec)",
    );
  }
}

/**
 * The semantic model and the metrics a `models:` entry declares in the latest spec (see the file's
 * header); nothing for a model that declares neither, or that is disabled (`config.enabled: false`).
 */
export function latestOfModel(
  m: Obj,
  at: Locate,
  path: (string | number)[],
): { semanticModel?: Obj; metrics: { metric: Obj; at: string }[] } {
  if (obj(m.config).enabled === false) return { metrics: [] };
  const name = String(m.name);
  const sm = semanticModelOf(m, at, path);
  const enabled = sm?.enabled === true;
  const metrics = arr(m.metrics).map((x, i) => {
    const metric = obj(x);
    const where = at([...path, "metrics", i]);
    if (typeOf(metric) !== "simple") return { metric, at: where };
    if (!enabled) {
      throw new ImportError(
        where,
        `metric "${String(metric.name)}": a simple metric under model "${name}" needs the model's ` +
          "semantic model (semantic_model: {enabled: true})",
      );
    }
    const measure = measureOf(metric, where);
    const input = {
      name: measure.name,
      join_to_timespine: metric.join_to_timespine ?? null,
      fill_nulls_with: metric.fill_nulls_with ?? null,
    };
    return {
      metric: { ...metric, type_params: { ...obj(metric.type_params), measure: input } },
      at: where,
      measure,
    };
  });
  const listed = metrics.map(({ metric, at: where }) => ({ metric, at: where }));
  if (!enabled) return { metrics: listed };
  const aggTime = str(m.agg_time_dimension);
  return {
    semanticModel: {
      name: sm?.name ?? name,
      description: m.description,
      model: `ref('${name}')`,
      defaults: aggTime ? { agg_time_dimension: aggTime } : null,
      primary_entity: str(m.primary_entity) ?? null,
      ...elementsOf(m, at, path),
      measures: metrics.flatMap((x) => ("measure" in x && x.measure ? [x.measure] : [])),
      group: sm?.config.group,
      config: sm?.config.config,
    },
    metrics: listed,
  };
}

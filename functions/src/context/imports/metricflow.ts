/**
 * MetricFlow metrics compiled to SQL for the warehouse's dialect (BigQuery, or DuckDB locally), so
 * a team's definition of "revenue" reaches the planner as a query known to run, not as prose:
 *
 * - simple: the measure's aggregation over its semantic model's table, the metric's and the
 *   measure input's filters as WHERE; `{{ Dimension('entity__dim') }}` resolved on the model
 *   itself (its primary entity) or one join along a foreign entity to the model whose primary
 *   entity it is (many to one: no fan-out), `{{ TimeDimension('metric_time', 'month') }}` as the
 *   measure's time dimension truncated to the grain, `{{ Entity('x') }}` as the entity's column;
 * - ratio: numerator and denominator aggregated apart, then divided safely (no division by zero);
 * - derived: its input metrics aggregated apart and combined by its expression (offsets are not
 *   compiled: they need a time spine).
 *
 * Cumulative and conversion metrics, offsets, and aggregations the dialect has no exact form for
 * (percentiles on BigQuery) compile to no SQL, with the reason. `grain` adds `metric_time` at that
 * grain as the first column (one row per period); without it the query returns one row.
 */
import type {
  DbtFilter,
  DbtMetric,
  DbtMetricInput,
  DbtSemanticManifest,
  DbtSemanticModel,
} from "./dbt-artifacts";

export type Dialect = "bigquery" | "duckdb";
export type Grain = "day" | "week" | "month" | "quarter" | "year";
const GRAINS: readonly Grain[] = ["day", "week", "month", "quarter", "year"];

/** SQL; or why a supported-but-not-compiled metric has none; or what is wrong with a broken one. */
/** The aggregations dbt's MetricFlow and LookML name alike, as SQL over an expression. */
export const PLAIN_AGGREGATES: Record<string, ((e: string) => string) | undefined> = {
  sum: (e) => `SUM(${e})`,
  count_distinct: (e) => `COUNT(DISTINCT ${e})`,
  average: (e) => `AVG(${e})`,
  min: (e) => `MIN(${e})`,
  max: (e) => `MAX(${e})`,
};

export type Compiled = { sql: string; tables: string[] } | { noSql: string } | { broken: string };

/** Thrown while compiling: the metric is valid but Quarry does not compile it to SQL, and why. */
class NotCompiled extends Error {}

/** Thrown while compiling: the metric names something the project does not define. */
class Broken extends Error {}

interface Measure {
  model: DbtSemanticModel;
  agg: string;
  expr: string;
  percentile?: number;
  discrete?: boolean;
  timeDimension?: string;
}

/** The semantic layer indexed for compiling, with each model's warehouse table. */
export class SemanticIndex {
  private readonly measures = new Map<string, Measure>();
  private readonly metrics = new Map<string, DbtMetric>();
  private readonly byPrimary = new Map<string, DbtSemanticModel>();

  constructor(
    layer: DbtSemanticManifest,
    /** The warehouse table of a semantic model (by the model's name); undefined: not in the warehouse. */
    readonly tableOf: (model: DbtSemanticModel) => string | undefined,
    readonly dialect: Dialect,
  ) {
    for (const model of layer.semantic_models) {
      for (const e of model.entities)
        if (e.type === "primary" || e.type === "unique") this.byPrimary.set(e.name, model);
      if (model.primary_entity) this.byPrimary.set(model.primary_entity, model);
      for (const m of model.measures) {
        this.measures.set(m.name, {
          model,
          agg: m.agg.toLowerCase(),
          expr: m.expr == null ? m.name : String(m.expr),
          percentile: m.agg_params?.percentile ?? undefined,
          discrete: m.agg_params?.use_discrete_percentile ?? undefined,
          timeDimension:
            (m as { agg_time_dimension?: string | null }).agg_time_dimension ??
            model.defaults?.agg_time_dimension ??
            undefined,
        });
      }
    }
    for (const m of layer.metrics) this.metrics.set(m.name, m);
  }

  metric(name: string): DbtMetric | undefined {
    return this.metrics.get(name);
  }

  /** The metric as SQL, or why not. */
  compile(name: string, grain?: Grain): Compiled {
    try {
      const q = this.query(name, name, grain, [], new Set());
      return { sql: q.sql, tables: [...q.tables] };
    } catch (err) {
      if (err instanceof NotCompiled) return { noSql: err.message };
      if (err instanceof Broken) return { broken: err.message };
      throw err;
    }
  }

  /**
   * A saved query's metrics side by side, grouped by `metric_time` at its grain (or one row), each
   * metric aggregated apart and joined on the period; a group-by other than metric_time (a
   * dimension, an entity) is not compiled, saying so.
   */
  compileQuery(metrics: readonly string[], groupBy: readonly string[]): Compiled {
    const grains = groupBy.map((g) =>
      /^TimeDimension\(\s*['"]metric_time['"]\s*,\s*['"](\w+)['"]\s*\)$/.exec(g.trim()),
    );
    const other = groupBy.find((_g, i) => !grains[i]);
    if (other)
      return { noSql: `it groups by ${other}, which Quarry does not compile (only metric_time at a grain)` };
    const grain = grains[0]?.[1] as Grain | undefined;
    if (grain && !GRAINS.includes(grain))
      return { noSql: `the grain "${grain}" is not one of ${GRAINS.join(", ")}` };
    if (!metrics.length) return { noSql: "it asks for no metric" };
    try {
      const inputs = metrics.map((m) => this.query(m, m, grain, [], new Set()));
      if (inputs.length === 1) {
        const q = inputs[0];
        return { sql: grain ? `${q.sql} ORDER BY 1` : q.sql, tables: [...q.tables] };
      }
      const cols = metrics.join(", ");
      const tables = [...new Set(inputs.flatMap((x) => [...x.tables]))];
      const subs = inputs.map((x, i) => `(${x.sql}) AS i${i}`);
      if (!grain) return { sql: `SELECT ${cols} FROM ${subs.join(" CROSS JOIN ")}`, tables };
      const joined = subs
        .slice(1)
        .reduce((acc, sub) => `${acc} FULL OUTER JOIN ${sub} USING (metric_time)`, subs[0]);
      return { sql: `SELECT metric_time, ${cols} FROM ${joined} ORDER BY 1`, tables };
    } catch (err) {
      if (err instanceof NotCompiled) return { noSql: err.message };
      if (err instanceof Broken) return { broken: err.message };
      throw err;
    }
  }

  /** A metric as a query with one value column named `as` (and `metric_time` first with a grain). */
  private query(
    name: string,
    as: string,
    grain: Grain | undefined,
    extra: string[],
    seen: Set<string>,
  ): Query {
    const metric = this.metrics.get(name);
    if (!metric) throw new Broken(`it uses the metric "${name}", which the project does not define`);
    if (seen.has(name)) throw new Broken(`"${name}" is defined in terms of itself`);
    const inner = new Set(seen).add(name);
    const filters = [...extra, ...templates(metric.filter)];
    const p = metric.type_params;
    switch (metric.type) {
      case "simple": {
        if (!p.measure) throw new Broken(`the simple metric "${name}" names no measure`);
        return this.simple(as, p.measure.name, [...filters, ...templates(p.measure.filter)], grain);
      }
      case "ratio": {
        if (!p.numerator || !p.denominator)
          throw new Broken(`the ratio "${name}" needs a numerator and a denominator`);
        const n = this.input(p.numerator, grain, filters, inner);
        const d = this.input(p.denominator, grain, filters, inner);
        return this.combine(as, [n, d], this.divide(n.column, d.column), grain);
      }
      case "derived": {
        const inputs = (p.metrics ?? []).map((i) => this.input(i, grain, filters, inner));
        if (!p.expr || !inputs.length)
          throw new Broken(`the derived metric "${name}" needs an expression and its metrics`);
        return this.combine(as, inputs, `(${p.expr.trim()})`, grain);
      }
      case "cumulative":
        throw new NotCompiled("a cumulative metric needs a time spine to accumulate over");
      case "conversion":
        throw new NotCompiled("a conversion metric joins events within a window");
      default:
        throw new NotCompiled(`the metric type "${metric.type}" is not one Quarry compiles`);
    }
  }

  /** One input of a ratio or derived metric, its value column named by its alias or name. */
  private input(i: DbtMetricInput, grain: Grain | undefined, filters: string[], seen: Set<string>): Query {
    if (i.offset_window || i.offset_to_grain) {
      throw new NotCompiled(
        `it reads "${i.name}" at an offset (a previous period), which needs a time spine`,
      );
    }
    return this.query(i.name, i.alias ?? i.name, grain, [...filters, ...templates(i.filter)], seen);
  }

  private simple(name: string, measureName: string, filters: string[], grain: Grain | undefined): Query {
    const m = this.measures.get(measureName);
    if (!m) throw new Broken(`it uses the measure "${measureName}", which no semantic model defines`);
    const table = this.tableOf(m.model);
    if (!table)
      throw new NotCompiled(
        `its semantic model "${m.model.name}" has no table in the warehouse` +
          (m.model.node_relation.schema_name
            ? ""
            : " (its YAML does not say the dataset: name it with --dataset)"),
      );
    const joins = new Map<string, Join>();
    const where = filters.map((template) => this.resolve(template, m, joins));
    const tables = new Set([table, ...[...joins.values()].map((j) => j.table)]);
    const value = `${this.aggregate(m)} AS ${name}`;
    const from = `FROM ${this.table(table)}${[...joins].map(([alias, j]) => this.join(alias, j)).join("")}`;
    const cond = where.length ? ` WHERE ${where.map((w) => `(${w})`).join(" AND ")}` : "";
    if (!grain) return { sql: `SELECT ${value} ${from}${cond}`, tables, column: name };
    const time = this.timeColumn(m, grain);
    return {
      sql: `SELECT ${time} AS metric_time, ${value} ${from}${cond} GROUP BY 1`,
      tables,
      column: name,
    };
  }

  /** Inputs aggregated apart (subqueries), then combined by `expr` over their value columns. */
  private combine(name: string, inputs: Query[], expr: string, grain: Grain | undefined): Query {
    const tables = new Set(inputs.flatMap((q) => [...q.tables]));
    const subs = inputs.map((q, i) => `(${q.sql}) AS i${i}`);
    if (!grain) {
      return { sql: `SELECT ${expr} AS ${name} FROM ${subs.join(" CROSS JOIN ")}`, tables, column: name };
    }
    const joined = subs
      .slice(1)
      .reduce((acc, s) => `${acc} FULL OUTER JOIN ${s} USING (metric_time)`, subs[0]);
    return { sql: `SELECT metric_time, ${expr} AS ${name} FROM ${joined}`, tables, column: name };
  }

  private divide(n: string, d: string): string {
    return this.dialect === "bigquery" ? `SAFE_DIVIDE(${n}, ${d})` : `CAST(${n} AS DOUBLE) / NULLIF(${d}, 0)`;
  }

  private aggregate(m: Measure): string {
    const e = m.expr;
    const plain = PLAIN_AGGREGATES[m.agg];
    if (plain) return plain(e);
    switch (m.agg) {
      case "count":
        return `COUNT(${e})`;
      case "sum_boolean":
        return `SUM(CASE WHEN ${e} THEN 1 ELSE 0 END)`;
      case "median":
      case "percentile": {
        const p = m.agg === "median" ? 0.5 : m.percentile;
        if (p === undefined) throw new Broken("its percentile measure names no percentile");
        if (this.dialect === "bigquery") {
          throw new NotCompiled("BigQuery has no exact percentile aggregate");
        }
        return `${m.discrete ? "QUANTILE_DISC" : "QUANTILE_CONT"}(${e}, ${p})`;
      }
      default:
        throw new NotCompiled(`the aggregation "${m.agg}" is not one Quarry compiles`);
    }
  }

  /** `{{ Dimension('a__b') }}`, `{{ TimeDimension(...) }}`, `{{ Entity(...) }}` in a filter, as SQL. */
  private resolve(template: string, m: Measure, joins: Map<string, Join>): string {
    return template.replace(
      /\{\{\s*(Dimension|TimeDimension|Entity)\(([^)]*)\)\s*\}\}/g,
      (_all, kind: string, args: string) => {
        const { ref, grain: grainArg, entityPath } = templateArgs(args);
        if (kind === "TimeDimension" && (ref === "metric_time" || !ref.includes("__"))) {
          const grain = (grainArg || "day") as Grain;
          if (!GRAINS.includes(grain)) throw new NotCompiled(`its filter uses the grain "${grainArg}"`);
          if (ref === "metric_time") return this.timeColumn(m, grain);
        }
        if (kind === "Entity") return this.entityExpr(m.model, ref);
        const parts = ref.split("__");
        if (parts.length < 2)
          throw new Broken(`its filter's "${ref}" names no entity (write entity__dimension)`);
        const dim = parts.pop()!;
        const expr = this.dimension(m.model, [...entityPath, ...parts], dim, joins);
        if (kind === "TimeDimension" && grainArg) return this.truncate(expr, grainArg as Grain);
        return expr;
      },
    );
  }

  /**
   * A dimension reached from the measure's model along `path` (entity names): its own when the
   * first entity is the model's primary one, else one join per foreign entity, each to the model
   * whose primary entity it is (many to one at every step: no fan-out).
   */
  private dimension(base: DbtSemanticModel, path: string[], dim: string, joins: Map<string, Join>): string {
    let model = base;
    let at: Join | undefined;
    let alias = "j";
    for (const entity of path) {
      const own = model.entities.find((e) => e.name === entity);
      if (!own)
        throw new Broken(`its filter names the entity "${entity}", which "${model.name}" does not have`);
      if (own.type === "primary" || own.type === "unique") continue;
      const target = this.byPrimary.get(entity);
      if (!target) throw new Broken(`no semantic model has "${entity}" as its primary entity`);
      const table = this.tableOf(target);
      if (!table) throw new NotCompiled(`"${target.name}" has no table in the warehouse`);
      const fk = this.entityExpr(model, entity);
      // The previous join exposes this hop's key; the measure's own model is read unqualified.
      if (at) at.columns.set(`${entity}__fk`, fk);
      const on = at ? `${alias}.${entity}__fk` : fk;
      alias = `${alias}_${entity}`;
      at = joins.get(alias) ?? {
        table,
        key: this.entityExpr(target, entity),
        on,
        entity,
        columns: new Map(),
      };
      joins.set(alias, at);
      model = target;
    }
    const d = model.dimensions.find((x) => x.name === dim);
    if (!d) throw new Broken(`the dimension "${[...path, dim].join("__")}" is not in "${model.name}"`);
    const expr = d.expr ?? d.name;
    if (!at) return expr;
    at.columns.set(`d__${dim}`, expr);
    return `${alias}.d__${dim}`;
  }

  /** One join along a foreign entity to the model whose primary entity it is (many to one). */
  private join(alias: string, j: Join): string {
    const cols = [...j.columns].map(([name, expr]) => `${expr} AS ${name}`).join(", ");
    return (
      ` LEFT JOIN (SELECT ${j.key} AS ${j.entity}__key, ${cols} FROM ${this.table(j.table)}) AS ${alias}` +
      ` ON ${j.on} = ${alias}.${j.entity}__key`
    );
  }

  private entityExpr(model: DbtSemanticModel, name: string): string {
    const e = model.entities.find((x) => x.name === name);
    if (!e) throw new Broken(`"${model.name}" has no entity "${name}"`);
    return e.expr ?? e.name;
  }

  private timeColumn(m: Measure, grain: Grain): string {
    if (!m.timeDimension) throw new NotCompiled(`"${m.model.name}" names no time dimension for its measures`);
    const d = m.model.dimensions.find((x) => x.name === m.timeDimension);
    return this.truncate(d?.expr ?? m.timeDimension, grain);
  }

  private truncate(expr: string, grain: Grain): string {
    if (!GRAINS.includes(grain))
      throw new NotCompiled(`the grain "${grain}" is not one of ${GRAINS.join(", ")}`);
    if (this.dialect === "bigquery") {
      return `DATE_TRUNC(CAST(${expr} AS DATE), ${grain === "week" ? "WEEK(MONDAY)" : grain.toUpperCase()})`;
    }
    return `CAST(DATE_TRUNC('${grain}', ${expr}) AS DATE)`;
  }

  /** A table's id as SQL names it (`jaffle.orders`; BigQuery's `project.dataset.table` in backticks). */
  table(id: string): string {
    if (this.dialect === "bigquery") return `\`${id}\``;
    return /^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$/.test(id)
      ? id
      : id
          .split(".")
          .map((p) => `"${p.replaceAll('"', '""')}"`)
          .join(".");
  }
}

interface Join {
  table: string;
  /** The entity's column in the joined table, and in the measure's. */
  key: string;
  on: string;
  entity: string;
  /** Exposed name (`customer__region`) → its expression in the joined table. */
  columns: Map<string, string>;
}

interface Query {
  sql: string;
  tables: Set<string>;
  /** The value column's name. */
  column: string;
}

/** `'customer__country', 'month', entity_path=['customer']` → its parts. */
function templateArgs(args: string): { ref: string; grain?: string; entityPath: string[] } {
  const path = /entity_path\s*=\s*\[([^\]]*)\]/.exec(args);
  const rest = path ? args.replace(path[0], "") : args;
  const quoted = [...rest.matchAll(/['"]([^'"]*)['"]/g)].map((q) => q[1]);
  const entityPath = path ? [...path[1].matchAll(/['"]([^'"]*)['"]/g)].map((q) => q[1]) : [];
  return { ref: quoted[0] ?? rest.trim(), grain: quoted[1], entityPath };
}

/** A filter's WHERE templates (each one a condition). */
function templates(filter: DbtFilter): string[] {
  return (filter?.where_filters ?? []).map((w) => w.where_sql_template.trim());
}

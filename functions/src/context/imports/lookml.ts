/**
 * A LookML project turned into Quarry's context kinds, parsed by the maintained `lookml-parser`
 * (extends and refinements applied by it): each view with a `sql_table_name` is a table; its
 * dimensions that read one column become that column's notes (description, label as a synonym);
 * its measures become metrics with SQL — `${TABLE}` and `${field}` resolved within the view
 * (dimension groups' timeframes, yes/no dimensions as conditions), `filters:` as a CASE WHEN, a
 * `type: number` measure as its expression over the other measures; explores' joins (`sql_on`
 * between two views' columns, with their `relationship`) become declared joins, and
 * `sql_always_where` / `always_filter` rules. A field reading another view's field, Liquid
 * templating, or a filter value Quarry cannot translate is imported without SQL, saying why.
 */
import path from "node:path";
import { parseFiles } from "lookml-parser";
import { checksum } from "./dbt-artifacts";
import { ImportError } from "./errors";
import { PLAIN_AGGREGATES, type Dialect } from "./metricflow";
import type { ImportNotice, ImportedJoin, ImportedLayer, ImportedMetric, ImportedTable } from "./types";
import type { TableSchema } from "../../tools/types";

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === "object" && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown) => (typeof v === "string" ? v.trim() : undefined);

interface Field extends Obj {
  $name: string;
  type?: string;
  sql?: string;
  description?: string;
  label?: string;
  filters?: unknown;
  timeframes?: string[];
  primary_key?: boolean;
}

interface View {
  $name: string;
  sql_table_name?: string;
  derived_table?: unknown;
  description?: string;
  label?: string;
  dimension?: Record<string, Field>;
  dimension_group?: Record<string, Field>;
  measure?: Record<string, Field>;
  /** The file it is defined in, relative to the project. */
  $file?: string;
}

/** Thrown while resolving a field: why it gets no SQL. */
class NoSql extends Error {}

export interface LookmlInput {
  project: string;
  warehouse: TableSchema[];
  dialect: Dialect;
  /** `project.dataset` or `dataset` of a `sql_table_name` → the warehouse dataset. */
  map?: Record<string, string>;
}

/** Parses the project's model, view and explore files; a syntax error names the file and line. */
async function parse(
  project: string,
): Promise<{ models: Obj; texts: string[]; fileOf: Map<string, string> }> {
  const parsed = await parseFiles({
    source: "**/{*.model,*.explore,*.view,manifest}.lkml",
    cwd: project,
    console: { log() {}, warn() {}, error() {} },
  });
  const errors = (parsed.errors as Obj[] | undefined) ?? [];
  if (errors.length) {
    const e = errors[0];
    const err = obj(e.error);
    const line = obj(obj(err.location).start).line ?? 1;
    throw new ImportError(
      `${String(e.$file_path)}:${String(line)}`,
      `not valid LookML: ${String(err.message ?? err)}`,
    );
  }
  const models = obj(parsed.model);
  if (!Object.keys(models).length) {
    throw new ImportError(project, "no *.model.lkml here; give the LookML project's folder");
  }
  const files = Object.values(obj(parsed.file)).map(obj);
  // The file a view is defined in (not a refinement's `+view`), for provenance.
  const fileOf = new Map<string, string>();
  for (const f of files) {
    for (const name of Object.keys(obj(f.view)))
      if (!fileOf.has(name)) fileOf.set(name, String(f.$file_path));
  }
  return { models, texts: files.map((f) => JSON.stringify(f)), fileOf };
}

/** Reads a LookML project into a layer (see the file's header). */
export async function importLookml(input: LookmlInput): Promise<ImportedLayer> {
  const { models, texts, fileOf } = await parse(input.project);
  const notices: ImportNotice[] = [];
  const known = new Map(input.warehouse.map((t) => [t.id.toLowerCase(), t]));
  const views = new Map<string, View>();
  for (const m of Object.values(models)) {
    for (const [name, v] of Object.entries(obj(obj(m).view)))
      if (!views.has(name)) views.set(name, { ...(v as View), $file: fileOf.get(name) });
  }
  const tableOf = new Map<string, TableSchema>();
  for (const v of views.values()) {
    const t = resolveTable(v, known, input.map ?? {});
    if (typeof t === "string") notices.push({ item: `view.${v.$name}`, message: t });
    else tableOf.set(v.$name, t);
  }
  const tables: ImportedTable[] = [];
  const metrics: ImportedMetric[] = [];
  for (const [name, t] of tableOf) {
    const v = views.get(name)!;
    tables.push(tableNotes(v, t));
    const r = new Resolver(v, input.dialect);
    for (const f of Object.values(v.measure ?? {}))
      metrics.push(metricOf(v, f, t, r, input.dialect, notices));
  }
  const joins: ImportedJoin[] = [];
  const rules: string[] = [];
  for (const [modelName, m] of Object.entries(models)) {
    for (const [exploreName, e] of Object.entries(obj(obj(m).explore))) {
      joins.push(...exploreJoins(exploreName, obj(e), views, tableOf));
      rules.push(
        ...exploreRules(`${modelName}.${exploreName}`, obj(e), views, tableOf, input.dialect, notices),
      );
    }
  }
  return {
    source: "lookml",
    project: path.basename(path.resolve(input.project)),
    generatedAt: new Date().toISOString(),
    checksum: checksum(...texts),
    tables,
    joins: dedupe(joins),
    metrics,
    queries: [],
    notices,
    ...(rules.length ? { rules } : {}),
  };
}

/** The warehouse table a view reads, or why none. */
function resolveTable(
  v: View,
  known: Map<string, TableSchema>,
  map: Record<string, string>,
): TableSchema | string {
  if (v.derived_table)
    return "a derived table (SQL Quarry does not run as a table): its fields are not imported";
  const name = str(v.sql_table_name)?.replace(/[`"]/g, "");
  if (!name) return "no sql_table_name: nothing to import";
  const parts = name.split(".");
  const table = parts.pop()!;
  const dataset = parts.join(".");
  const lower = Object.fromEntries(Object.entries(map).map(([k, val]) => [k.toLowerCase(), val]));
  const mapped =
    lower[dataset.toLowerCase()] ?? lower[parts[parts.length - 1]?.toLowerCase() ?? ""] ?? dataset;
  return (
    known.get(`${mapped}.${table}`.toLowerCase()) ??
    `no table ${name} in the warehouse (map its dataset with --map ${dataset || "<dataset>"}=<dataset>)`
  );
}

/** `${TABLE}.col` alone (perhaps trimmed or cast): the column a dimension reads. */
function singleColumn(sql: string | undefined): string | undefined {
  const refs = [...(sql ?? "").matchAll(/\$\{TABLE\}\.(\w+)/g)].map((m) => m[1]);
  return refs.length === 1 && !/\$\{(?!TABLE\})/.test(sql ?? "") ? refs[0] : undefined;
}

function tableNotes(v: View, t: TableSchema): ImportedTable {
  const have = new Map(t.columns.map((c) => [c.name.toLowerCase(), c.name]));
  const columns = new Map<string, ImportedTable["columns"][number]>();
  for (const f of [...Object.values(v.dimension ?? {}), ...Object.values(v.dimension_group ?? {})]) {
    const col = have.get(singleColumn(f.sql)?.toLowerCase() ?? "");
    if (!col) continue;
    const c = columns.get(col) ?? { name: col };
    const description = str(f.description);
    if (description && !c.description) c.description = description;
    const synonyms = [str(f.label), f.$name !== col ? f.$name.replaceAll("_", " ") : undefined].filter(
      (s): s is string => !!s,
    );
    if (synonyms.length) c.synonyms = [...new Set([...(c.synonyms ?? []), ...synonyms])];
    columns.set(col, c);
  }
  const out: ImportedTable = {
    table: t.id,
    columns: [...columns.values()].filter((c) => c.description || c.synonyms?.length),
    origin: { id: `view.${v.$name}`, file: v.$file },
  };
  const description = str(v.description) ?? str(v.label);
  if (description) out.description = description;
  return out;
}

const TIMEFRAMES: Record<string, (e: string, d: Dialect) => string> = {
  raw: (e) => e,
  time: (e) => e,
  date: (e) => `CAST(${e} AS DATE)`,
  week: (e, d) =>
    d === "bigquery"
      ? `DATE_TRUNC(CAST(${e} AS DATE), WEEK(MONDAY))`
      : `CAST(DATE_TRUNC('week', ${e}) AS DATE)`,
  month: (e, d) =>
    d === "bigquery" ? `DATE_TRUNC(CAST(${e} AS DATE), MONTH)` : `CAST(DATE_TRUNC('month', ${e}) AS DATE)`,
  quarter: (e, d) =>
    d === "bigquery"
      ? `DATE_TRUNC(CAST(${e} AS DATE), QUARTER)`
      : `CAST(DATE_TRUNC('quarter', ${e}) AS DATE)`,
  year: (e) => `EXTRACT(YEAR FROM ${e})`,
};

/** `${TABLE}`, `${field}` and `${group_timeframe}` of one view, resolved to SQL over its table. */
class Resolver {
  constructor(
    private readonly view: View,
    private readonly dialect: Dialect,
  ) {}

  /** A field's SQL with every reference resolved (dimensions inline; measures as their aggregate). */
  sql(text: string, seen: Set<string> = new Set()): string {
    if (/\{\{|\{%/.test(text)) throw new NoSql("it uses Liquid templating, which Quarry does not resolve");
    return text
      .trim()
      .replace(/\$\{([\w.]+)\}/g, (_all, ref: string) => {
        if (ref === "TABLE") return "";
        if (ref.includes(".")) {
          const [view, field] = ref.split(".");
          if (view !== this.view.$name) throw new NoSql(`it reads ${ref}, a field of another view`);
          return this.field(field, seen);
        }
        return this.field(ref, seen);
      })
      .replace(/(^|[^\w.])\.(\w)/g, "$1$2");
  }

  private field(name: string, seen: Set<string>): string {
    if (seen.has(name)) throw new NoSql(`${name} is defined in terms of itself`);
    const inner = new Set(seen).add(name);
    const dim = this.view.dimension?.[name];
    if (dim) {
      const sql = dim.sql ? this.sql(dim.sql, inner) : name;
      return dim.type === "yesno" ? `(${sql})` : /^\w+$/.test(sql) ? sql : `(${sql})`;
    }
    for (const g of Object.values(this.view.dimension_group ?? {})) {
      const tf = name.startsWith(`${g.$name}_`) ? name.slice(g.$name.length + 1) : undefined;
      if (tf && TIMEFRAMES[tf]) return TIMEFRAMES[tf](this.sql(g.sql ?? g.$name, inner), this.dialect);
    }
    const measure = this.view.measure?.[name];
    if (measure) return this.aggregate(measure, inner);
    throw new NoSql(`it reads \${${name}}, which ${this.view.$name} does not define`);
  }

  /** A measure as one aggregate expression. */
  aggregate(f: Field, seen: Set<string> = new Set()): string {
    const type = f.type ?? "count";
    if (type === "number") return `(${this.sql(f.sql ?? "NULL", seen)})`;
    const cond = this.filters(f.filters, seen);
    const pk = Object.values(this.view.dimension ?? {}).find((d) => d.primary_key);
    const expr = f.sql
      ? this.sql(f.sql, seen)
      : type === "count"
        ? pk
          ? this.sql(pk.sql ?? pk.$name, seen)
          : "*"
        : undefined;
    if (!expr) throw new NoSql(`its ${type} measure has no sql`);
    const value = cond ? `CASE WHEN ${cond} THEN ${expr === "*" ? "1" : expr} END` : expr;
    const plain = PLAIN_AGGREGATES[type];
    if (plain) return plain(value);
    switch (type) {
      case "count":
        return f.sql || pk ? `COUNT(DISTINCT ${value})` : cond ? `COUNT(${value})` : "COUNT(*)";
      case "median":
        if (this.dialect === "bigquery") throw new NoSql("BigQuery has no exact median aggregate");
        return `MEDIAN(${value})`;
      default:
        throw new NoSql(`the measure type "${type}" is not one Quarry compiles`);
    }
  }

  /** `filters:` (one or several `{field, value}`, or the `[field: "value"]` form) as one condition. */
  private filters(filters: unknown, seen: Set<string>): string | undefined {
    const list = (Array.isArray(filters) ? filters : filters ? [filters] : []).flatMap((f) => {
      const o = obj(f);
      if (typeof o.field === "string") return [[o.field, String(o.value ?? "")] as const];
      return Object.entries(o)
        .filter(([k]) => !k.startsWith("$"))
        .map(([k, val]) => [k, String(val)] as const);
    });
    if (!list.length) return undefined;
    return list.map(([field, value]) => this.filter(field, value, seen)).join(" AND ");
  }

  private filter(field: string, value: string, seen: Set<string>): string {
    const name = field.includes(".") ? field : `${this.view.$name}.${field}`;
    const [view, f] = name.split(".");
    if (view !== this.view.$name) throw new NoSql(`its filter reads ${field}, a field of another view`);
    const expr = this.field(f, seen);
    const isYesNo = this.view.dimension?.[f]?.type === "yesno";
    const v = value.trim();
    if (isYesNo && /^(yes|no)$/i.test(v)) return /^yes$/i.test(v) ? expr : `NOT ${expr}`;
    if (/^-?\d+(\.\d+)?$/.test(v)) return `${expr} = ${v}`;
    const cmp = /^(>=|<=|>|<|!=)\s*(-?\d+(\.\d+)?)$/.exec(v);
    if (cmp) return `${expr} ${cmp[1]} ${cmp[2]}`;
    if (/^-?NULL$/i.test(v)) return `${expr} IS ${v.startsWith("-") ? "NOT " : ""}NULL`;
    if (/\d+\s+(day|week|month|year)s?/i.test(v) || /[%^]/.test(v)) {
      throw new NoSql(
        `its filter "${field}: ${value}" is a Looker filter expression Quarry does not translate`,
      );
    }
    const values = v
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
    const negated = values.every((s) => s.startsWith("-"));
    const quoted = values.map((s) => `'${s.replace(/^-/, "").replaceAll("'", "''")}'`).join(", ");
    return `${expr} ${negated ? "NOT IN" : "IN"} (${quoted})`;
  }
}

function metricOf(
  v: View,
  f: Field,
  t: TableSchema,
  r: Resolver,
  dialect: Dialect,
  notices: ImportNotice[],
): ImportedMetric {
  const metric: ImportedMetric = {
    name: `${v.$name}.${f.$name}`,
    kind: f.type === "number" ? "derived" : "simple",
    tables: [t.id],
    origin: { id: `${v.$name}.${f.$name}`, file: v.$file },
  };
  const label = str(f.label);
  if (label) metric.label = label;
  const description = str(f.description);
  if (description) metric.description = description;
  try {
    const table = dialect === "bigquery" ? `\`${t.id}\`` : t.id;
    metric.sql = `SELECT ${r.aggregate(f)} AS ${f.$name} FROM ${table}`;
  } catch (err) {
    if (!(err instanceof NoSql)) throw err;
    metric.noSql = err.message;
    metric.tables = [];
    notices.push({ item: metric.origin.id, message: `imported without SQL: ${err.message}` });
  }
  return metric;
}

/** `${a.x} = ${b.y}` between two views' single columns, in an explore's join. */
function exploreJoins(
  explore: string,
  e: Obj,
  views: Map<string, View>,
  tableOf: Map<string, TableSchema>,
): ImportedJoin[] {
  const out: ImportedJoin[] = [];
  for (const [joinName, j] of Object.entries(obj(e.join))) {
    const on = str(obj(j).sql_on);
    const m = on && /^\$\{(\w+)\.(\w+)\}\s*=\s*\$\{(\w+)\.(\w+)\}$/.exec(on);
    if (!m) continue;
    const side = (view: string, field: string) => {
      const v = views.get(view);
      const t = tableOf.get(view);
      const col = singleColumn(v?.dimension?.[field]?.sql);
      return v && t && col ? { table: t.id, column: col } : undefined;
    };
    const a = side(m[1], m[2]);
    const b = side(m[3], m[4]);
    if (!a || !b) continue;
    // The relationship is from the explore's side to the joined view's.
    const joinedFirst = m[1] === (str(obj(j).from) ?? joinName);
    const rel = str(obj(j).relationship) ?? "many_to_one";
    const [from, to] = joinedFirst ? [b, a] : [a, b];
    out.push({
      from,
      to,
      cardinality: (["many_to_one", "one_to_one", "one_to_many", "many_to_many"].includes(rel)
        ? rel
        : "many_to_one") as ImportedJoin["cardinality"],
      origin: { id: `explore.${explore}.join.${joinName}` },
    });
  }
  return out;
}

/** `sql_always_where` and `always_filter` as rules (stated for the explore's table). */
function exploreRules(
  name: string,
  e: Obj,
  views: Map<string, View>,
  tableOf: Map<string, TableSchema>,
  dialect: Dialect,
  notices: ImportNotice[],
): string[] {
  const base = str(e.view_name) ?? str(e.from) ?? name.split(".").pop()!;
  const v = views.get(base);
  const t = tableOf.get(base);
  const rules: string[] = [];
  const where = str(e.sql_always_where);
  if (where && v && t) {
    try {
      rules.push(
        `Queries of ${t.id} (Looker explore ${name}) always filter: ${new Resolver(v, dialect).sql(where)}`,
      );
    } catch (err) {
      if (!(err instanceof NoSql)) throw err;
      notices.push({ item: `explore.${name}`, message: `sql_always_where not imported: ${err.message}` });
    }
  }
  const always = obj(obj(e.always_filter).filters);
  if (Object.keys(always).length && t) {
    rules.push(
      `Queries of ${t.id} (Looker explore ${name}) always ask for a filter on: ${Object.keys(always)
        .filter((k) => !k.startsWith("$"))
        .join(", ")}`,
    );
  }
  return rules;
}

function dedupe(joins: ImportedJoin[]): ImportedJoin[] {
  const seen = new Set<string>();
  return joins.filter((j) => {
    const key = `${j.from.table}.${j.from.column}>${j.to.table}.${j.to.column}`;
    return seen.has(key) ? false : (seen.add(key), true);
  });
}

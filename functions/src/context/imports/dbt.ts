/**
 * A dbt project's compiled artifacts turned into Quarry's context kinds (types.ts): models' and
 * sources' descriptions become table notes, columns' descriptions, synonyms (`meta.synonyms`) and
 * `accepted_values` become column notes and value lists, `relationships` tests and MetricFlow
 * entities become declared joins, metrics become glossary terms with SQL compiled for the
 * warehouse (metricflow.ts), saved queries become proposals. Tables are matched to the warehouse's
 * (its catalog, as listed): a model the warehouse lacks (ephemeral, not built, another target) is
 * skipped and said; a documented column it lacks is said and never reaches a prompt.
 */
import type { TableSchema } from "../../tools/types";
import { checksum, type DbtManifest, type DbtNode, type DbtSemanticManifest } from "./dbt-artifacts";
import { ImportError } from "./errors";
import { SemanticIndex, type Dialect } from "./metricflow";
import type {
  ImportNotice,
  ImportedColumn,
  ImportedJoin,
  ImportedLayer,
  ImportedMetric,
  ImportedQuery,
  ImportedTable,
} from "./types";

export interface DbtInput {
  manifest: DbtManifest;
  semantic?: DbtSemanticManifest;
  /** The artifacts' text, for the checksum. */
  texts: string[];
  /** The warehouse's tables with their columns. */
  warehouse: TableSchema[];
  dialect: Dialect;
  /** dbt schema (or `database.schema`) → the warehouse dataset Quarry knows it as (`--map`). */
  map?: Record<string, string>;
}

const RELATION_TYPES = new Set(["model", "seed", "snapshot", "source"]);

/** Where a dbt relation is in the warehouse: its table id, or undefined when the warehouse lacks it. */
function relationResolver(
  input: DbtInput,
): (database: string | null | undefined, schema: string, name: string) => string | undefined {
  const known = new Map(input.warehouse.map((t) => [t.id.toLowerCase(), t.id]));
  const map = new Map(Object.entries(input.map ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
  return (database, schema, name) => {
    // Read from YAML, a model has no schema: the `*` entry (--dataset) says where it is built.
    const dataset = !schema
      ? map.get("*")
      : (map.get(`${database ?? ""}.${schema}`.toLowerCase()) ??
        map.get(schema.toLowerCase()) ??
        (input.dialect === "bigquery" && database ? `${database}.${schema}` : schema));
    return dataset ? known.get(`${dataset}.${name}`.toLowerCase()) : undefined;
  };
}

/** The file a node was documented in (its YAML patch), else the file it was defined in. */
function fileOf(node: {
  patch_path?: string | null;
  original_file_path?: string | null;
}): string | undefined {
  return node.patch_path?.replace(/^[^:]+:\/\//, "") ?? node.original_file_path ?? undefined;
}

const text = (s: string | null | undefined) => (s && s.trim() ? s.trim() : undefined);

function synonymsOf(meta: Record<string, unknown> | null | undefined): string[] {
  const s = meta?.synonyms;
  return Array.isArray(s) ? s.filter((x): x is string => typeof x === "string" && x.trim() !== "") : [];
}

/** Builds the layer (see the file's header). */
export function importDbt(input: DbtInput): ImportedLayer {
  const notices: ImportNotice[] = [];
  const resolve = relationResolver(input);
  const schemas = new Map(input.warehouse.map((t) => [t.id, t]));
  const tableOfNode = new Map<string, string>();
  const tables: ImportedTable[] = [];
  const all = [...Object.values(input.manifest.nodes), ...Object.values(input.manifest.sources ?? {})];
  for (const node of all) {
    if (!RELATION_TYPES.has(node.resource_type) || node.config?.enabled === false) continue;
    if (node.config?.materialized === "ephemeral") {
      notices.push({
        item: node.unique_id,
        message: "ephemeral: it has no table, so nothing of it is imported",
      });
      continue;
    }
    const name = node.resource_type === "source" ? (node.identifier ?? node.name) : (node.alias ?? node.name);
    const id = resolve(node.database, node.schema ?? "", name);
    if (!id) {
      notices.push({
        item: node.unique_id,
        message: node.schema
          ? `no table ${node.schema}.${name} in the warehouse (not built, or another target: map its schema with --map)`
          : `no table ${name} in the warehouse (its YAML does not say the dataset: name it with --dataset)`,
      });
      continue;
    }
    tableOfNode.set(node.unique_id, id);
    tables.push(tableOf(node, id, schemas.get(id)!, notices));
  }
  addTests(input.manifest, tableOfNode, tables, notices);
  const joins = testJoins(input.manifest, tableOfNode);
  const semantic = input.semantic ?? { semantic_models: [], metrics: [], saved_queries: [] };
  const modelTable = (m: {
    node_relation: { database?: string | null; schema_name: string; alias: string };
  }) => resolve(m.node_relation.database, m.node_relation.schema_name, m.node_relation.alias);
  joins.push(...entityJoins(semantic, modelTable, input.manifest));
  const metrics = metricsOf(input, semantic, modelTable, notices);
  const queries = queriesOf(input.manifest, semantic, new SemanticIndex(semantic, modelTable, input.dialect));
  return {
    source: "dbt",
    project: input.manifest.metadata.project_name ?? "dbt",
    generatedAt: input.manifest.metadata.generated_at ?? new Date().toISOString(),
    checksum: checksum(...input.texts),
    tables,
    joins: dedupeJoins(joins),
    metrics,
    queries,
    notices,
  };
}

/** A model or source as a table note; documented columns the warehouse lacks are said and left out. */
function tableOf(node: DbtNode, id: string, schema: TableSchema, notices: ImportNotice[]): ImportedTable {
  const have = new Map(schema.columns.map((c) => [c.name.toLowerCase(), c.name]));
  const columns: ImportedColumn[] = [];
  for (const c of Object.values(node.columns ?? {})) {
    const name = have.get(c.name.toLowerCase());
    if (!name) {
      notices.push({
        item: `${node.unique_id}.${c.name}`,
        message: `documented, but ${id} has no column "${c.name}"`,
      });
      continue;
    }
    const synonyms = [...synonymsOf(c.meta), ...synonymsOf(c.config?.meta)];
    const label = c.meta?.label ?? c.config?.meta?.label;
    if (typeof label === "string" && label.trim()) synonyms.push(label.trim());
    const col: ImportedColumn = { name };
    const description = text(c.description);
    if (description) col.description = description;
    if (synonyms.length) col.synonyms = [...new Set(synonyms)];
    columns.push(col);
  }
  const documented = new Set(columns.map((c) => c.name.toLowerCase()));
  const undocumented = schema.columns.filter((c) => !documented.has(c.name.toLowerCase())).map((c) => c.name);
  if (node.columns && Object.keys(node.columns).length && undocumented.length) {
    notices.push({
      item: node.unique_id,
      message: `columns the project does not document: ${undocumented.join(", ")}`,
    });
  }
  const t: ImportedTable = { table: id, columns, origin: { id: node.unique_id, file: fileOf(node) } };
  const description = text(node.description);
  if (description) t.description = description;
  return t;
}

/** `accepted_values` tests as value lists on their columns. */
function addTests(
  manifest: DbtManifest,
  tableOfNode: Map<string, string>,
  tables: ImportedTable[],
  notices: ImportNotice[],
) {
  const byId = new Map(tables.map((t) => [t.table, t]));
  for (const test of Object.values(manifest.nodes)) {
    if (test.resource_type !== "test" || test.test_metadata?.name !== "accepted_values") continue;
    const table = byId.get(tableOfNode.get(test.attached_node ?? "") ?? "");
    const column = test.column_name ?? (test.test_metadata.kwargs?.column_name as string | undefined);
    const values = test.test_metadata.kwargs?.values;
    if (!table || !column || !Array.isArray(values)) continue;
    const col = table.columns.find((c) => c.name.toLowerCase() === column.toLowerCase());
    if (!col) {
      notices.push({
        item: test.unique_id,
        message: `tests a column "${column}" that ${table.table} does not document`,
      });
      continue;
    }
    col.values = [...new Set([...(col.values ?? []), ...values.map(String)])];
  }
}

/** `relationships` tests: the tested column refers to `to`'s `field` (many rows to one). */
function testJoins(manifest: DbtManifest, tableOfNode: Map<string, string>): ImportedJoin[] {
  const joins: ImportedJoin[] = [];
  for (const test of Object.values(manifest.nodes)) {
    if (test.resource_type !== "test" || test.test_metadata?.name !== "relationships") continue;
    const kwargs = test.test_metadata.kwargs ?? {};
    const from = tableOfNode.get(test.attached_node ?? "");
    const toNode = (test.depends_on?.nodes ?? []).find((n) => n !== test.attached_node);
    const to = toNode ? tableOfNode.get(toNode) : undefined;
    const column = test.column_name ?? (kwargs.column_name as string | undefined);
    const field = kwargs.field as string | undefined;
    if (!from || !to || !column || !field) continue;
    joins.push({
      from: { table: from, column },
      to: { table: to, column: field },
      cardinality: "many_to_one",
      origin: { id: test.unique_id, file: fileOf(test) },
    });
  }
  return joins;
}

/** MetricFlow entities: a foreign entity refers to the model whose primary (or unique) entity it is. */
function entityJoins(
  semantic: DbtSemanticManifest,
  tableOf: (m: DbtSemanticManifest["semantic_models"][number]) => string | undefined,
  manifest: DbtManifest,
): ImportedJoin[] {
  const primaries = new Map<string, { table: string; column: string; unique: boolean }>();
  for (const m of semantic.semantic_models) {
    const table = tableOf(m);
    if (!table) continue;
    for (const e of m.entities) {
      if (e.type === "primary" || e.type === "unique")
        primaries.set(e.name, { table, column: e.expr ?? e.name, unique: true });
    }
  }
  const located = new Map(Object.values(manifest.semantic_models ?? {}).map((s) => [s.name, s]));
  const joins: ImportedJoin[] = [];
  for (const m of semantic.semantic_models) {
    const table = tableOf(m);
    for (const e of m.entities) {
      const target = primaries.get(e.name);
      if (!table || e.type !== "foreign" || !target || target.table === table) continue;
      joins.push({
        from: { table, column: e.expr ?? e.name },
        to: { table: target.table, column: target.column },
        cardinality: "many_to_one",
        origin: {
          id: located.get(m.name)?.unique_id ?? `semantic_model.${m.name}`,
          file: located.get(m.name)?.original_file_path ?? undefined,
        },
      });
    }
  }
  return joins;
}

function dedupeJoins(joins: ImportedJoin[]): ImportedJoin[] {
  const seen = new Set<string>();
  return joins.filter((j) => {
    const key = `${j.from.table}.${j.from.column}>${j.to.table}.${j.to.column}`.toLowerCase();
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function metricsOf(
  input: DbtInput,
  semantic: DbtSemanticManifest,
  tableOf: (m: DbtSemanticManifest["semantic_models"][number]) => string | undefined,
  notices: ImportNotice[],
): ImportedMetric[] {
  const index = new SemanticIndex(semantic, tableOf, input.dialect);
  const located = new Map(Object.values(input.manifest.metrics ?? {}).map((m) => [m.name, m]));
  return semantic.metrics.map((m) => {
    const c = index.compile(m.name);
    const where = located.get(m.name);
    const metric: ImportedMetric = {
      name: m.name,
      kind: (["simple", "ratio", "derived", "cumulative", "conversion"].includes(m.type)
        ? m.type
        : "simple") as ImportedMetric["kind"],
      tables: "sql" in c ? c.tables : [],
      origin: { id: where?.unique_id ?? `metric.${m.name}`, file: where?.original_file_path ?? undefined },
    };
    if (text(m.label)) metric.label = text(m.label);
    if (text(m.description)) metric.description = text(m.description);
    if ("broken" in c) {
      throw new ImportError(
        metric.origin.file ?? "target/semantic_manifest.json",
        `metric "${m.name}" (${metric.origin.id}): ${c.broken}`,
      );
    }
    if ("sql" in c) metric.sql = c.sql;
    else {
      metric.noSql = c.noSql;
      notices.push({ item: metric.origin.id, message: `imported without SQL: ${c.noSql}` });
    }
    return metric;
  });
}

/** A saved query's SQL, or why none (a broken one is said the same way: the metrics report it themselves). */
function compiledQuery(c: ReturnType<SemanticIndex["compileQuery"]>): { sql: string } | { noSql: string } {
  return "sql" in c ? { sql: c.sql } : { noSql: "noSql" in c ? c.noSql : c.broken };
}

/** Saved queries as proposals: their question is their description or label or name; their SQL compiled. */
function queriesOf(
  manifest: DbtManifest,
  semantic: DbtSemanticManifest,
  index: SemanticIndex,
): ImportedQuery[] {
  const located = new Map(Object.values(manifest.saved_queries ?? {}).map((q) => [q.name, q]));
  return semantic.saved_queries.map((q) => ({
    ...compiledQuery(index.compileQuery(q.query_params.metrics, q.query_params.group_by)),
    name: q.name,
    question: text(q.description) ?? text(q.label) ?? q.name.replaceAll("_", " "),
    metrics: q.query_params.metrics,
    groupBy: q.query_params.group_by,
    origin: {
      id: located.get(q.name)?.unique_id ?? `saved_query.${q.name}`,
      file: located.get(q.name)?.original_file_path ?? undefined,
    },
  }));
}

/**
 * A dbt project read from its YAML when it has no compiled artifacts (a team that cannot run
 * `dbt parse` can still import): `models:` (descriptions, columns, `meta`, and tests under both
 * `tests:` and `data_tests:`, with 1.10's `arguments:`), `sources:`, and MetricFlow's
 * `semantic_models:`, `metrics:` and `saved_queries:` — turned into the shapes the artifacts have
 * (dbt-artifacts.ts), so one importer serves both. dbt's latest spec (semantic models and their
 * metrics declared on the models themselves, dbt-yaml-latest.ts) is read too, beside the legacy
 * one in the same project. The YAML does not say which schema the models are built in: the `*`
 * entry of the map (`--dataset`) does. A syntax error names the file and line, and so does a
 * metric or semantic model defined twice.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { isMap, isSeq, LineCounter, parseDocument, type Node } from "yaml";
import type { DbtManifest, DbtSemanticManifest } from "./dbt-artifacts";
import { checkTopLevelMetric, latestOfModel, latestTypeParams, type Locate } from "./dbt-yaml-latest";
import { ImportError } from "./errors";

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === "object" && !Array.isArray(v) ? (v as Obj) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/** Every YAML file under the project's `models/` (or the folder itself), but dbt's own config files. */
function yamlFiles(project: string): string[] {
  const root = statSafe(path.join(project, "models")) ? path.join(project, "models") : project;
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const file = path.join(dir, name);
      if (statSync(file).isDirectory()) {
        if (!["target", "dbt_packages", "node_modules", ".git"].includes(name)) walk(file);
      } else if (
        /\.ya?ml$/.test(name) &&
        !/^(dbt_project|profiles|packages|dependencies)\.ya?ml$/.test(name)
      ) {
        out.push(file);
      }
    }
  };
  walk(root);
  return out;
}

function statSafe(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** A file's YAML, its text, and where in it a path (keys and list indices) is written. */
function parseYaml(file: string, project: string): { doc: Obj; text: string; at: Locate } {
  const text = readFileSync(file, "utf8");
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter, prettyErrors: false });
  const rel = path.relative(project, file);
  if (doc.errors.length) {
    const e = doc.errors[0];
    throw new ImportError(
      `${rel}:${e.linePos?.[0]?.line ?? 1}`,
      `not valid YAML: ${e.message.split("\n")[0]}`,
    );
  }
  // The line of the path's key (or list item); a path not written: the nearest enclosing one.
  const lineOf = (p: readonly (string | number)[]): number => {
    for (let n = p.length; n > 0; n--) {
      const parent = n === 1 ? doc.contents : doc.getIn(p.slice(0, n - 1), true);
      const last = p[n - 1];
      const node: Node | null | undefined = isMap(parent)
        ? (parent.items.find((i) => (i.key as { value?: unknown } | null)?.value === last)?.key as Node)
        : isSeq(parent) && typeof last === "number"
          ? (parent.items[last] as Node)
          : undefined;
      if (node?.range) return counter.linePos(node.range[0]).line;
    }
    return 1;
  };
  return { doc: obj(doc.toJS()), text, at: (p) => `${rel}:${lineOf(p)}` };
}

/** `ref('orders')` / `ref("orders")` → `orders`. */
const refName = (v: unknown) => /ref\(\s*['"]([^'"]+)['"]/.exec(str(v) ?? "")?.[1];

/** A column's tests: both keys, a test as a name or `{name: {args}}`, 1.10's `arguments:` unwrapped. */
function testsOf(c: Obj): [string, Obj][] {
  return [...arr(c.tests), ...arr(c.data_tests)].flatMap((t): [string, Obj][] => {
    if (typeof t === "string") return [[t, {}]];
    const [name, args] = Object.entries(obj(t))[0] ?? [];
    if (!name) return [];
    const a = obj(args);
    return [[name, { ...a, ...obj(a.arguments) }]];
  });
}

/** A filter as the artifacts write it: a string or a list of strings → where_filters. */
const filterOf = (f: unknown) =>
  f == null
    ? null
    : { where_filters: (Array.isArray(f) ? f : [f]).map((w) => ({ where_sql_template: String(w) })) };

/** An input given as a name or an object; `offset_window: 1 month` as the artifacts' object. */
function inputOf(v: unknown) {
  if (typeof v === "string") return { name: v, filter: null, alias: null };
  const o = obj(v);
  const window = /^(\d+)\s+(\w+?)s?$/.exec(str(o.offset_window)?.trim() ?? "");
  return {
    ...o,
    name: String(o.name),
    filter: filterOf(o.filter),
    alias: str(o.alias) ?? null,
    offset_window: window ? { count: Number(window[1]), granularity: window[2] } : (o.offset_window ?? null),
  };
}

interface Collected {
  nodes: Obj[];
  semanticModels: Obj[];
  metrics: Obj[];
  savedQueries: Obj[];
  texts: string[];
}

/** Refuses a second item of the same name (dbt does), naming where both are written. */
function unique(kind: string): (item: Obj, at: string) => void {
  const seen = new Map<string, string>();
  return (item, at) => {
    const name = String(item.name);
    const first = seen.get(name);
    if (first) throw new ImportError(at, `the ${kind} "${name}" is defined twice (also at ${first})`);
    seen.set(name, at);
  };
}

function collect(project: string, name: string): Collected {
  const c: Collected = { nodes: [], semanticModels: [], metrics: [], savedQueries: [], texts: [] };
  const newMetric = unique("metric");
  const newSemanticModel = unique("semantic model");
  const addMetric = (m: Obj, file: string, at: string) => {
    newMetric(m, at);
    c.metrics.push({ ...m, file });
  };
  const addSemanticModel = (sm: Obj, file: string, at: string) => {
    newSemanticModel(sm, at);
    c.semanticModels.push({ ...sm, file });
  };
  for (const file of yamlFiles(project)) {
    const { doc, text, at } = parseYaml(file, project);
    const rel = path.relative(project, file);
    c.texts.push(text);
    arr(doc.models).forEach((entry, index) => {
      const m = obj(entry);
      const id = `model.${name}.${String(m.name)}`;
      c.nodes.push({
        unique_id: id,
        resource_type: "model",
        name: m.name,
        schema: "",
        description: m.description,
        config: obj(m.config),
        patch_path: `${name}://${rel}`,
        columns: m.columns,
      });
      for (const col of arr(m.columns).map(obj)) {
        testsOf(col).forEach(([test, args], i) => {
          const to = refName(args.to);
          c.nodes.push({
            unique_id: `test.${name}.${test}_${String(m.name)}_${String(col.name)}.${i}`,
            resource_type: "test",
            name: test,
            attached_node: id,
            column_name: col.name,
            original_file_path: rel,
            test_metadata: { name: test, kwargs: { ...args, column_name: col.name } },
            depends_on: { nodes: to ? [`model.${name}.${to}`, id] : [id] },
          });
        });
      }
      const latest = latestOfModel(m, at, ["models", index]);
      if (latest.semanticModel) addSemanticModel(latest.semanticModel, rel, at(["models", index]));
      for (const x of latest.metrics) addMetric(x.metric, rel, x.at);
    });
    for (const s of arr(doc.sources).map(obj)) {
      for (const t of arr(s.tables).map(obj)) {
        c.nodes.push({
          unique_id: `source.${name}.${String(s.name)}.${String(t.name)}`,
          resource_type: "source",
          name: t.name,
          identifier: t.identifier ?? t.name,
          schema: s.schema ?? s.name,
          database: s.database,
          description: t.description ?? s.description,
          original_file_path: rel,
          columns: t.columns,
        });
      }
    }
    arr(doc.semantic_models).forEach((sm, i) => addSemanticModel(obj(sm), rel, at(["semantic_models", i])));
    arr(doc.metrics).forEach((x, i) => {
      const m = obj(x);
      checkTopLevelMetric(m, at(["metrics", i]));
      addMetric(m, rel, at(["metrics", i]));
    });
    for (const q of arr(doc.saved_queries).map(obj)) c.savedQueries.push({ ...q, file: rel });
  }
  return c;
}

/** Columns as the manifest keys them (by name). */
const columnsByName = (cols: unknown) =>
  Object.fromEntries(
    arr(cols)
      .map(obj)
      .map((c) => [String(c.name), { ...c, name: String(c.name) }]),
  );

/** Reads the project's YAML into the artifacts' shapes (see the file's header). */
export function readDbtYaml(project: string): {
  manifest: DbtManifest;
  semantic: DbtSemanticManifest;
  texts: string[];
} {
  const name = projectName(project);
  const c = collect(project, name);
  if (!c.nodes.length && !c.semanticModels.length) {
    throw new ImportError(
      project,
      "no target/manifest.json and no models, sources or semantic models in its YAML; is this a dbt project?",
    );
  }
  const located = (kind: string, items: Obj[]) =>
    Object.fromEntries(
      items.map((x) => [
        `${kind}.${name}.${String(x.name)}`,
        { name: String(x.name), unique_id: `${kind}.${name}.${String(x.name)}`, original_file_path: x.file },
      ]),
    );
  const manifest = {
    metadata: { dbt_schema_version: "yaml", generated_at: new Date().toISOString(), project_name: name },
    nodes: Object.fromEntries(
      c.nodes
        .filter((n) => n.resource_type !== "source")
        .map((n) => [n.unique_id, { ...n, columns: columnsByName(n.columns) }]),
    ),
    sources: Object.fromEntries(
      c.nodes
        .filter((n) => n.resource_type === "source")
        .map((n) => [n.unique_id, { ...n, columns: columnsByName(n.columns) }]),
    ),
    metrics: located("metric", c.metrics),
    semantic_models: located("semantic_model", c.semanticModels),
    saved_queries: located("saved_query", c.savedQueries),
  } as unknown as DbtManifest;
  const semantic = {
    semantic_models: c.semanticModels.map((sm) => ({
      ...sm,
      entities: arr(sm.entities),
      measures: arr(sm.measures),
      dimensions: arr(sm.dimensions),
      node_relation: { alias: refName(sm.model) ?? String(sm.name), schema_name: "", database: null },
    })),
    metrics: c.metrics.map((m) => {
      // The latest spec's keys promoted out of type_params put back under it; the legacy ones win.
      const p = { ...latestTypeParams(m), ...obj(m.type_params) };
      return {
        ...m,
        type: String(m.type ?? "simple").toLowerCase(),
        filter: filterOf(m.filter),
        type_params: {
          ...p,
          measure: p.measure == null ? null : inputOf(p.measure),
          numerator: p.numerator == null ? null : inputOf(p.numerator),
          denominator: p.denominator == null ? null : inputOf(p.denominator),
          metrics: arr(p.metrics).map(inputOf),
          window: null,
        },
      };
    }),
    saved_queries: c.savedQueries.map((q) => ({
      ...q,
      query_params: { metrics: [], group_by: [], ...obj(q.query_params) },
    })),
  } as unknown as DbtSemanticManifest;
  return { manifest, semantic, texts: c.texts };
}

/** The project's name from dbt_project.yml, else the folder's name. */
function projectName(project: string): string {
  try {
    const doc = obj(parseDocument(readFileSync(path.join(project, "dbt_project.yml"), "utf8")).toJS());
    if (typeof doc.name === "string" && doc.name) return doc.name;
  } catch {
    // No dbt_project.yml: the folder's name.
  }
  return path.basename(path.resolve(project));
}

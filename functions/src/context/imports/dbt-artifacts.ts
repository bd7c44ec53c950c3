/**
 * dbt's compiled artifacts, read leniently: `target/manifest.json` (models, sources, their columns
 * and tests, and — since dbt 1.6 — the semantic models, metrics and saved queries with the file
 * each was written in) and `target/semantic_manifest.json` (the same semantic layer as MetricFlow
 * reads it). Only the fields Quarry uses are checked; every other field is allowed, so a newer
 * dbt that adds fields still imports. The schema version is dispatched on: v10–v12 (dbt 1.6–1.11)
 * are read; any other is refused naming the version, since its fields may mean something else.
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import { ImportError } from "./errors";

const Str = z.string().nullish();
const Meta = z.record(z.string(), z.unknown()).nullish();

const Column = z.looseObject({
  name: z.string(),
  description: Str,
  meta: Meta,
  config: z.looseObject({ meta: Meta }).nullish(),
  constraints: z.array(z.looseObject({ type: z.string() })).nullish(),
});

const Node = z.looseObject({
  unique_id: z.string(),
  resource_type: z.string(),
  name: z.string(),
  database: Str,
  schema: Str,
  alias: Str,
  identifier: Str,
  relation_name: Str,
  description: Str,
  original_file_path: Str,
  patch_path: Str,
  columns: z.record(z.string(), Column).nullish(),
  constraints: z.array(z.looseObject({ type: z.string(), columns: z.array(z.string()).nullish() })).nullish(),
  config: z.looseObject({ materialized: Str, meta: Meta, enabled: z.boolean().nullish() }).nullish(),
  meta: Meta,
  attached_node: Str,
  column_name: Str,
  test_metadata: z
    .looseObject({ name: z.string(), namespace: Str, kwargs: z.record(z.string(), z.unknown()).nullish() })
    .nullish(),
  depends_on: z.looseObject({ nodes: z.array(z.string()).nullish() }).nullish(),
});
export type DbtNode = z.infer<typeof Node>;

const Located = z.looseObject({ name: z.string(), unique_id: z.string(), original_file_path: Str });

const Manifest = z.looseObject({
  metadata: z.looseObject({
    dbt_schema_version: z.string(),
    dbt_version: Str,
    generated_at: Str,
    project_name: Str,
    adapter_type: Str,
  }),
  nodes: z.record(z.string(), Node),
  sources: z.record(z.string(), Node).nullish(),
  metrics: z.record(z.string(), Located).nullish(),
  semantic_models: z.record(z.string(), Located).nullish(),
  saved_queries: z.record(z.string(), Located).nullish(),
});
export type DbtManifest = z.infer<typeof Manifest>;

const Entity = z.looseObject({ name: z.string(), type: z.string(), expr: Str, role: Str });
const Measure = z.looseObject({
  name: z.string(),
  agg: z.string(),
  expr: z.union([z.string(), z.number(), z.boolean()]).nullish(),
  description: Str,
  label: Str,
  agg_params: z
    .looseObject({ percentile: z.number().nullish(), use_discrete_percentile: z.boolean().nullish() })
    .nullish(),
});
const Dimension = z.looseObject({
  name: z.string(),
  type: z.string(),
  expr: Str,
  description: Str,
  label: Str,
  type_params: z.looseObject({ time_granularity: Str }).nullish(),
});
const SemanticModel = z.looseObject({
  name: z.string(),
  description: Str,
  label: Str,
  node_relation: z.looseObject({
    alias: z.string(),
    schema_name: z.string(),
    database: Str,
    relation_name: Str,
  }),
  defaults: z.looseObject({ agg_time_dimension: Str }).nullish(),
  primary_entity: Str,
  entities: z.array(Entity).default([]),
  measures: z.array(Measure).default([]),
  dimensions: z.array(Dimension).default([]),
});
export type DbtSemanticModel = z.infer<typeof SemanticModel>;

const Filter = z
  .looseObject({ where_filters: z.array(z.looseObject({ where_sql_template: z.string() })) })
  .nullish();
const Window = z.looseObject({ count: z.number(), granularity: z.string() }).nullish();
const MetricInput = z.looseObject({
  name: z.string(),
  filter: Filter,
  alias: Str,
  offset_window: Window,
  offset_to_grain: Str,
});
const MeasureInput = z.looseObject({ name: z.string(), filter: Filter, alias: Str });
const Metric = z.looseObject({
  name: z.string(),
  description: Str,
  label: Str,
  type: z.string(),
  filter: Filter,
  type_params: z.looseObject({
    measure: MeasureInput.nullish(),
    numerator: MetricInput.nullish(),
    denominator: MetricInput.nullish(),
    expr: Str,
    metrics: z.array(MetricInput).nullish(),
    window: Window,
    grain_to_date: Str,
  }),
});
export type DbtMetric = z.infer<typeof Metric>;
export type DbtMetricInput = z.infer<typeof MetricInput>;
export type DbtFilter = z.infer<typeof Filter>;

const SavedQuery = z.looseObject({
  name: z.string(),
  description: Str,
  label: Str,
  query_params: z.looseObject({
    metrics: z.array(z.string()).default([]),
    group_by: z.array(z.string()).default([]),
    where: z.unknown().nullish(),
  }),
});

const SemanticManifest = z.looseObject({
  semantic_models: z.array(SemanticModel).default([]),
  metrics: z.array(Metric).default([]),
  saved_queries: z.array(SavedQuery).default([]),
});
export type DbtSemanticManifest = z.infer<typeof SemanticManifest>;

/** The manifest schema versions whose fields Quarry reads (dbt 1.6 to 1.11). */
const READABLE_VERSIONS = [10, 11, 12];

/** Parses JSON text, naming the file and the line of a syntax error (a truncated file included). */
function parseJson(text: string, file: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    const message = (err as Error).message;
    const at = /position (\d+)/.exec(message);
    const line = at ? text.slice(0, Number(at[1])).split("\n").length : text.split("\n").length;
    throw new ImportError(
      file,
      `not valid JSON at line ${line} (${message}); is the file whole? Run dbt parse again`,
    );
  }
}

function checked<T>(schema: z.ZodType<T>, value: unknown, file: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new ImportError(file, `${issue.path.join(".") || "(top)"}: ${issue.message}`);
}

/** Reads `manifest.json`'s text: checks its version and the fields Quarry uses. */
export function readManifest(text: string, file = "target/manifest.json"): DbtManifest {
  const raw = parseJson(text, file) as { metadata?: { dbt_schema_version?: unknown } };
  const version = String(raw?.metadata?.dbt_schema_version ?? "");
  const n = Number(/\/manifest\/v(\d+)\.json$/.exec(version)?.[1]);
  if (!READABLE_VERSIONS.includes(n)) {
    throw new ImportError(
      file,
      `manifest schema "${version || "(none)"}" is not one Quarry reads (v${READABLE_VERSIONS.join(", v")}: dbt 1.6 to 1.11); ` +
        "write the artifacts with one of those dbt versions, or import the project's YAML instead",
    );
  }
  return checked(Manifest, raw, file);
}

/** Reads `semantic_manifest.json`'s text. */
export function readSemanticManifest(
  text: string,
  file = "target/semantic_manifest.json",
): DbtSemanticManifest {
  return checked(SemanticManifest, parseJson(text, file), file);
}

/** sha256 of the inputs, in order. */
export function checksum(...texts: string[]): string {
  const h = createHash("sha256");
  for (const t of texts) h.update(t).update("\0");
  return h.digest("hex");
}

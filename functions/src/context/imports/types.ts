/**
 * A semantic layer imported from a team's own definitions (dbt today; LookML to come), in the
 * kinds Quarry's context already has — table and column notes, glossary terms with SQL, value
 * lists, and declared joins — each item with where it came from. Imported items are read-only:
 * a team changes them where they were written and imports again; an item a person authored in
 * Quarry wins over an imported one of the same name.
 */

/** Where an imported item came from. */
interface Provenance {
  /** The dbt `unique_id` (`model.jaffle_shop.orders`, `metric.jaffle_shop.revenue`) or LookML `view.field`. */
  id: string;
  /** The file the item was written in, relative to the project (`models/marts/orders.yml`). */
  file?: string;
}

export interface ImportedColumn {
  name: string;
  description?: string;
  /** Other words people use for it (dbt `config.meta.synonyms`, a label). */
  synonyms?: string[];
  /** Its allowed values (dbt `accepted_values`), for matching a question's words to values. */
  values?: string[];
}

export interface ImportedTable {
  /** The warehouse's id for the table (`jaffle.orders`, or `project.dataset.table` on BigQuery). */
  table: string;
  description?: string;
  columns: ImportedColumn[];
  origin: Provenance;
}

type Cardinality = "many_to_one" | "one_to_one" | "one_to_many" | "many_to_many";

/** A join the team declared: `from.column` refers to `to.column`, with how many rows match each side. */
export interface ImportedJoin {
  from: { table: string; column: string };
  to: { table: string; column: string };
  /** Rows of `from` per row of `to`: many_to_one for a foreign key (`orders.customer_id → customers`). */
  cardinality: Cardinality;
  origin: Provenance;
}

type MetricKind = "simple" | "ratio" | "derived" | "cumulative" | "conversion";

export interface ImportedMetric {
  name: string;
  label?: string;
  description?: string;
  kind: MetricKind;
  /** The metric as one query over the warehouse (a single row; no grain). Absent: see `noSql`. */
  sql?: string;
  /** Why there is no SQL (a cumulative metric, an offset, a measure the dialect cannot compute, a failed dry run). */
  noSql?: string;
  /** The compiled SQL that failed the warehouse's dry run (kept for the report, never prompted). */
  failedSql?: string;
  /** The warehouse tables the SQL reads. */
  tables: string[];
  origin: Provenance;
}

/** A question → SQL pair the team saved (dbt `saved_queries`): a proposal, never approved by importing. */
export interface ImportedQuery {
  name: string;
  question: string;
  /** The metrics it asks for, by name. */
  metrics: string[];
  /** Its SQL (the metrics side by side per metric_time period), or why none. */
  sql?: string;
  noSql?: string;
  groupBy: string[];
  origin: Provenance;
}

/** Something of the project that was not imported, and why (a report line, not an error). */
export interface ImportNotice {
  item: string;
  message: string;
}

export interface ImportedLayer {
  source: "dbt" | "lookml";
  project: string;
  /** When the artifacts were written (dbt's `metadata.generated_at`), or when the files were read. */
  generatedAt: string;
  /** sha256 of the inputs, so a re-import of the same artifacts is known to change nothing. */
  checksum: string;
  tables: ImportedTable[];
  joins: ImportedJoin[];
  metrics: ImportedMetric[];
  queries: ImportedQuery[];
  notices: ImportNotice[];
  /** Conditions the team applies to every query of a table (LookML's `sql_always_where`). */
  rules?: string[];
  /**
   * The admin who reviewed and applied it in the admin page: its definitions are then named as
   * approved in answers. Absent for a committed file or an import applied unreviewed (`"apply": true`).
   */
  reviewedBy?: string;
}

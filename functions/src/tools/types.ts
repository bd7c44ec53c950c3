/**
 * The contract between the agent and the data warehouse. Two engines implement `Warehouse`:
 * BigQuery (production) and DuckDB (embedded local default). The agent only sees this file's types
 * and the LangChain tools built on them (`bq_query`, `list_tables`, `describe_table`).
 */

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type Row = Record<string, JsonValue>;

/** SQL dialect the prompt tells the model to write. */
export type SqlDialect = "bigquery" | "duckdb";

/** Who is asking, for job labels and per-conversation budgets. */
export interface QueryContext {
  userId: string;
  threadId: string;
  runId: string;
  /** Bytes this thread has billed before this query (for the per-conversation budget). */
  bytesBilledSoFar: number;
  /** Aborts the query (and cancels the job server-side) when the run is cancelled. */
  signal?: AbortSignal;
  /** Called after the dry run, before execution: the SQL about to run and its estimate. */
  onEstimate?: (estimate: DryRunResult) => void;
}

export interface ColumnInfo {
  name: string;
  /** Engine type name, e.g. INT64, STRING, STRUCT, DOUBLE, VARCHAR. */
  type: string;
  mode?: "NULLABLE" | "REQUIRED" | "REPEATED";
  description?: string;
  /** Nested fields of a STRUCT/RECORD column. */
  fields?: ColumnInfo[];
}

export interface DryRunResult {
  sql: string;
  /** e.g. SELECT; anything else is refused. */
  statementType: string;
  estimatedBytes: number;
  /** Fully qualified tables the statement reads (`project.dataset.table` or `schema.table`). */
  referencedTables: string[];
}

export interface QueryResult {
  /** The SQL that ran. */
  sql: string;
  columns: ColumnInfo[];
  /** The full result up to the row/character cap, JSON-safe (for the client's table, chart, CSV). */
  rows: Row[];
  /** Bounded text the model sees (rows and characters capped). */
  preview: string;
  /** Rows included in the preview. */
  previewRows: number;
  /** Rows the query produced (may exceed rows.length). */
  totalRows: number;
  /** True when rows were cut by the row or character cap. */
  truncated: boolean;
  estimatedBytes: number;
  bytesProcessed: number;
  bytesBilled: number;
  cacheHit: boolean;
  jobId?: string;
  durationMs: number;
}

export interface TableInfo {
  /** Name the model uses in SQL, e.g. `shop.orders` or `project.dataset.table`. */
  id: string;
  description?: string;
  rowCount?: number;
  partitioning?: string;
  clustering?: string[];
}

export interface TableSchema extends TableInfo {
  columns: ColumnInfo[];
  /** A few rows read without a query job (BigQuery `getRows`). */
  sampleRows: Row[];
}

/** Categories the planner can act on. */
export type WarehouseErrorCategory =
  | "invalid_query"
  | "not_found"
  | "access_denied"
  | "refused"
  | "budget"
  | "bytes_limit"
  | "timeout"
  | "quota"
  | "bad_input"
  | "internal";

export interface WarehouseErrorDetails {
  /** BigQuery's own message, e.g. "Unrecognized name: x; Did you mean y?". */
  engineMessage?: string;
  position?: { line: number; column: number };
  estimatedBytes?: number;
  budgetBytes?: number;
  requiredBytes?: number;
  statementType?: string;
  tables?: string[];
}

export class WarehouseError extends Error {
  readonly category: WarehouseErrorCategory;
  readonly details: WarehouseErrorDetails;
  constructor(
    category: WarehouseErrorCategory,
    message: string,
    details: WarehouseErrorDetails = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "WarehouseError";
    this.category = category;
    this.details = details;
  }
}

export interface Warehouse {
  readonly dialect: SqlDialect;
  /** One paragraph for the system prompt: dialect, how to name tables, caveats. */
  readonly dialectNote: string;
  listTables(): Promise<TableInfo[]>;
  describeTable(table: string): Promise<TableSchema>;
  /**
   * A text column's distinct values when it has at most `limit` of them (else null), read without
   * a billed query; engines that cannot (BigQuery) leave it out and the catalog uses sample rows.
   */
  columnValues?(table: string, column: string, limit: number): Promise<string[] | null>;
  /** Validates and estimates without running; refuses non-SELECT and out-of-scope tables. */
  dryRun(sql: string, ctx: QueryContext): Promise<DryRunResult>;
  /** Dry-runs, checks budgets, calls ctx.onEstimate, then runs with every cap. */
  query(sql: string, ctx: QueryContext): Promise<QueryResult>;
  close(): Promise<void>;
}

/**
 * What a tool returns besides the text the model sees (LangChain `content_and_artifact`): the
 * executor turns it into custom events and keeps it on the ToolMessage in state, so the client can
 * redraw tables and charts after a reload.
 */
export type ToolArtifact =
  | { kind: "query"; result: QueryResult }
  | { kind: "tables"; tables: TableInfo[] }
  | { kind: "schema"; schema: TableSchema }
  | {
      kind: "error";
      category: WarehouseErrorCategory;
      message: string;
      details: WarehouseErrorDetails;
      /** The SQL that failed, for bq_query. */
      sql?: string;
    };

/** Tool names the model sees. */
export const TOOL_NAMES = ["bq_query", "list_tables", "describe_table"] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

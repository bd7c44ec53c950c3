/**
 * The contract between the agent and the data warehouse. Two engines implement `Warehouse`:
 * BigQuery (production) and DuckDB (embedded local default). The agent only sees this file's types
 * and the LangChain tools built on them (`bq_query`, `list_tables`, `describe_table`).
 */

import type {
  QueryResult,
  TableInfo,
  TableSchema,
  WarehouseErrorCategory,
  WarehouseErrorDetails,
} from "../contract/events";
import type { Scope } from "./scope";

// Result types are part of the page's contract; the warehouse's own types are below.
export type {
  ColumnInfo,
  JsonValue,
  QueryResult,
  Row,
  TableInfo,
  TableSchema,
  ToolArtifact,
  WarehouseErrorCategory,
  WarehouseErrorDetails,
} from "../contract/events";

/** One query the tools ran, or that failed or was refused, for the audit log. */
export interface QueryRecord {
  userId: string;
  userEmail: string | null;
  threadId: string;
  runId: string;
  sql: string;
  outcome: "ok" | "error" | "refused";
  error?: { category: string; message: string };
  bytesBilled: number;
  estimatedBytes?: number;
  jobId?: string;
  durationMs: number;
}

/** SQL dialect the prompt tells the model to write. */
type SqlDialect = "bigquery" | "duckdb";

/** Who is asking, for job labels and per-conversation budgets. */
export interface QueryContext {
  userId: string;
  threadId: string;
  runId: string;
  /** Bytes this thread has billed before this query (for the per-conversation budget). */
  bytesBilledSoFar: number;
  /** Aborts the query (and cancels the job server-side) when the run is cancelled. */
  signal?: AbortSignal;
  /** The person's email, for the audit log. */
  userEmail?: string | null;
  /** Bytes the person may still bill today (their daily quota); unset = no person budget. */
  personBytesLeft?: number;
  /** Called after the dry run, before execution: the SQL about to run and its estimate. */
  onEstimate?: (estimate: DryRunResult) => void;
  /** What the person may see: a table outside it is answered like one that does not exist. */
  scope: Scope;
}

export interface DryRunResult {
  sql: string;
  /** e.g. SELECT; anything else is refused. */
  statementType: string;
  estimatedBytes: number;
  /** Fully qualified tables the statement reads (`project.dataset.table` or `schema.table`). */
  referencedTables: string[];
}

export class WarehouseError extends Error {
  readonly category: WarehouseErrorCategory;
  readonly details: WarehouseErrorDetails;
  /**
   * Set when the person's scope refused the query: the model and the page see an ordinary error
   * (a table out of scope reads like one that does not exist); only the audit log records why.
   */
  readonly outOfScope?: readonly string[];
  constructor(
    category: WarehouseErrorCategory,
    message: string,
    details: WarehouseErrorDetails = {},
    options?: { cause?: unknown; outOfScope?: readonly string[] },
  ) {
    super(message, options);
    this.name = "WarehouseError";
    this.category = category;
    this.details = details;
    if (options?.outOfScope) this.outOfScope = options.outOfScope;
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

/** Tool names the model sees. */
export const TOOL_NAMES = ["bq_query", "list_tables", "describe_table"] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

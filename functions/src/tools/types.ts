/**
 * The contract between the agent and the data warehouse. Two engines implement `Warehouse`:
 * BigQuery (production) and DuckDB (embedded local default). The agent only sees this file's types
 * and the LangChain tools built on them (`bq_query`, `list_tables`, `describe_table`).
 */

import type {
  ColumnInfo,
  QueryResult,
  TableInfo,
  TableSchema,
  WarehouseErrorCategory,
  WarehouseErrorDetails,
} from "../contract/events";
import type { Via } from "./person";
import type { Scope } from "./scope";
import type { UploadRef } from "./uploads/types";

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
  /** Asked through MCP (and with which token); absent: the page or the API. */
  via?: Via;
  /** Run by a schedule (its saved SQL, as its owner), not asked by a person just now. */
  scheduled?: true;
  scheduleId?: string;
  error?: { category: string; message: string };
  bytesBilled: number;
  estimatedBytes?: number;
  jobId?: string;
  /** The step's key (QueryContext.jobId): its audit entry's id, so a step run twice is audited once. */
  auditKey?: string;
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
  /**
   * The most this one statement may bill: an investigation's share of its byte budget, reserved for
   * this step (agent/nodes/investigate-steps.ts). A statement whose estimate is over it is refused
   * before it runs; on BigQuery its job is capped at it too. DuckDB, which bills nothing, estimates
   * its bytes when this is set, and refuses on that estimate.
   */
  bytesCap?: number;
  /**
   * Ask DuckDB's dry run for its byte estimate too (BigQuery's always has one): it costs a plan and,
   * once per table, a pass over it, so only a caller that uses the figure asks (an investigation).
   */
  estimateBytes?: boolean;
  /** Called after the dry run, before execution: the SQL about to run and its estimate. */
  onEstimate?: (estimate: DryRunResult) => void;
  /** What the person may see: a table outside it is answered like one that does not exist. */
  scope: Scope;
  /**
   * The job id to run under (BigQuery), the same for the same step of the same run whichever
   * instance runs it (`quarry_<run>_<step>_a<attempt>`): a continuation of a run whose instance
   * stopped attaches to the job already running or done instead of paying for another. It also
   * keys the query's audit entry, so the step is audited once. Unset: a random id.
   */
  jobId?: string;
  /** The way the question came in when it was not the page (for the audit log). */
  via?: Via;
  /** The schedule whose run this query is (the audit log marks it scheduled). */
  scheduleId?: string;
  /**
   * This conversation's uploaded tables (`uploads.<name>`): in scope for this query only, beside
   * `scope`. Absent or empty: no upload is visible (another thread's never is).
   */
  uploads?: readonly UploadRef[];
}

export interface DryRunResult {
  sql: string;
  /** e.g. SELECT; anything else is refused. */
  statementType: string;
  estimatedBytes: number;
  /** BigQuery did not report the estimate (row-level security): `estimatedBytes` is unknown, not 0. */
  bytesHidden?: boolean;
  /**
   * The most running it may bill: BigQuery's estimate plus its minimum of 10 MB a table read.
   * Unset: `estimatedBytes`.
   */
  billableBytes?: number;
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

// --- User identity mode (QUARRY_BQ_IDENTITY=user) -------------------------------------------------

/** Who a metadata read is for; absent = the deployment itself (the shared catalog's build). */
export interface Caller {
  /** The person's uid: their credentials are looked up by it. */
  userId: string;
  /** The conversation's uploaded tables, listed and described beside the warehouse's own. */
  uploads?: readonly UploadRef[];
}

/**
 * Where a warehouse in user identity mode gets a person's access token, by uid: injected when the
 * warehouse is created (the server's credential broker, `identity/`). Tokens never travel in a
 * run's configuration, state or events. Throws `QuarryError("auth:bigquery_consent")` when the
 * person has no usable consent: that ends the run, it is never answered with the service account.
 */
export interface CredentialSource {
  /** A valid access token for `uid`; `fresh`: the last one was refused (401), get a new one. */
  accessToken(uid: string, opts?: { fresh?: boolean }): Promise<string>;
}
// ---------------------------------------------------------------------------------------------------

export interface Warehouse {
  readonly dialect: SqlDialect;
  /** One paragraph for the system prompt: dialect, how to name tables, caveats. */
  readonly dialectNote: string;
  /** `caller`: whose credentials read it in user identity mode (and whose tables it lists). */
  listTables(caller?: Caller): Promise<TableInfo[]>;
  describeTable(table: string, caller?: Caller): Promise<TableSchema>;
  /**
   * A text column's distinct values when it has at most `limit` of them (else null), read without
   * a billed query; engines that cannot (BigQuery) leave it out and the catalog uses sample rows.
   */
  columnValues?(table: string, column: string, limit: number, caller?: Caller): Promise<string[] | null>;
  /** Validates and estimates without running; refuses non-SELECT and out-of-scope tables. */
  dryRun(sql: string, ctx: QueryContext): Promise<DryRunResult>;
  /** Dry-runs, checks budgets, calls ctx.onEstimate, then runs with every cap. */
  query(sql: string, ctx: QueryContext): Promise<QueryResult>;
  close(): Promise<void>;
}

/**
 * Where an engine keeps uploaded tables (DuckDB: Parquet files in a folder every instance of the
 * stack shares; BigQuery: tables in the Quarry-owned uploads dataset, loaded by media upload).
 */
export interface UploadTarget {
  /** Puts an ingested Parquet file in place as this thread's table `name`; returns its location. */
  put(upload: UploadPut, caller?: Caller): Promise<string>;
  /** Removes a table `put` made (absent already: nothing to do). */
  drop(location: string, caller?: Caller): Promise<void>;
  /** How SQL names the table `put` answered `location` for (`uploads.<name>`, or the BigQuery id). */
  tableId(location: string, name: string): string;
}

/** One table to put in place. */
export interface UploadPut {
  parquetPath: string;
  columns: ColumnInfo[];
  rows: number;
  userId: string;
  userEmail?: string | null;
  threadId: string;
  /** The table name inside `uploads`. */
  name: string;
  /** The file's own name, for descriptions. */
  file: string;
  expiresAt: Date;
}

/** Tool names the model sees. */
export const TOOL_NAMES = ["bq_query", "list_tables", "describe_table"] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

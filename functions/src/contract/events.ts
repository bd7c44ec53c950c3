/**
 * What a run streams to the page and keeps in a thread's state: Quarry's custom stream events
 * (LangGraph `custom` mode: phases, the SQL about to run, results, retries, usage) and the query
 * results and tool artifacts they carry. The agent writes them; the page reads them.
 */
import type { InvestigationReportEvent, InvestigationStepEvent } from "./investigations";

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type Row = Record<string, JsonValue>;

export interface ColumnInfo {
  name: string;
  /** Engine type name, e.g. INT64, STRING, STRUCT, DOUBLE, VARCHAR. */
  type: string;
  mode?: "NULLABLE" | "REQUIRED" | "REPEATED";
  description?: string;
  /** Nested fields of a STRUCT/RECORD column. */
  fields?: ColumnInfo[];
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
  /** Rows the query produced (may exceed rows.length); a lower bound when `totalRowsAtLeast`. */
  totalRows: number;
  /** True when reading stopped at the caps and the rest could not be counted cheaply: "more than totalRows". */
  totalRowsAtLeast?: boolean;
  /** True when rows were cut by the row or character cap. */
  truncated: boolean;
  estimatedBytes: number;
  bytesProcessed: number;
  bytesBilled: number;
  /**
   * BigQuery did not report the bytes processed (row-level security hides them): `estimatedBytes`
   * and `bytesProcessed` are unknown, not 0. `bytesBilled` is still what BigQuery billed.
   */
  bytesHidden?: boolean;
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
export const WAREHOUSE_ERROR_CATEGORIES = [
  "invalid_query",
  "not_found",
  "access_denied",
  "refused",
  "budget",
  "bytes_limit",
  "timeout",
  "quota",
  "too_large",
  "bad_input",
  "internal",
] as const;
export type WarehouseErrorCategory = (typeof WAREHOUSE_ERROR_CATEGORIES)[number];

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

export type Phase =
  "ingress" | "planning" | "querying" | "verifying" | "asking" | "answering" | "summarizing" | "done";

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  bytesBilled: number;
  modelCalls: number;
  toolCalls: number;
}

export const ZERO_USAGE: Usage = Object.freeze({
  inputTokens: 0,
  outputTokens: 0,
  totalTokens: 0,
  bytesBilled: 0,
  modelCalls: 0,
  toolCalls: 0,
});

export type QuarryEvent =
  | { type: "phase"; phase: Phase; detail?: string; step?: number }
  /** The SQL about to run, after its dry run. */
  | {
      type: "sql";
      toolCallId: string;
      sql: string;
      estimatedBytes: number;
      attempt: number;
      /** The estimate is unknown (row-level security hides it), not 0. */
      bytesHidden?: boolean;
    }
  /**
   * A query's result. `rows` is the full result up to the cap (for table, chart, CSV); the same
   * result stays on the ToolMessage `artifact` in state (`ref` = its tool_call_id).
   */
  | {
      type: "result";
      ref: string;
      sql: string;
      columns: ColumnInfo[];
      rows: Row[];
      totalRows: number;
      /** "More than totalRows": reading stopped at the caps and the rest was not counted. */
      totalRowsAtLeast?: boolean;
      truncated: boolean;
      bytesProcessed: number;
      bytesBilled: number;
      /** Bytes processed unknown (row-level security), not 0. */
      bytesHidden?: boolean;
      cacheHit: boolean;
      durationMs: number;
      jobId?: string;
    }
  | {
      type: "tool_error";
      toolCallId: string;
      tool: string;
      category: WarehouseErrorCategory;
      message: string;
      sql?: string;
    }
  | { type: "retry"; attempt: number; maxRetries: number; reason: string }
  /** Usage of this turn so far and of the whole thread. */
  | { type: "usage"; turn: Usage; thread: Usage }
  /**
   * Up to three questions to ask next, from the answer's own model call (no extra call), only ones
   * naming tables and columns the person's context showed. Also kept on the answer message's
   * `response_metadata.quarry_suggestions`, so a reload shows the same buttons.
   */
  | { type: "suggestions"; questions: string[] }
  /**
   * The team's definitions the answer's SQL used: glossary terms (authored or imported from dbt or
   * LookML) whose aggregates the SQL that ran contains. Also kept on the answer message's
   * `response_metadata.quarry_definitions`, so a reload names them too.
   */
  | { type: "definitions"; definitions: DefinitionUse[] }
  /**
   * How the answer was computed, for a person who does not read SQL: sent before the answer of a
   * turn that ran SQL, and kept on the answer message's `response_metadata.quarry_computed`.
   */
  | { type: "computed"; computed: ComputedFacts }
  /** An investigation's step started or ended (docs/investigations.md). */
  | InvestigationStepEvent
  /** An investigation's report, its numbers filled in from cited result cells. */
  | InvestigationReportEvent;

/** What the planner states beside a query (checked against its SQL before it is shown). */
export interface StatedFacts {
  /** The team's terms the query computes, as the context names them. */
  definitions?: string[];
  /** Each filter: a column and the values it keeps. */
  filters?: { column: string; values: string[] }[];
  /** The period the query covers (`from` inclusive, `to` as the SQL bounds it), ISO dates. */
  timeRange?: { column?: string; from?: string; to?: string };
  grain?: "day" | "week" | "month" | "quarter" | "year";
  /** What a reader should know: a currency or unit, values left out. */
  caveats?: string[];
}

/** "How this was computed": the facts of an answer that ran SQL. */
export interface ComputedFacts {
  /**
   * `verified`: every query is a verified query of the team (`by: "verified_query"`, named by its
   * question) or computes only approved definitions (`by: "definitions"`); `written`: the model wrote
   * the SQL for this question, and nobody on the data team has checked it.
   */
  verification:
    { status: "verified"; by: "verified_query" | "definitions"; names: string[] } | { status: "written" };
  /** The team's definitions the SQL used (as the `definitions` event names them). */
  definitions: DefinitionUse[];
  /** The tables read. */
  tables: string[];
  filters: { column: string; values: string[] }[];
  timeRange?: StatedFacts["timeRange"];
  grain?: StatedFacts["grain"];
  /** Rows cut, and the planner's caveats (a currency, values left out). */
  caveats: string[];
  /** The SQL that ran, in order (what "Ask the data team to verify" proposes). */
  sql: string[];
}

/** A definition an answer used, and where it was written. */
export interface DefinitionUse {
  /** The term as the glossary names it ("food revenue"). */
  name: string;
  /** Where it came from: a context file written in Quarry, or an import. */
  source: "authored" | "dbt" | "lookml";
  /** The file it was written in (a context file, a dbt YAML, a LookML view), when known. */
  file?: string;
  /**
   * Whether the team stands behind it in Quarry: true for a context file's term (committed by the
   * team) and for an imported one an admin applied from the admin page's review; false for an
   * import no admin reviewed in Quarry (a committed import file, or one pushed with `"apply": true`).
   */
  approved: boolean;
}

/**
 * `GET /first-screen`: what an empty conversation offers — questions to start with (the authored
 * context's verified queries marked `starter: true`, else the team's most asked questions) and the
 * datasets Quarry can answer about, with their tables.
 */
export interface FirstScreen {
  starters: string[];
  /** Where the starters come from: the context files, or what the team asked most. */
  startersFrom: "context" | "team" | "none";
  datasets: { name: string; tables: string[] }[];
}

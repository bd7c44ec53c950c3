/**
 * Custom stream events (LangGraph `custom` stream mode, written through the graph's stream writer).
 * The web client imports these types (type-only), so they are the contract between the agent and
 * the page: phases, the SQL about to run, results, retries and usage.
 */
import type { ColumnInfo, Row, WarehouseErrorCategory } from "../tools/types";

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

export type QuarryEvent =
  | { type: "phase"; phase: Phase; detail?: string }
  /** The SQL about to run, after its dry run. */
  | { type: "sql"; toolCallId: string; sql: string; estimatedBytes: number; attempt: number }
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
      truncated: boolean;
      bytesProcessed: number;
      bytesBilled: number;
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
  | { type: "usage"; turn: Usage; thread: Usage };

/**
 * What the page shows of one tool call of a turn: its SQL, status and rows. Defined here, beside
 * the card that shows it; the conversation (`chat/`) builds these from the stream and the history.
 */
import type { QueryResult, WarehouseErrorCategory } from "@quarry/functions/contract";

/** A query's rows and costs, enough for the table, chart and CSV (the server's QueryResult, trimmed). */
export type ResultView = Pick<
  QueryResult,
  "columns" | "rows" | "totalRows" | "truncated" | "bytesProcessed" | "bytesBilled" | "cacheHit"
> &
  Partial<Pick<QueryResult, "durationMs" | "totalRowsAtLeast" | "bytesHidden">>;

/** One tool call of a turn: a query (with its SQL) or a schema look-up that failed. */
export interface QueryView {
  id: string;
  tool: string;
  sql?: string;
  attempt?: number;
  estimatedBytes?: number;
  /** The estimate is unknown (row-level security hides bytes), not 0. */
  estimateHidden?: boolean;
  result?: ResultView;
  error?: { category: WarehouseErrorCategory | string; message: string };
  status: "running" | "done" | "failed";
}

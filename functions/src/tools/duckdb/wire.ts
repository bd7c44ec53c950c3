/**
 * The messages between the function and its DuckDB worker processes (pool.ts ↔ worker.ts).
 * Everything crossing is plain data: a query context travels without its signal and callback
 * (the worker makes its own, and reports the estimate back as a message).
 */
import type { DuckDbWarehouseOptions } from "./warehouse";
import type { DryRunResult, QueryContext } from "../types";
import type { WireError } from "../wire-error";
import type { UploadRef } from "../uploads/types";

export type WireContext = Omit<QueryContext, "signal" | "onEstimate">;

/** A call without its id (the pool numbers it). */
export type WorkerRequest = WorkerCall extends infer C
  ? C extends WorkerCall
    ? Omit<C, "id">
    : never
  : never;

export type WorkerCall =
  | { id: number; op: "open"; cfg: unknown; options: DuckDbWarehouseOptions }
  | { id: number; op: "listTables"; uploads?: UploadRef[] }
  | { id: number; op: "describeTable"; table: string; uploads?: UploadRef[] }
  | { id: number; op: "columnValues"; table: string; column: string; limit: number; uploads?: UploadRef[] }
  | { id: number; op: "dryRun" | "query"; sql: string; ctx: WireContext }
  | { id: number; op: "cancel" }
  | { id: number; op: "close" };

export type WorkerReply =
  | { id: number; kind: "result"; value: unknown }
  | { id: number; kind: "error"; error: WireError }
  | { id: number; kind: "estimate"; dry: DryRunResult };

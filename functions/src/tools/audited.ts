/**
 * A warehouse whose every query is reported, ran or not: the audit log's source. The report says
 * who asked (from the query context), the SQL, how it ended (ok, error, or refused by a check —
 * scope, budget, quota, a write), bytes billed, the job and its duration.
 */
import { stripSqlWrapping } from "./policy";
import {
  WarehouseError,
  type Caller,
  type QueryContext,
  type QueryRecord,
  type Warehouse,
  type WarehouseErrorCategory,
} from "./types";

/** Categories that mean a check refused the query before it ran. */
const REFUSALS: ReadonlySet<WarehouseErrorCategory> = new Set([
  "refused",
  "budget",
  "bytes_limit",
  "access_denied",
  "bad_input",
]);

export function auditedWarehouse(inner: Warehouse, onQuery: (record: QueryRecord) => void): Warehouse {
  const report = (ctx: QueryContext, sql: string, started: number, rest: Partial<QueryRecord>) => {
    try {
      onQuery({
        userId: ctx.userId,
        userEmail: ctx.userEmail ?? null,
        threadId: ctx.threadId,
        runId: ctx.runId,
        sql,
        outcome: "ok",
        bytesBilled: 0,
        durationMs: Date.now() - started,
        ...(ctx.via ? { via: ctx.via } : {}),
        ...(ctx.scheduleId ? { scheduled: true as const, scheduleId: ctx.scheduleId } : {}),
        ...(ctx.jobId ? { auditKey: ctx.jobId } : {}),
        ...rest,
      });
    } catch {
      /* the audit sink reports its own failures; a query's answer never depends on it */
    }
  };
  return {
    dialect: inner.dialect,
    dialectNote: inner.dialectNote,
    listTables: (caller) => inner.listTables(caller),
    describeTable: (table, caller) => inner.describeTable(table, caller),
    ...(inner.columnValues
      ? {
          columnValues: (table: string, column: string, limit: number, caller?: Caller) =>
            inner.columnValues!(table, column, limit, caller),
        }
      : {}),
    dryRun: (sql, ctx) => inner.dryRun(sql, ctx),
    close: () => inner.close(),
    async query(sql: string, ctx: QueryContext) {
      const started = Date.now();
      let estimatedBytes: number | undefined;
      const withEstimate: QueryContext = {
        ...ctx,
        onEstimate: (e) => {
          estimatedBytes = e.estimatedBytes;
          ctx.onEstimate?.(e);
        },
      };
      try {
        const result = await inner.query(sql, withEstimate);
        report(ctx, result.sql, started, {
          bytesBilled: result.bytesBilled,
          ...(estimatedBytes !== undefined ? { estimatedBytes } : {}),
          ...(result.jobId ? { jobId: result.jobId } : {}),
        });
        return result;
      } catch (err) {
        const category = err instanceof WarehouseError ? err.category : "internal";
        const outside = err instanceof WarehouseError ? err.outOfScope : undefined;
        // The statement as the engine saw it (a Markdown fence and trailing semicolons stripped).
        report(ctx, typeof sql === "string" ? stripSqlWrapping(sql) : String(sql), started, {
          outcome: outside || REFUSALS.has(category) ? "refused" : "error",
          // A scope refusal reads like "not found" to the model; the audit log says what it was.
          error: outside
            ? { category: "out_of_scope", message: `Outside the person's data scope: ${outside.join(", ")}.` }
            : { category, message: (err as Error).message },
          ...(estimatedBytes !== undefined ? { estimatedBytes } : {}),
        });
        throw err;
      }
    },
  };
}

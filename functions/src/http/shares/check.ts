/**
 * Whether a person's data scope covers a shared conversation — all of it, or it is not theirs to
 * see (docs/access.md#shared-conversations). Two fences:
 * 1. Every query the conversation ran passes the warehouse's dry run as the viewer, in their scope
 *    (the query gate's own checks: tables named, tables read with views resolved, no other
 *    conversation's uploads). A query that failed for its owner too may fail again, but only the
 *    same way with every table in scope: then its failure is its own SQL's, not the scope's.
 * 2. No table of the warehouse outside the viewer's scope is named anywhere in what is shown:
 *    questions, SQL, results, error messages, answers and what they carry.
 */
import { FULL_SCOPE, type Scope } from "../../tools/scope";
import type { QueryContext, Warehouse } from "../../tools/types";
import { queriesOf, tableNamedOutside } from "./transcript";

type DryRun = Warehouse["dryRun"];

/** Who looks at the conversation, with the scope their runs would get. */
export interface Viewer {
  uid: string;
  email: string | null;
  scope: Scope;
}

export interface CoverInput {
  threadId: string;
  shareId: string;
  /** The shared transcript (`sharedTranscript`) and anything else shown with it (the summary). */
  transcript: readonly Record<string, unknown>[];
  also?: readonly unknown[];
  /** The warehouse's tables (`dataset.table` ids): what fence 2 looks for. */
  tableIds: readonly string[];
}

/** How a dry run ended: "ok", or the error's category and words. */
async function outcome(dryRun: DryRun, sql: string, ctx: QueryContext): Promise<string> {
  try {
    await dryRun(sql, ctx);
    return "ok";
  } catch (err) {
    const e = err as { category?: unknown; message?: unknown };
    return `${String(e.category ?? "error")}: ${String(e.message ?? err)}`;
  }
}

/**
 * True when `viewer` may see the whole conversation. Without a dry run (a graph built with tools
 * given directly) nothing can be checked: false, it fails closed.
 */
export async function scopeCovers(
  dryRun: DryRun | undefined,
  viewer: Viewer,
  input: CoverInput,
): Promise<boolean> {
  if (tableNamedOutside([input.transcript, input.also ?? []], input.tableIds, viewer.scope)) return false;
  const queries = queriesOf(input.transcript);
  if (!queries.length) return true;
  if (!dryRun) return false;
  const ctx = (scope: Scope): QueryContext => ({
    userId: viewer.uid,
    userEmail: viewer.email,
    threadId: input.threadId,
    runId: `share-${input.shareId}`,
    bytesBilledSoFar: 0,
    scope,
  });
  const checks = await Promise.all(
    queries.map(async (q) => {
      const seen = await outcome(dryRun, q.sql, ctx(viewer.scope));
      if (seen === "ok") return true;
      // A query that ran for its owner must run for the viewer; one that failed may fail alike.
      if (q.ran) return false;
      return seen === (await outcome(dryRun, q.sql, ctx(FULL_SCOPE)));
    }),
  );
  return checks.every(Boolean);
}

/**
 * An imported layer checked against the warehouse before it is used: every compiled metric goes
 * through the warehouse's dry run (BigQuery's costs nothing, DuckDB's reads nothing). A metric
 * whose SQL fails keeps its definition but loses its SQL — it never reaches a prompt as a query —
 * and the failure is reported.
 */
import { FULL_SCOPE } from "../../tools/scope";
import type { QueryContext, TableSchema, Warehouse } from "../../tools/types";
import type { ImportedLayer } from "./types";

const CHECK: QueryContext = {
  userId: "context-import",
  threadId: "context-import",
  runId: "context-import",
  bytesBilledSoFar: 0,
  // The deployment's own check: the whole allowed data, as for the context files.
  scope: FULL_SCOPE,
};

/**
 * The warehouse's tables (those `keep` picks) with their columns: what an import is matched against.
 * Here, not in project.ts, so the function's start-up (context/index.ts) loads no import reader.
 */
export async function warehouseTables(
  warehouse: Warehouse,
  keep: (id: string) => boolean = () => true,
): Promise<TableSchema[]> {
  const out: TableSchema[] = [];
  for (const t of await warehouse.listTables()) if (keep(t.id)) out.push(await warehouse.describeTable(t.id));
  return out;
}

/** Each item whose SQL fails the dry run, changed by `failed` (given the reason); the rest as they are. */
async function dryRunEach<T extends { sql?: string }>(
  items: readonly T[],
  warehouse: Warehouse,
  failed: (item: T, reason: string) => T,
): Promise<T[]> {
  const out: T[] = [];
  for (const item of items) {
    try {
      if (item.sql) await warehouse.dryRun(item.sql, CHECK);
      out.push(item);
    } catch (err) {
      out.push(failed(item, `its SQL does not pass the warehouse's dry run: ${(err as Error).message}`));
    }
  }
  return out;
}

/** Dry-runs every metric's and saved query's SQL; returns the layer with failing SQL taken out and said. */
export async function dryRunMetrics(layer: ImportedLayer, warehouse: Warehouse): Promise<ImportedLayer> {
  const notices = [...layer.notices];
  const metrics = await dryRunEach(layer.metrics, warehouse, (m, reason) => {
    notices.push({ item: m.origin.id, message: reason });
    const { sql, ...rest } = m;
    return { ...rest, noSql: reason, failedSql: sql };
  });
  const queries = await dryRunEach(layer.queries, warehouse, (q, reason) => {
    const { sql: _dropped, ...rest } = q;
    return { ...rest, noSql: reason };
  });
  return { ...layer, metrics, queries, notices };
}

/**
 * The layer as the warehouse is now (drift since the import): tables and columns it no longer has
 * are left out, and so is a metric reading a table it no longer has — none of them reaches a prompt.
 */
export function withinWarehouse(layer: ImportedLayer, schemas: readonly TableSchema[]): ImportedLayer {
  const have = new Map(
    schemas.map((s) => [s.id.toLowerCase(), new Set(s.columns.map((c) => c.name.toLowerCase()))]),
  );
  const tables = layer.tables
    .filter((t) => have.has(t.table.toLowerCase()))
    .map((t) => ({
      ...t,
      columns: t.columns.filter((c) => have.get(t.table.toLowerCase())!.has(c.name.toLowerCase())),
    }));
  const joinOk = (e: { table: string; column: string }) =>
    have.get(e.table.toLowerCase())?.has(e.column.toLowerCase());
  return {
    ...layer,
    tables,
    joins: layer.joins.filter((j) => joinOk(j.from) && joinOk(j.to)),
    metrics: layer.metrics.filter((m) => m.tables.every((t) => have.has(t.toLowerCase()))),
  };
}

/**
 * What a re-import changes against the active import: tables and columns added, removed or
 * renamed (one column gone and one come in the same table, with the same description), table and
 * column descriptions changed, metrics added or removed, a metric's SQL or filter changed, SQL that
 * no longer passes the dry run, and joins added or removed. Printed by `--dry-run`.
 */
import type { ImportedJoin, ImportedLayer, ImportedMetric, ImportedTable } from "./types";

export interface ImportChange {
  kind:
    | "table added"
    | "table removed"
    | "column added"
    | "column removed"
    | "column renamed"
    | "description changed"
    | "metric added"
    | "metric removed"
    | "metric changed"
    | "metric broken"
    | "join added"
    | "join removed";
  item: string;
  detail?: string;
}

const joinKey = (j: ImportedJoin) => `${j.from.table}.${j.from.column} → ${j.to.table}.${j.to.column}`;

function tableChanges(before: ImportedTable, after: ImportedTable): ImportChange[] {
  const out: ImportChange[] = [];
  if ((before.description ?? "") !== (after.description ?? "")) {
    out.push({ kind: "description changed", item: after.table, detail: after.description });
  }
  const was = new Map(before.columns.map((c) => [c.name, c]));
  const now = new Map(after.columns.map((c) => [c.name, c]));
  const gone = before.columns.filter((c) => !now.has(c.name));
  const come = after.columns.filter((c) => !was.has(c.name));
  for (const g of [...gone]) {
    const r = come.find((c) => (c.description ?? "") === (g.description ?? "") && c.description);
    if (!r) continue;
    out.push({ kind: "column renamed", item: `${after.table}.${g.name}`, detail: `now ${r.name}` });
    gone.splice(gone.indexOf(g), 1);
    come.splice(come.indexOf(r), 1);
  }
  for (const c of gone) out.push({ kind: "column removed", item: `${after.table}.${c.name}` });
  for (const c of come) out.push({ kind: "column added", item: `${after.table}.${c.name}` });
  for (const [name, c] of now) {
    const b = was.get(name);
    if (b && (b.description ?? "") !== (c.description ?? "")) {
      out.push({ kind: "description changed", item: `${after.table}.${name}`, detail: c.description });
    }
  }
  return out;
}

function metricChanges(before: ImportedMetric, after: ImportedMetric): ImportChange[] {
  if (before.sql && !after.sql && after.failedSql) {
    return [{ kind: "metric broken", item: after.name, detail: after.noSql }];
  }
  if ((before.sql ?? "") !== (after.sql ?? "") || (before.description ?? "") !== (after.description ?? "")) {
    return [{ kind: "metric changed", item: after.name, detail: after.sql ?? after.noSql }];
  }
  return [];
}

/** The changes from `before` (the active import, if any) to `after`. */
export function diffImports(before: ImportedLayer | undefined, after: ImportedLayer): ImportChange[] {
  const out: ImportChange[] = [];
  const tablesBefore = new Map((before?.tables ?? []).map((t) => [t.table, t]));
  const tablesAfter = new Map(after.tables.map((t) => [t.table, t]));
  for (const [id, t] of tablesAfter) {
    const b = tablesBefore.get(id);
    if (!b) out.push({ kind: "table added", item: id });
    else out.push(...tableChanges(b, t));
  }
  for (const id of tablesBefore.keys())
    if (!tablesAfter.has(id)) out.push({ kind: "table removed", item: id });
  const metricsBefore = new Map((before?.metrics ?? []).map((m) => [m.name, m]));
  const metricsAfter = new Map(after.metrics.map((m) => [m.name, m]));
  for (const [name, m] of metricsAfter) {
    const b = metricsBefore.get(name);
    if (!b) out.push({ kind: "metric added", item: name, detail: m.sql ?? m.noSql });
    else out.push(...metricChanges(b, m));
  }
  for (const name of metricsBefore.keys())
    if (!metricsAfter.has(name)) out.push({ kind: "metric removed", item: name });
  const joinsBefore = new Set((before?.joins ?? []).map(joinKey));
  const joinsAfter = new Set(after.joins.map(joinKey));
  for (const j of joinsAfter) if (!joinsBefore.has(j)) out.push({ kind: "join added", item: j });
  for (const j of joinsBefore) if (!joinsAfter.has(j)) out.push({ kind: "join removed", item: j });
  return out;
}

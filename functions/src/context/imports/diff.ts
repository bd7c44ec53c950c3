/**
 * What a re-import changes against the active import: tables and columns added, removed or
 * renamed (one column gone and one come in the same table, with the same description), table and
 * column descriptions changed, metrics added or removed, a metric's SQL or filter changed, SQL that
 * no longer passes the dry run, joins and table rules added or removed. Printed by `--dry-run`, shown
 * in the admin page's review, where each change can be applied on its own (apply.ts): each says
 * what it touches (`table`, `column`, `metric`, `join`, `rule`) and has an `id` (kind and item).
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
    | "join removed"
    | "rule added"
    | "rule removed";
  /** `kind:item`: what the admin page sends back to apply this change alone. */
  id: string;
  item: string;
  detail?: string;
  /** What the change touches. */
  table?: string;
  column?: string;
  /** For a renamed column: its new name. */
  renamedTo?: string;
  metric?: string;
  join?: string;
  rule?: string;
}

type Change = Omit<ImportChange, "id">;
const withId = (c: Change): ImportChange => ({ id: `${c.kind}:${c.item}`, ...c });

export const joinKey = (j: ImportedJoin) => `${j.from.table}.${j.from.column} → ${j.to.table}.${j.to.column}`;

function tableChanges(before: ImportedTable, after: ImportedTable): Change[] {
  const out: Change[] = [];
  const table = after.table;
  if ((before.description ?? "") !== (after.description ?? "")) {
    out.push({ kind: "description changed", item: table, detail: after.description, table });
  }
  const was = new Map(before.columns.map((c) => [c.name, c]));
  const now = new Map(after.columns.map((c) => [c.name, c]));
  const gone = before.columns.filter((c) => !now.has(c.name));
  const come = after.columns.filter((c) => !was.has(c.name));
  for (const g of [...gone]) {
    const r = come.find((c) => (c.description ?? "") === (g.description ?? "") && c.description);
    if (!r) continue;
    out.push({
      kind: "column renamed",
      item: `${table}.${g.name}`,
      detail: `now ${r.name}`,
      table,
      column: g.name,
      renamedTo: r.name,
    });
    gone.splice(gone.indexOf(g), 1);
    come.splice(come.indexOf(r), 1);
  }
  for (const c of gone)
    out.push({ kind: "column removed", item: `${table}.${c.name}`, table, column: c.name });
  for (const c of come) out.push({ kind: "column added", item: `${table}.${c.name}`, table, column: c.name });
  for (const [name, c] of now) {
    const b = was.get(name);
    if (b && (b.description ?? "") !== (c.description ?? "")) {
      out.push({
        kind: "description changed",
        item: `${table}.${name}`,
        detail: c.description,
        table,
        column: name,
      });
    }
  }
  return out;
}

function metricChanges(before: ImportedMetric, after: ImportedMetric): Change[] {
  const metric = after.name;
  if (before.sql && !after.sql && after.failedSql) {
    return [{ kind: "metric broken", item: metric, detail: after.noSql, metric }];
  }
  if ((before.sql ?? "") !== (after.sql ?? "")) {
    return [{ kind: "metric changed", item: metric, detail: after.sql ?? after.noSql, metric }];
  }
  if ((before.description ?? "") !== (after.description ?? "")) {
    const detail = `described now as: ${after.description ?? "(no description)"}`;
    return [{ kind: "metric changed", item: metric, detail, metric }];
  }
  return [];
}

/** The changes from `before` (the active import, if any) to `after`. */
export function diffImports(before: ImportedLayer | undefined, after: ImportedLayer): ImportChange[] {
  const out: Change[] = [];
  const tablesBefore = new Map((before?.tables ?? []).map((t) => [t.table, t]));
  const tablesAfter = new Map(after.tables.map((t) => [t.table, t]));
  for (const [id, t] of tablesAfter) {
    const b = tablesBefore.get(id);
    if (!b) out.push({ kind: "table added", item: id, table: id });
    else out.push(...tableChanges(b, t));
  }
  for (const id of tablesBefore.keys())
    if (!tablesAfter.has(id)) out.push({ kind: "table removed", item: id, table: id });
  const metricsBefore = new Map((before?.metrics ?? []).map((m) => [m.name, m]));
  const metricsAfter = new Map(after.metrics.map((m) => [m.name, m]));
  for (const [name, m] of metricsAfter) {
    const b = metricsBefore.get(name);
    if (!b) out.push({ kind: "metric added", item: name, detail: m.sql ?? m.noSql, metric: name });
    else out.push(...metricChanges(b, m));
  }
  for (const name of metricsBefore.keys())
    if (!metricsAfter.has(name)) out.push({ kind: "metric removed", item: name, metric: name });
  const joinsBefore = new Set((before?.joins ?? []).map(joinKey));
  const joinsAfter = new Set(after.joins.map(joinKey));
  for (const j of joinsAfter) if (!joinsBefore.has(j)) out.push({ kind: "join added", item: j, join: j });
  for (const j of joinsBefore) if (!joinsAfter.has(j)) out.push({ kind: "join removed", item: j, join: j });
  const rulesBefore = new Set(before?.rules ?? []);
  const rulesAfter = new Set(after.rules ?? []);
  for (const r of rulesAfter) if (!rulesBefore.has(r)) out.push({ kind: "rule added", item: r, rule: r });
  for (const r of rulesBefore) if (!rulesAfter.has(r)) out.push({ kind: "rule removed", item: r, rule: r });
  return out.map(withId);
}

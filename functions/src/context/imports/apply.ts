/**
 * A reviewed re-import applied change by change: the admin page shows the diff (diff.ts) and an
 * admin applies it whole or picks items. The active layer then takes the picked changes from the
 * pushed one and keeps the rest as it was, so what was not picked stays reviewable: the diff of
 * the pushed layer against the new active one is exactly the changes left.
 */
import { diffImports, joinKey, type ImportChange } from "./diff";
import type { ImportedColumn, ImportedJoin, ImportedLayer, ImportedMetric, ImportedTable } from "./types";

/** The layer an empty project starts from: the pushed one's identity, nothing in it. */
function emptyLike(after: ImportedLayer): ImportedLayer {
  return { ...after, tables: [], joins: [], metrics: [], queries: [], notices: [], rules: [] };
}

const clone = <T>(v: T): T => structuredClone(v);

/**
 * `before` with the changes of `ids` (ImportChange ids) from `after`; every change when `ids` is
 * undefined. An id that is not a change of this diff is refused: the review was of another push.
 */
export function applyChanges(
  before: ImportedLayer | undefined,
  after: ImportedLayer,
  ids?: readonly string[],
): { layer: ImportedLayer; applied: ImportChange[]; left: ImportChange[] } {
  const changes = diffImports(before, after);
  const known = new Set(changes.map((c) => c.id));
  const unknown = (ids ?? []).filter((id) => !known.has(id));
  if (unknown.length) {
    throw new StaleReviewError(
      `${unknown.map((u) => `"${u}"`).join(", ")} ${unknown.length === 1 ? "is" : "are"} not a change of this import: reload the review.`,
    );
  }
  const picked = ids ? changes.filter((c) => ids.includes(c.id)) : changes;
  if (picked.length === changes.length) {
    return { layer: clone(after), applied: changes, left: [] };
  }
  const base = clone(before ?? emptyLike(after));
  const into: Working = {
    tables: new Map(base.tables.map((t) => [t.table, t])),
    metrics: new Map(base.metrics.map((m) => [m.name, m])),
    joins: new Map(base.joins.map((j) => [joinKey(j), j])),
    rules: new Set(base.rules ?? []),
  };
  const from: Pushed = {
    tables: new Map(after.tables.map((t) => [t.table, t])),
    metrics: new Map(after.metrics.map((m) => [m.name, m])),
    joins: new Map(after.joins.map((j) => [joinKey(j), j])),
  };
  for (const c of picked) applyOne(into, from, c);
  const { tables, metrics, joins, rules } = into;
  const layer: ImportedLayer = {
    ...base,
    generatedAt: after.generatedAt,
    // Part of a push is not that push: a later push of the same artifacts is still a change.
    checksum: `partial:${after.checksum}`,
    tables: [...tables.values()],
    joins: [...joins.values()],
    metrics: [...metrics.values()],
    queries: clone(after.queries),
    notices: clone(after.notices),
    rules: [...rules],
  };
  return { layer, applied: picked, left: diffImports(layer, after) };
}

/** The active layer's parts being changed. */
interface Working {
  tables: Map<string, ImportedTable>;
  metrics: Map<string, ImportedMetric>;
  joins: Map<string, ImportedJoin>;
  rules: Set<string>;
}

/** The pushed layer's parts, by what changes name them. */
type Pushed = Omit<Working, "rules">;

const column = (t: ImportedTable | undefined, name: string | undefined): ImportedColumn | undefined =>
  t?.columns.find((c) => c.name === name);

/** One change of the diff made to `into`, taken from `from`. */
function applyOne(into: Working, from: Pushed, c: ImportChange): void {
  const t = c.table ? into.tables.get(c.table) : undefined;
  const pushed = c.table ? from.tables.get(c.table) : undefined;
  switch (c.kind) {
    case "table added":
      if (pushed) into.tables.set(pushed.table, clone(pushed));
      break;
    case "table removed":
      into.tables.delete(c.table!);
      break;
    case "column added": {
      const col = column(pushed, c.column);
      if (t && col) t.columns.push(clone(col));
      break;
    }
    case "column removed":
      if (t) t.columns = t.columns.filter((col) => col.name !== c.column);
      break;
    case "column renamed": {
      const col = column(pushed, c.renamedTo);
      if (t && col) t.columns = [...t.columns.filter((x) => x.name !== c.column), clone(col)];
      break;
    }
    case "description changed":
      if (t && c.column) {
        const col = column(t, c.column);
        if (col) col.description = column(pushed, c.column)?.description;
      } else if (t) t.description = pushed?.description;
      break;
    case "metric added":
    case "metric changed":
    case "metric broken":
      into.metrics.set(c.metric!, clone(from.metrics.get(c.metric!)!));
      break;
    case "metric removed":
      into.metrics.delete(c.metric!);
      break;
    case "join added":
      into.joins.set(c.join!, clone(from.joins.get(c.join!)!));
      break;
    case "join removed":
      into.joins.delete(c.join!);
      break;
    case "rule added":
      into.rules.add(c.rule!);
      break;
    case "rule removed":
      into.rules.delete(c.rule!);
      break;
  }
}

/** The review being applied is not of the import pushed now (another push came in between). */
export class StaleReviewError extends Error {}

/**
 * Joins for schema linking: which tables connect through shared key columns (`*_id`), which table
 * a key belongs to (`customer_id` is `customers`' own key and a reference everywhere else), how far
 * a table is from a chosen set, and the shortest chain of tables that joins two parts of it.
 */
import type { Catalog, CatalogTable } from "../catalog";

const keySets = new WeakMap<CatalogTable, Set<string>>();

/**
 * A table's key columns (`*_id`, `id`), lower case, and the keys of the joins declared on it
 * (`@<table>.<column>`, catalog.ts): a declared join connects its two tables whatever their
 * columns are called (`order_items.user_id → users.id`).
 */
function keysOf(t: CatalogTable): Set<string> {
  let keys = keySets.get(t);
  if (!keys) {
    keys = new Set(t.columns.map((c) => c.name.toLowerCase()).filter((n) => n.endsWith("_id") || n === "id"));
    for (const d of t.declared ?? []) keys.add(d.key);
    keySets.set(t, keys);
  }
  return keys;
}

const isDeclared = (key: string) => key.startsWith("@");

/** The column of `t` a key joins on (a declared key's own column), and the declared cardinality. */
function endOf(t: CatalogTable, key: string): { column: string; cardinality?: string } {
  if (!isDeclared(key)) return { column: key };
  const d = t.declared?.find((x) => x.key === key);
  return { column: d?.column ?? key, cardinality: d?.cardinality };
}

/** `a.b.c` → `a.b` (called for every table several times a question: no arrays). */
export const datasetOf = (id: string) => {
  const dot = id.lastIndexOf(".");
  return dot < 0 ? "" : id.slice(0, dot);
};

const byIds = new WeakMap<Catalog, Map<string, CatalogTable>>();

/** Table id → table, per catalog (built once per catalog object; the catalog is never changed). */
export function tablesById(catalog: Catalog): Map<string, CatalogTable> {
  let byId = byIds.get(catalog);
  if (!byId) {
    byId = new Map(catalog.tables.map((t) => [t.id, t]));
    byIds.set(catalog, byId);
  }
  return byId;
}

export function connects(a: CatalogTable, b: CatalogTable): boolean {
  const ka = keysOf(a);
  for (const k of keysOf(b)) if (k !== "id" && ka.has(k)) return true;
  return false;
}

const singular = (w: string) =>
  w.endsWith("ies") ? `${w.slice(0, -3)}y` : w.endsWith("s") && !w.endsWith("ss") ? w.slice(0, -1) : w;

/** True when `key` is the table's own key (`orders.order_id`, `web_events.event_id`), not a reference. */
export function owns(t: CatalogTable, key: string): boolean {
  if (isDeclared(key)) return key.startsWith(`@${t.id.toLowerCase()}.`);
  const name = t.id.split(".").pop()!.toLowerCase();
  return key === `${singular(name)}_id` || key === `${singular(name.split("_").pop()!)}_id`;
}

/** The keys a table refers to (it has them, another table owns them). */
export function references(t: CatalogTable): string[] {
  return [...keysOf(t)].filter((k) => k !== "id" && !owns(t, k));
}

/**
 * How many joins separate a table from the chosen ones (0 when chosen, 1 when it shares a key with
 * one, 2 through one table of the same dataset in between; Infinity beyond), as a function over
 * candidates. Asked from the catalog's key index (`around`), so its cost does not grow with the
 * hundreds of tables that share a common key such as `customer_id`.
 */
export function joinDistance(catalog: Catalog, chosen: CatalogTable[]): (t: CatalogTable) => number {
  const { around } = keyIndex(catalog);
  const ids = new Set(chosen.map((c) => c.id));
  const chosenKeys = new Set<string>();
  for (const c of chosen) for (const k of keysOf(c)) if (k !== "id") chosenKeys.add(k);
  return (t) => {
    if (ids.has(t.id)) return 0;
    const keys = keysOf(t);
    for (const k of keys) if (k !== "id" && chosenKeys.has(k)) return 1;
    // Two joins: t shares a key with a table of its dataset that shares one with a chosen table.
    const ds = datasetOf(t.id);
    for (const c of chosenKeys) {
      const between = around.get(c)?.get(ds);
      if (between) for (const k of keys) if (k !== "id" && between.has(k)) return 2;
    }
    return Infinity;
  };
}

/**
 * The key joins among the chosen tables, each reference to the table that owns the key
 * (`a.k = b.k`); a declared join with its own columns and cardinality (`a.x = b.y (many to one)`),
 * and a name-only match left out where a declared join already joins the same two tables.
 */
export function joinLines(catalog: Catalog, chosen: string[]): string[] {
  const byId = tablesById(catalog);
  const tables = chosen.map((id) => byId.get(id)!);
  const declared: string[] = [];
  const guessed: [CatalogTable, CatalogTable, string][] = [];
  const pairs = new Set<string>();
  for (const a of tables) {
    for (const k of references(a)) {
      const b = tables.find((t) => t !== a && owns(t, k) && keysOf(t).has(k));
      if (!b) continue;
      if (!isDeclared(k)) {
        guessed.push([a, b, `${a.id}.${k} = ${b.id}.${k}`]);
        continue;
      }
      const from = endOf(a, k);
      const card = from.cardinality ? ` (${from.cardinality.replaceAll("_", " ")})` : "";
      declared.push(`${a.id}.${from.column} = ${b.id}.${endOf(b, k).column}${card}`);
      pairs.add(`${a.id}|${b.id}`).add(`${b.id}|${a.id}`);
    }
  }
  return [
    ...declared,
    ...guessed.filter(([a, b]) => !pairs.has(`${a.id}|${b.id}`)).map(([, , line]) => line),
  ];
}

interface KeyIndex {
  /** Key column (`*_id`) → the tables that have it. */
  holders: Map<string, CatalogTable[]>;
  /** Key → dataset → the keys of that dataset's tables that have the key (one join on). */
  around: Map<string, Map<string, Set<string>>>;
}

const keyIndexes = new WeakMap<Catalog, KeyIndex>();

/** The catalog's keys: who has each, and what is one join on within a dataset (per catalog). */
function keyIndex(catalog: Catalog): KeyIndex {
  let idx = keyIndexes.get(catalog);
  if (idx) return idx;
  idx = { holders: new Map(), around: new Map() };
  for (const t of catalog.tables) {
    const ds = datasetOf(t.id);
    for (const k of keysOf(t)) {
      if (k === "id") continue;
      const list = idx.holders.get(k);
      if (list) list.push(t);
      else idx.holders.set(k, [t]);
      const byDataset = idx.around.get(k) ?? idx.around.set(k, new Map()).get(k)!;
      const keys = byDataset.get(ds) ?? byDataset.set(ds, new Set()).get(ds)!;
      for (const other of keysOf(t)) if (other !== "id") keys.add(other);
    }
  }
  keyIndexes.set(catalog, idx);
  return idx;
}

/**
 * While the chosen tables fall apart, adds the shortest chain of tables that joins two parts
 * through shared keys (up to two tables in between: `customers → orders → order_items →
 * products`), preferring tables in the chosen tables' datasets, then higher scores, then bigger.
 */
export function withBridges(catalog: Catalog, chosen: string[], scores: Map<string, number>): string[] {
  const byId = tablesById(catalog);
  const keys = keyIndex(catalog).holders;
  const out = [...chosen];
  for (let round = 0; round < 3; round++) {
    const parts = components(out.map((id) => byId.get(id)!));
    if (parts.length < 2) break;
    const datasets = new Set(out.map(datasetOf));
    const rank = (t: CatalogTable) =>
      (datasets.has(datasetOf(t.id)) ? 1e12 : 0) + (scores.get(t.id) ?? 0) * 1e6 + (t.rowCount ?? 0) / 1e3;
    const target = new Set(
      parts
        .slice(1)
        .flat()
        .map((t) => t.id),
    );
    const reached = search(parts[0], target, keys, rank);
    if (!reached) break;
    const prev = reached.prev;
    for (let id = prev.get(reached.id); id && !out.includes(id); id = prev.get(id)) out.push(id);
  }
  return out;
}

/**
 * Breadth-first from `start` to the first table of `target`, neighbours (tables sharing a key) best
 * first (those joined by a declared join before the rest), at most 3 steps; the table reached and each visited table's predecessor. Once a table's
 * neighbours are visited, every table holding its keys is, so a key is expanded once (with 700
 * tables holding `customer_id`, expanding it per table cost seconds).
 */
function search(
  start: CatalogTable[],
  target: Set<string>,
  keys: Map<string, CatalogTable[]>,
  rank: (t: CatalogTable) => number,
): { id: string; prev: Map<string, string | null> } | undefined {
  const prev = new Map<string, string | null>(start.map((t) => [t.id, null]));
  const expanded = new Set<string>();
  const ranks = new Map<CatalogTable, number>();
  const rankOf = (t: CatalogTable) => ranks.get(t) ?? ranks.set(t, rank(t)).get(t)!;
  let frontier = start;
  for (let depth = 0; depth < 3 && frontier.length; depth++) {
    const next: CatalogTable[] = [];
    for (const t of frontier) {
      // The neighbours not yet visited (visited ones are skipped anyway), best first.
      const around = new Set<CatalogTable>();
      const viaDeclared = new Set<CatalogTable>();
      for (const k of keysOf(t)) {
        if (expanded.has(k)) continue;
        for (const n of keys.get(k) ?? []) {
          if (prev.has(n.id)) continue;
          around.add(n);
          if (isDeclared(k)) viaDeclared.add(n);
        }
      }
      for (const k of keysOf(t)) expanded.add(k);
      // A table the team declared a join to comes before one that merely shares a column name.
      const score = (n: CatalogTable) => (viaDeclared.has(n) ? 1e15 : 0) + rankOf(n);
      for (const n of [...around].sort((x, y) => score(y) - score(x))) {
        prev.set(n.id, t.id);
        if (target.has(n.id)) return { id: n.id, prev };
        next.push(n);
      }
    }
    frontier = next;
  }
  return undefined;
}

function components(tables: CatalogTable[]): CatalogTable[][] {
  const left = [...tables];
  const parts: CatalogTable[][] = [];
  while (left.length) {
    const part = [left.shift()!];
    for (let i = 0; i < part.length; i++) {
      for (let j = left.length - 1; j >= 0; j--) {
        if (connects(part[i], left[j])) part.push(...left.splice(j, 1));
      }
    }
    parts.push(part);
  }
  return parts;
}

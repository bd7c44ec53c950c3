/**
 * Picking: which of the scored tables the planner gets — the core (best first, one per shape, the
 * home dataset first), look-alikes that join preferred over ones that do not, and the best table
 * for a value or a concept among candidates.
 */
import type { Catalog, CatalogTable } from "../catalog";
import { shapeOf, type Scores } from "./datasets";
import type { Evidence, ValueMatch } from "./evidence";
import { datasetOf, joinDistance, tablesById } from "./joins";

/** Home first, then score. */
const rankIn = (home: Set<string>, scores: Scores, id: string) =>
  (home.has(datasetOf(id)) ? 1e9 : 0) + (scores.get(id) ?? 0);

/**
 * The core: the best tables, one per shape, at most `max`; a table outside the home datasets only
 * when it scores above the home's best.
 */
export function core(
  byId: Map<string, CatalogTable>,
  ranked: [string, number][],
  home: Set<string>,
  max: number,
): string[] {
  const cut = (ranked[0]?.[1] ?? 0) * 0.25;
  const homeBest = ranked.find(([id]) => home.has(datasetOf(id)))?.[1] ?? 0;
  const shape = (id: string) => shapeOf(byId.get(id)!);
  const shapes = new Set<string>();
  const chosen: string[] = [];
  for (const [id, sc] of ranked) {
    if (sc < cut || chosen.length >= max) break;
    if (!home.has(datasetOf(id)) && sc <= homeBest) continue;
    if (shapes.has(shape(id))) continue;
    shapes.add(shape(id));
    chosen.push(id);
  }
  return chosen;
}

/** A table's own name, lower case: `shop.orders` → `orders`. */
const nameOf = (id: string) => id.slice(id.lastIndexOf(".") + 1).toLowerCase();

const byNames = new WeakMap<Catalog, Map<string, CatalogTable[]>>();

/** Name (lower case) → the tables of that name in catalog order, per catalog. */
function tablesByName(catalog: Catalog): Map<string, CatalogTable[]> {
  let out = byNames.get(catalog);
  if (!out) {
    out = new Map();
    for (const t of catalog.tables) {
      const list = out.get(nameOf(t.id));
      if (list) list.push(t);
      else out.set(nameOf(t.id), [t]);
    }
    byNames.set(catalog, out);
  }
  return out;
}

/**
 * Of look-alikes (tables of the same name), the one that joins: a chosen table that joins none of
 * the others gives way to a table of its name that does (`b.customers` with `customer_id` for
 * `a.customers` with `client_id`, beside `orders`). Hinted tables stay.
 */
export function preferJoined(catalog: Catalog, chosen: string[], hinted: Set<string>): string[] {
  const byId = tablesById(catalog);
  const named = tablesByName(catalog);
  const out = [...chosen];
  for (let i = 0; i < out.length; i++) {
    const rest = out.filter((_, j) => j !== i).map((id) => byId.get(id)!);
    const distance = joinDistance(catalog, rest);
    if (!rest.length || hinted.has(out[i]) || distance(byId.get(out[i])!) === 1) continue;
    const alike = (named.get(nameOf(out[i])) ?? []).find((t) => !out.includes(t.id) && distance(t) === 1);
    if (alike) out[i] = alike.id;
  }
  return out;
}

/**
 * A value named in the question belongs to one table: of the tables that store it, a chosen one,
 * else the best (home first).
 */
export function bestValues(
  values: ValueMatch[],
  chosen: string[],
  home: Set<string>,
  scores: Scores,
): ValueMatch[] {
  const rank = (id: string) => (chosen.includes(id) ? 1e12 : 0) + rankIn(home, scores, id);
  const bestFor = new Map<string, ValueMatch>();
  for (const v of values) {
    const seen = bestFor.get(v.text);
    if (!seen || rank(v.table) > rank(seen.table)) bestFor.set(v.text, v);
  }
  return [...bestFor.values()];
}

/** Of the candidates, the one in a home dataset that joins the chosen tables best, then by score. */
export function bestJoined(
  catalog: Catalog,
  candidates: string[],
  chosen: string[],
  home: Set<string>,
  scores: Scores,
): string | undefined {
  const byId = tablesById(catalog);
  const distance = joinDistance(
    catalog,
    chosen.map((id) => byId.get(id)!),
  );
  const top = Math.max(1e-9, ...candidates.map((id) => scores.get(id) ?? 0));
  let best: [string, number] | undefined;
  for (const id of candidates) {
    const d = distance(byId.get(id)!);
    const place = (home.has(datasetOf(id)) ? 4 : 0) + (d === 1 ? 2 : d === 2 ? 1 : 0);
    // A look-alike that neither lives at home nor joins the chosen tables is not a resolution.
    if (!place) continue;
    const rank = place + (scores.get(id) ?? 0) / top;
    if (!best || rank > best[1]) best = [id, rank];
  }
  return best?.[0];
}

/** `table.column` whose names the question's terms match. */
export function mentionedColumns(ev: Evidence, terms: string[], catalog: Catalog): string[] {
  const out = new Set<string>();
  for (const term of terms) {
    for (const h of ev.terms.get(term) ?? []) {
      if (h.field === "column" && h.column) out.add(`${catalog.tables[h.table].id}.${h.column}`);
    }
  }
  return [...out];
}

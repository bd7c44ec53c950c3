/**
 * Widening the core by what the question names: a value no chosen table stores, a concept ("by
 * country", "signup") the core does not hold, a measure ("revenue", "units") and the fact table
 * that computes it — each resolved to the table that joins the core best, home first.
 */
import type { Catalog } from "../catalog";
import type { Scores } from "./datasets";
import { measureKinds, measures, specificity, type Evidence, type ValueMatch } from "./evidence";
import { datasetOf, joinDistance, owns, references, tablesById } from "./joins";
import { bestJoined, bestValues } from "./picking";

/** Each value the question names, when no chosen table stores it, brings the holder that joins best. */
export function withValues(
  catalog: Catalog,
  chosen: string[],
  values: ValueMatch[],
  home: Set<string>,
  scores: Scores,
): string[] {
  const out = [...chosen];
  const byId = tablesById(catalog);
  // Held by a chosen table at home or joined to the core (not by a stray look-alike added for another value).
  const holds = (id: string) =>
    out.includes(id) &&
    (home.has(datasetOf(id)) ||
      joinDistance(
        catalog,
        chosen.filter((c) => c !== id).map((c) => byId.get(c)!),
      )(byId.get(id)!) === 1);
  for (const text of new Set(values.map((v) => v.text))) {
    const same = values.filter((v) => v.text === text);
    const holders = same.map((v) => v.table);
    if (holders.some(holds)) continue;
    const best =
      bestJoined(catalog, holders, out, home, scores) ?? bestValues(same, out, home, scores)[0]?.table;
    if (best) out.push(best);
  }
  return out;
}

/**
 * Resolves each question term that names a column or a value and that no chosen table holds to
 * the table that holds it and joins best: in a home dataset, joined to the chosen tables by keys,
 * then by score (at most three such tables).
 */
export function withConcepts(
  catalog: Catalog,
  ev: Evidence,
  chosen: string[],
  terms: string[],
  home: Set<string>,
  scores: Scores,
): string[] {
  const out = [...chosen];
  let added = 0;
  for (const term of [...terms].sort((a, b) => specificity(ev, b) - specificity(ev, a))) {
    const all = ev.terms.get(term) ?? [];
    // A term that names tables (an entity: "customers") is held by a table of that name, not by
    // a key column that refers to it; any other term by a column or its values — or, at home, by
    // a column's notes (a word of a description elsewhere is too weak to bring a table).
    const named = all.filter((h) => h.field === "table");
    const columns = all.filter((h) => h.column !== undefined && h.field !== "text");
    const notes = all.filter(
      (h) => h.column !== undefined && home.has(datasetOf(catalog.tables[h.table].id)),
    );
    const hits = named.length ? named : columns.length ? columns : notes;
    if (!hits.length || added >= 3) continue;
    const holders = new Set(hits.map((h) => catalog.tables[h.table].id));
    if (out.some((id) => holders.has(id))) continue;
    // Joined to the core (the tables chosen before), not to another concept's table.
    const best = bestJoined(catalog, [...holders], chosen, home, scores);
    if (!best || out.includes(best)) continue;
    out.push(best);
    added++;
  }
  return out;
}

/**
 * A money or unit measure pulls the table of the home datasets that computes it (the most measure
 * columns of that kind, joined to the chosen tables), and a line table brings the header it
 * references when that header refers on (`order_items` → `orders` → `customers`).
 */
export function withMeasures(
  catalog: Catalog,
  chosen: string[],
  question: string,
  home: Set<string>,
  scores: Scores,
): string[] {
  const kinds = measureKinds(question);
  if (!kinds.length) return chosen;
  const out = [...chosen];
  const byId = tablesById(catalog);
  const inHome = catalog.tables.filter((t) => home.has(datasetOf(t.id)));
  for (const kind of kinds) {
    const most = Math.max(0, ...inHome.map((t) => measures(t)[kind].length));
    if (!most) continue;
    const facts = inHome.filter((t) => measures(t)[kind].length === most).map((t) => t.id);
    if (facts.some((id) => out.includes(id))) continue;
    const best = bestJoined(catalog, facts, out, home, scores);
    if (best) out.push(best);
  }
  for (const id of [...out]) {
    const t = byId.get(id)!;
    if (!home.has(datasetOf(id)) || references(t).length < 2) continue;
    for (const k of references(t)) {
      const header = inHome.find(
        (h) => h.id !== id && datasetOf(h.id) === datasetOf(id) && owns(h, k) && references(h).length > 0,
      );
      if (header && !out.includes(header.id)) out.push(header.id);
    }
  }
  return out;
}

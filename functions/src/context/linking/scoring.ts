/**
 * Scoring: how strongly each table fits a question before any is picked — BM25 over whole tables
 * (MiniSearch, fuzzy and prefix; the recent turns count half; embedding neighbours lift tables the
 * words missed), the column and value votes of `evidence.ts` weighted by specificity, the authored
 * context's hints, and priors against look-alikes (size, a copy's name).
 */
import MiniSearch from "minisearch";
import type { Catalog, CatalogTable } from "../catalog";
import { words } from "../knowledge";
import type { Scores } from "./datasets";
import { namedValues, spellings, votes, type Evidence, type ValueMatch } from "./evidence";
import type { LinkOptions } from "./types";

const split = (s: string) => s.replace(/[._]+/g, " ");

interface Indexed {
  search: MiniSearch<{ id: number; name: string; columns: string; text: string; values: string }>;
}
const indexes = new WeakMap<Catalog, Indexed>();

function indexOf(catalog: Catalog): Indexed {
  let idx = indexes.get(catalog);
  if (idx) return idx;
  const search = new MiniSearch<{ id: number; name: string; columns: string; text: string; values: string }>({
    fields: ["name", "columns", "text", "values"],
    storeFields: [],
    tokenize: (t) => words(t),
  });
  search.addAll(
    catalog.tables.map((t, id) => ({
      id,
      name: split(t.id.split(".").slice(-1)[0]),
      columns: t.columns.map((c) => split(c.name)).join(" "),
      text: [t.description ?? "", ...t.columns.map((c) => c.description ?? "")].join(" "),
      values: t.columns.flatMap((c) => (c.values ?? []).flatMap(spellings)).join(" "),
    })),
  );
  idx = { search };
  indexes.set(catalog, idx);
  return idx;
}

/** BM25 over whole tables for the question, its recent turns (half) and embedding neighbours. */
export function lexicalScores(catalog: Catalog, question: string, opts: LinkOptions): Scores {
  const scores: Scores = new Map();
  const add = (id: string, s: number) => scores.set(id, (scores.get(id) ?? 0) + s);
  const searchOpts = { boost: { name: 3, columns: 2, values: 1.5, text: 1 }, fuzzy: 0.2, prefix: true };
  const { search } = indexOf(catalog);
  for (const r of search.search(question, searchOpts)) add(catalog.tables[r.id as number].id, r.score);
  for (const turn of (opts.recent ?? []).slice(-2)) {
    for (const r of search.search(turn, searchOpts)) add(catalog.tables[r.id as number].id, r.score / 2);
  }
  // Embedding neighbours count like a strong lexical match, scaled by how close they are to the
  // closest one, so they lift tables words missed without drowning out the words.
  const known = new Set(catalog.tables.map((t) => t.id));
  const semantic = (opts.semantic ?? []).filter((m) => known.has(m.id) && m.similarity > 0);
  if (semantic.length) {
    const lexTop = Math.max(1, ...scores.values());
    const closest = semantic[0].similarity;
    for (const m of semantic) add(m.id, lexTop * 0.8 * (m.similarity / closest) ** 4);
  }
  return scores;
}

/**
 * Adds the column and value votes (weighted by specificity) and the authored context's hints to
 * the lexical scores; returns the named values and the hinted tables.
 */
export function addEvidence(
  catalog: Catalog,
  ev: Evidence,
  scores: Scores,
  question: string,
  terms: string[],
  hints: string[],
): { values: ValueMatch[]; hinted: Set<string> } {
  const add = (id: string, s: number) => scores.set(id, (scores.get(id) ?? 0) + s);
  const top = Math.max(1, ...scores.values());
  const vote = votes(ev, terms);
  const topVote = Math.max(1e-9, ...vote.values());
  for (const [i, v] of vote) add(catalog.tables[i].id, (top * v) / topVote);
  const values = namedValues(ev, question);
  const holders = new Map<string, Set<string>>();
  for (const v of values) holders.set(v.text, (holders.get(v.text) ?? new Set()).add(v.table));
  for (const v of values) {
    const spec = Math.log(1 + ev.tables / holders.get(v.text)!.size) / Math.log(1 + ev.tables);
    add(v.table, top * spec);
  }
  const hinted = new Set<string>();
  for (const h of hints) {
    for (const t of catalog.tables) if (h.toLowerCase().includes(t.id.toLowerCase())) hinted.add(t.id);
  }
  for (const id of hinted) add(id, top);
  return { values, hinted };
}

/** Copies, archives and scratch tables: look-alikes a question rarely means. */
const SCRATCH =
  /(^|[._])(tmp|temp|scratch|backup|bak|old|raw|staging|stg|archive|legacy|test|v\d+|\d{4})([._]|$)/i;

/**
 * How likely a table is meant, before its words: a big one, one whose name does not say it is a
 * copy. (Ranks look-alikes; never excludes a table.)
 */
export function prior(t: CatalogTable): number {
  let f = 1;
  if (SCRATCH.test(t.id)) f *= 0.6;
  f *= 1 + Math.log10(1 + (t.rowCount ?? 0)) / 10;
  return f;
}

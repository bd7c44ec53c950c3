/**
 * Schema linking: for a question (and the conversation's recent turns), the tables and columns the
 * planner should see in full, best first, and the key joins among them — offline and lexical, no
 * model call.
 *
 * 1. Evidence (`evidence.ts`): BM25 over whole tables (MiniSearch, fuzzy and prefix), and the
 *    question's terms matched against table names, column names, descriptions and stored values
 *    as documents that vote for their table, weighted by how specific the term is across the
 *    catalog. A literal that names a stored value ("Germany" → `country = 'DE'`) votes as strongly
 *    as it is rare. Tables named by the authored context chosen for the question (glossary SQL,
 *    verified examples) are pulled in; optionally, the closest tables by embedding add too.
 * 2. Priors: bigger tables, and names that do not mark a copy (`archive.orders`, `orders_raw`).
 * 3. Home: the datasets the authored context is about (or that its hints read), else the dataset
 *    whose tables hold the most evidence and join up; its tables rank first, and a table elsewhere
 *    is chosen only when it beats the home's best. With no authored context, the words often fit
 *    several datasets about as well (a CRM's customers, a shop's customers): the closest others
 *    (copies of a dataset counted once) are shown too, each by its own few tables, and the prompt
 *    says so, so the planner picks by the columns or asks.
 * 4. Core: the best tables, one per shape (copies with the same columns do not crowd out others).
 * 5. Join-aware concepts: a term the core does not hold ("by country", "signup", "business") is
 *    resolved to a table that holds it, preferring the home dataset and tables that join to the
 *    core by keys (`orders.customer_id` → `customers`) over look-alikes elsewhere.
 * 6. Measures bring their fact tables: a money or unit measure ("revenue", "spend", "units")
 *    pulls the table of the home dataset whose numeric columns compute it (`order_items`:
 *    `quantity`, `line_total`), and a line table brings its header (`orders`: the date, status).
 * 7. Joins: when the chosen tables fall apart, the tables that bridge them (`joins.ts`).
 * A small catalog (up to `allUpTo` tables) is given whole.
 */
import MiniSearch from "minisearch";
import type { Catalog, CatalogTable } from "./catalog";
import {
  evidenceOf,
  measureKinds,
  measures,
  namedValues,
  questionTerms,
  specificity,
  spellings,
  votes,
  type Evidence,
  type ValueMatch,
} from "./evidence";
import { datasetOf, joinDistance, joinLines, owns, references, withBridges } from "./joins";
import { HEDGE_CORE, HEDGE_TABLES, closeDatasets, givenHome, shapeOf, type Scores } from "./datasets";
import { words } from "./knowledge";
import type { SemanticMatch } from "./semantic";

export interface LinkedSchema {
  /**
   * Best first. `brief`: a table of another dataset the words fit nearly as well, shown by its
   * columns and types only.
   */
  tables: { id: string; score: number; brief?: boolean }[];
  /** `table.column` whose names or values the question mentions. */
  columns: string[];
  values: ValueMatch[];
  /** Key joins among the chosen tables (`a.k = b.k`). */
  joins: string[];
  /**
   * The datasets shown, best first, when the question's words fit more than one (no authored
   * context settled it); empty otherwise.
   */
  datasets: string[];
  /** True when the whole catalog was small enough to give in full. */
  all: boolean;
  /** Tables in the catalog. */
  total: number;
}

export interface LinkOptions {
  /** Earlier user turns, most recent last (they count half). */
  recent?: string[];
  /** Texts (SQL of chosen glossary entries and examples) whose table ids are pulled in. */
  hints?: string[];
  /** The datasets the authored context is about: their tables rank first. */
  home?: string[];
  maxTables?: number;
  allUpTo?: number;
  /** The tables an embedding retriever found closest to the question, best first (optional). */
  semantic?: SemanticMatch[];
}

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

/** Links a question to the catalog (see the file's header). */
export function linkSchema(catalog: Catalog, question: string, opts: LinkOptions = {}): LinkedSchema {
  const byId = new Map(catalog.tables.map((t) => [t.id, t]));
  const ev = evidenceOf(catalog);
  const scores = lexicalScores(catalog, question, opts);
  const terms = questionTerms(ev, question);
  const { values, hinted } = addEvidence(catalog, ev, scores, question, terms, opts.hints ?? []);

  // Priors: what a table looks like (size, a copy's name), then its dataset.
  for (const [id, sc] of scores) scores.set(id, sc * prior(byId.get(id)!));
  const all = catalog.tables.length <= (opts.allUpTo ?? 12);
  const given = givenHome(scores, opts.home ?? [], hinted);
  const [first, ...others] = given.size ? [given] : closeDatasets(catalog, scores).map((d) => new Set([d]));
  const home = first ?? new Set<string>();
  const base = new Map(scores);
  /** The scores with the tables of `at` ranked first (×1.5). */
  const boosted = (at: Set<string>): Scores =>
    new Map([...base].map(([id, v]) => [id, at.has(datasetOf(id)) ? v * 1.5 : v]));
  for (const [id, sc] of boosted(home)) scores.set(id, sc);

  let chosen: string[];
  const shown = [...home];
  const brief = new Set<string>();
  if (all) {
    const ranked = [...scores.entries()].sort((a, b) => b[1] - a[1]);
    chosen = [
      ...ranked.map(([id]) => id),
      ...catalog.tables.map((t) => t.id).filter((id) => !scores.has(id)),
    ];
  } else {
    const pick = (at: Set<string>, sc: Scores, max: number) => {
      const ranked = [...sc.entries()].sort((a, b) => b[1] - a[1]);
      let out = preferJoined(catalog, core(byId, ranked, at, max), hinted);
      for (const id of hinted) if (!out.includes(id)) out.push(id);
      out = withValues(catalog, out, values, at, sc);
      out = withConcepts(catalog, ev, out, terms, at, sc);
      out = withMeasures(catalog, out, question, at, sc);
      return withBridges(catalog, out, sc);
    };
    chosen = pick(home, scores, opts.maxTables ?? 6);
    // The words did not settle the dataset: the closest others' own tables follow, fewer each
    // (in brief in the prompt).
    for (const other of others) {
      const own = pick(other, boosted(other), HEDGE_CORE).filter(
        (id) => other.has(datasetOf(id)) && !chosen.includes(id),
      );
      for (const id of own.slice(0, HEDGE_TABLES)) {
        chosen.push(id);
        brief.add(id);
        scores.set(id, base.get(id) ?? 0);
      }
      if (own.length) shown.push(...other);
    }
  }
  const named = bestValues(values, chosen, home, scores);
  const columns = mentionedColumns(ev, terms, catalog).filter((c) =>
    chosen.includes(c.slice(0, c.lastIndexOf("."))),
  );
  return {
    tables: chosen.map((id) => ({
      id,
      score: Math.round((scores.get(id) ?? 0) * 100) / 100,
      ...(brief.has(id) ? { brief: true } : {}),
    })),
    columns,
    values: named,
    joins: joinLines(catalog, chosen),
    datasets: shown.length > 1 ? shown : [],
    all,
    total: catalog.tables.length,
  };
}

/** BM25 over whole tables for the question, its recent turns (half) and embedding neighbours. */
function lexicalScores(catalog: Catalog, question: string, opts: LinkOptions): Scores {
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
function addEvidence(
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

/**
 * A value named in the question belongs to one table: of the tables that store it, a chosen one,
 * else the best (home first).
 */
function bestValues(values: ValueMatch[], chosen: string[], home: Set<string>, scores: Scores): ValueMatch[] {
  const rank = (id: string) => (chosen.includes(id) ? 1e12 : 0) + rankIn(home, scores, id);
  const bestFor = new Map<string, ValueMatch>();
  for (const v of values) {
    const seen = bestFor.get(v.text);
    if (!seen || rank(v.table) > rank(seen.table)) bestFor.set(v.text, v);
  }
  return [...bestFor.values()];
}

/** Each value the question names, when no chosen table stores it, brings the holder that joins best. */
function withValues(
  catalog: Catalog,
  chosen: string[],
  values: ValueMatch[],
  home: Set<string>,
  scores: Scores,
): string[] {
  const out = [...chosen];
  const byId = new Map(catalog.tables.map((t) => [t.id, t]));
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
 * Of look-alikes (tables of the same name), the one that joins: a chosen table that joins none of
 * the others gives way to a table of its name that does (`b.customers` with `customer_id` for
 * `a.customers` with `client_id`, beside `orders`). Hinted tables stay.
 */
function preferJoined(catalog: Catalog, chosen: string[], hinted: Set<string>): string[] {
  const byId = new Map(catalog.tables.map((t) => [t.id, t]));
  const name = (id: string) => id.split(".").pop()!.toLowerCase();
  const out = [...chosen];
  for (let i = 0; i < out.length; i++) {
    const rest = out.filter((_, j) => j !== i).map((id) => byId.get(id)!);
    const distance = joinDistance(catalog, rest);
    if (!rest.length || hinted.has(out[i]) || distance(byId.get(out[i])!) === 1) continue;
    const alike = catalog.tables.find(
      (t) => name(t.id) === name(out[i]) && !out.includes(t.id) && distance(t) === 1,
    );
    if (alike) out[i] = alike.id;
  }
  return out;
}

/** Home first, then score. */
const rankIn = (home: Set<string>, scores: Scores, id: string) =>
  (home.has(datasetOf(id)) ? 1e9 : 0) + (scores.get(id) ?? 0);

/**
 * The core: the best tables, one per shape, at most `max`; a table outside the home datasets only
 * when it scores above the home's best.
 */
function core(
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

/**
 * Resolves each question term that names a column or a value and that no chosen table holds to
 * the table that holds it and joins best: in a home dataset, joined to the chosen tables by keys,
 * then by score (at most three such tables).
 */
function withConcepts(
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

/** Of the candidates, the one in a home dataset that joins the chosen tables best, then by score. */
function bestJoined(
  catalog: Catalog,
  candidates: string[],
  chosen: string[],
  home: Set<string>,
  scores: Scores,
): string | undefined {
  const byId = new Map(catalog.tables.map((t) => [t.id, t]));
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

/**
 * A money or unit measure pulls the table of the home datasets that computes it (the most measure
 * columns of that kind, joined to the chosen tables), and a line table brings the header it
 * references when that header refers on (`order_items` → `orders` → `customers`).
 */
function withMeasures(
  catalog: Catalog,
  chosen: string[],
  question: string,
  home: Set<string>,
  scores: Scores,
): string[] {
  const kinds = measureKinds(question);
  if (!kinds.length) return chosen;
  const out = [...chosen];
  const byId = new Map(catalog.tables.map((t) => [t.id, t]));
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

/** `table.column` whose names the question's terms match. */
function mentionedColumns(ev: Evidence, terms: string[], catalog: Catalog): string[] {
  const out = new Set<string>();
  for (const term of terms) {
    for (const h of ev.terms.get(term) ?? []) {
      if (h.field === "column" && h.column) out.add(`${catalog.tables[h.table].id}.${h.column}`);
    }
  }
  return [...out];
}

/** Copies, archives and scratch tables: look-alikes a question rarely means. */
const SCRATCH =
  /(^|[._])(tmp|temp|scratch|backup|bak|old|raw|staging|stg|archive|legacy|test|v\d+|\d{4})([._]|$)/i;

/**
 * How likely a table is meant, before its words: a big one, one whose name does not say it is a
 * copy. (Ranks look-alikes; never excludes a table.)
 */
function prior(t: CatalogTable): number {
  let f = 1;
  if (SCRATCH.test(t.id)) f *= 0.6;
  f *= 1 + Math.log10(1 + (t.rowCount ?? 0)) / 10;
  return f;
}

/**
 * A table as prompt lines: id, rows, description, then columns with types, notes and values; in
 * brief, its columns and types on one line.
 */
function renderTable(t: CatalogTable, brief = false): string {
  const head = [
    t.id,
    t.rowCount !== undefined ? `${t.rowCount} rows` : "",
    t.partitioning ? `partitioned by ${t.partitioning}` : "",
  ]
    .filter(Boolean)
    .join(", ");
  if (brief) return `- ${head}: ${t.columns.map((c) => `${c.name} ${c.type}`).join(", ")}`;
  const cols = t.columns.map((c) => {
    const vals = c.values?.length
      ? ` [${c.values.slice(0, 12).join(", ")}${c.values.length > 12 ? ", …" : ""}]`
      : "";
    return `    ${c.name} ${c.type}${c.description ? ` — ${c.description}` : ""}${vals}`;
  });
  return `- ${head}${t.description ? `: ${t.description}` : ""}\n${cols.join("\n")}`;
}

/** The linked tables as prompt lines: id, rows, description, then columns with types, notes and values. */
export function renderLinkedTables(catalog: Catalog, linked: LinkedSchema): string[] {
  const byId = new Map(catalog.tables.map((t) => [t.id, t]));
  const lines = linked.tables.map(({ id, brief }) => renderTable(byId.get(id)!, brief));
  if (!linked.all && linked.total > linked.tables.length) {
    lines.push(
      `(${linked.total - linked.tables.length} more tables are not shown: list_tables and describe_table reach them.)`,
    );
  }
  if (linked.joins.length) lines.push(`Joins between these tables: ${linked.joins.join("; ")}`);
  if (linked.datasets.length) {
    lines.push(
      `The question's words fit tables in ${linked.datasets.length} datasets (${linked.datasets.join(", ")}), ` +
        "best first (the others' tables in brief: describe_table gives their notes and values); use the one whose " +
        "columns answer it, and ask which is meant when that is unclear.",
    );
  }
  if (linked.values.length) {
    lines.push(
      "Values the question names: " +
        linked.values.map((v) => `"${v.text}" is ${v.table}.${v.column} = '${v.value}'`).join("; "),
    );
  }
  return lines;
}

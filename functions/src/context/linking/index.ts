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
import type { Catalog } from "../catalog";
import { HEDGE_CORE, HEDGE_TABLES, closeDatasets, givenHome, type Scores } from "./datasets";
import { evidenceOf, questionTerms } from "./evidence";
import { withConcepts, withMeasures, withValues } from "./concepts";
import { datasetOf, joinLines, tablesById, withBridges } from "./joins";
import { bestValues, core, mentionedColumns, preferJoined } from "./picking";
import { addEvidence, lexicalScores, prior } from "./scoring";
import type { LinkedSchema, LinkOptions } from "./types";

export { renderLinkedTables } from "./rendering";
export type { LinkedSchema, LinkOptions } from "./types";

/** Links a question to the catalog (see the file's header). */
export function linkSchema(catalog: Catalog, question: string, opts: LinkOptions = {}): LinkedSchema {
  const byId = tablesById(catalog);
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

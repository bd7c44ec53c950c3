/**
 * Which datasets a question is about (schema linking's step 3, `linking.ts`): the ones the authored
 * context names, else the datasets whose tables fit the question's words best — several when the
 * words fit more than one about as well, copies of one dataset (regional variants, replicas with
 * the same tables and columns) counted once.
 */
import type { Catalog, CatalogTable } from "../catalog";
import { connects, datasetOf, tablesById } from "./joins";

export type Scores = Map<string, number>;

const signatures = new WeakMap<Catalog, Map<string, string>>();

/** Each dataset's tables and their columns, as one string: copies of a dataset share it. */
function signaturesOf(catalog: Catalog): Map<string, string> {
  let out = signatures.get(catalog);
  if (out) return out;
  const parts = new Map<string, string[]>();
  for (const t of catalog.tables) {
    const d = datasetOf(t.id);
    parts.set(d, [...(parts.get(d) ?? []), `${t.id.split(".").pop()}:${shapeOf(t)}`]);
  }
  out = new Map([...parts].map(([d, p]) => [d, p.sort().join("|")]));
  signatures.set(catalog, out);
  return out;
}

/** The datasets the authored context (and its hints) are about, among those the question touches. */
export function givenHome(scores: Scores, home: string[], hinted: Set<string>): Set<string> {
  const wanted = new Set([...home.map((d) => d.toLowerCase()), ...[...hinted].map(datasetOf)]);
  const datasets = new Set([...scores.keys()].map(datasetOf));
  return new Set([...datasets].filter((d) => wanted.has(d.toLowerCase())));
}

/**
 * When the words do not settle the dataset: another dataset scoring at least half the best one's
 * is shown too (at most four others, each by its best two tables and what they bring, at most four
 * tables). Chosen on the development questions (test/bench/linking.bench.ts).
 */
const HEDGE_RATIO = 0.5;
const HEDGE_DATASETS = 4;
export const HEDGE_CORE = 2;
export const HEDGE_TABLES = 4;
/** A dataset's next best table counts this much less when it joins none of the ones before it. */
const UNJOINED = 0.5;

/**
 * The datasets the question may be about, best first: the best, then up to four others that score
 * at least half as well — copies of a dataset (the same tables and columns: regional variants,
 * replicas) count once, by their best. A dataset scores by its best tables of different shapes
 * (the best fully, the next two half and a quarter, each halved again when it joins none of the
 * ones before it by a key), so a dataset of copies of one table does not win by numbers, and one
 * whose matches join up beats one whose matches are scattered.
 */
export function closeDatasets(catalog: Catalog, scores: Scores): string[] {
  const byId = tablesById(catalog);
  const signature = signaturesOf(catalog);
  const byDataset = new Map<string, [string, number][]>();
  for (const [id, sc] of scores)
    byDataset.set(datasetOf(id), [...(byDataset.get(datasetOf(id)) ?? []), [id, sc]]);
  const ranked: [string, number][] = [];
  for (const [d, list] of byDataset) {
    const shapes = new Set<string>();
    const counted: CatalogTable[] = [];
    let sum = 0;
    for (const [id, sc] of list.sort((a, b) => b[1] - a[1])) {
      const t = byId.get(id)!;
      if (shapes.size >= 3 || shapes.has(shapeOf(t))) continue;
      const joined = !counted.length || counted.some((c) => connects(c, t));
      sum += (sc / 2 ** shapes.size) * (joined ? 1 : UNJOINED);
      shapes.add(shapeOf(t));
      counted.push(t);
    }
    ranked.push([d, sum]);
  }
  ranked.sort((a, b) => b[1] - a[1]);
  const seen = new Set<string>();
  const out: string[] = [];
  for (const [d, sum] of ranked) {
    const sig = signature.get(d)!;
    if (seen.has(sig)) continue;
    seen.add(sig);
    if (out.length && (sum < ranked[0][1] * HEDGE_RATIO || out.length > HEDGE_DATASETS)) break;
    out.push(d);
  }
  return out;
}

const shapes = new WeakMap<CatalogTable, string>();

/** A table's column names, sorted: copies of a table share it (kept per table, asked per question). */
export function shapeOf(t: CatalogTable): string {
  let shape = shapes.get(t);
  if (shape === undefined) {
    shape = t.columns
      .map((c) => c.name.toLowerCase())
      .sort()
      .join(",");
    shapes.set(t, shape);
  }
  return shape;
}

/**
 * Schema linking: for a question (and the conversation's recent turns), the tables and columns the
 * planner should see in full, best first — offline and lexical (MiniSearch, BM25 with fuzzy and
 * prefix matching over table names, column names, descriptions and stored values), no model call.
 *
 * - Value matching: a literal in the question that names a stored value of a low-cardinality column
 *   ("Germany" → `country = 'DE'` through ISO region names, "mobile app" → `mobile_app`,
 *   "paid search" → `paid_search`) is reported and pulls in its table.
 * - Hints: tables named by the authored context chosen for the question (glossary SQL, verified
 *   examples) are pulled in too.
 * - Priors: tables in the same dataset as the best match, bigger tables, and tables whose names do
 *   not mark them as copies rank above look-alikes (`archive.orders`, `staging.orders_raw`).
 * - Joins: when the chosen tables do not connect through shared key columns (`*_id`), the table
 *   that bridges them is added (`order_items` between `orders` and `products`).
 * - One table per shape: copies of a chosen table (the same columns) do not crowd out others.
 * - Optionally, the closest tables by embedding (`semantic.ts`) add to the lexical scores.
 * A small catalog (up to `allUpTo` tables) is given whole.
 */
import MiniSearch from "minisearch";
import type { Catalog, CatalogTable } from "./catalog";
import { withBridges } from "./joins";
import { mentions, words } from "./knowledge";
import type { SemanticMatch } from "./semantic";

interface ValueMatch {
  /** The words of the question that named it. */
  text: string;
  table: string;
  column: string;
  value: string;
}

export interface LinkedSchema {
  /** Best first. */
  tables: { id: string; score: number }[];
  /** `table.column` whose names or values the question mentions. */
  columns: string[];
  values: ValueMatch[];
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
  maxTables?: number;
  allUpTo?: number;
  /** The tables an embedding retriever found closest to the question, best first (optional). */
  semantic?: SemanticMatch[];
}

const regionNames = new Intl.DisplayNames(["en"], { type: "region" });

/** Ways a question may name a stored value: itself, with spaces for `_`, a region's English name. */
function spellings(value: string): string[] {
  const out = [value, value.replace(/[_-]+/g, " ")];
  if (/^[A-Z]{2}$/.test(value)) {
    try {
      const name = regionNames.of(value);
      if (name && name !== value) out.push(name);
    } catch {
      /* not a region code */
    }
  }
  return out;
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

/** The columns (`table.column`) and stored values the question's words name. */
function mentioned(catalog: Catalog, asked: string[]): { values: ValueMatch[]; columns: Set<string> } {
  const values: ValueMatch[] = [];
  const columns = new Set<string>();
  for (const t of catalog.tables) {
    for (const c of t.columns) {
      if (mentions(asked, split(c.name))) columns.add(`${t.id}.${c.name}`);
      for (const v of c.values ?? []) {
        const hit = spellings(v).find((s) => s.length > 1 && mentions(asked, s));
        if (hit) values.push({ text: hit, table: t.id, column: c.name, value: v });
      }
    }
  }
  return { values, columns };
}

/** Links a question to the catalog (see the file's header). */
export function linkSchema(catalog: Catalog, question: string, opts: LinkOptions = {}): LinkedSchema {
  const maxTables = opts.maxTables ?? 6;
  const byId = new Map(catalog.tables.map((t) => [t.id, t]));
  const asked = words(question);
  const scores = new Map<string, number>();
  const add = (id: string, s: number) => scores.set(id, (scores.get(id) ?? 0) + s);

  const searchOpts = { boost: { name: 3, columns: 2, values: 1.5, text: 1 }, fuzzy: 0.2, prefix: true };
  const { search } = indexOf(catalog);
  for (const r of search.search(question, searchOpts)) add(catalog.tables[r.id as number].id, r.score);
  for (const turn of (opts.recent ?? []).slice(-2)) {
    for (const r of search.search(turn, searchOpts)) add(catalog.tables[r.id as number].id, r.score / 2);
  }

  // Embedding neighbours count like a strong lexical match, scaled by how close they are to the
  // closest one, so they lift tables words missed without drowning out the words.
  const semantic = (opts.semantic ?? []).filter((m) => byId.has(m.id) && m.similarity > 0);
  if (semantic.length) {
    const lexTop = Math.max(1, ...scores.values());
    const closest = semantic[0].similarity;
    for (const m of semantic) add(m.id, lexTop * 0.8 * (m.similarity / closest) ** 4);
  }

  const { values, columns } = mentioned(catalog, asked);
  const top = Math.max(1, ...scores.values());
  for (const v of values) add(v.table, top);
  for (const c of columns) add(c.slice(0, c.lastIndexOf(".")), top / 2);
  const hinted = new Set<string>();
  for (const h of opts.hints ?? []) {
    for (const t of catalog.tables) if (h.toLowerCase().includes(t.id.toLowerCase())) hinted.add(t.id);
  }
  for (const id of hinted) add(id, top);

  // Priors: first what a table looks like (size, a copy's name), then coherence with the best match.
  const ranked = () => [...scores.entries()].sort((a, b) => b[1] - a[1]);
  for (const [id, sc] of scores) scores.set(id, sc * prior(byId.get(id)!));
  const best = ranked()[0]?.[0];
  const dataset = best?.split(".").slice(0, -1).join(".");
  for (const [id, sc] of scores) {
    if (dataset && id.split(".").slice(0, -1).join(".") === dataset) scores.set(id, sc * 1.5);
  }

  // A value named in the question belongs to one table: of the look-alikes that store it, the best.
  const bestFor = new Map<string, ValueMatch>();
  for (const v of values) {
    const seen = bestFor.get(v.text);
    if (!seen || (scores.get(v.table) ?? 0) > (scores.get(seen.table) ?? 0)) bestFor.set(v.text, v);
  }
  const named = [...bestFor.values()];

  const all = catalog.tables.length <= (opts.allUpTo ?? 12);
  let chosen: string[];
  if (all) {
    const order = ranked().map(([id]) => id);
    chosen = [...order, ...catalog.tables.map((t) => t.id).filter((id) => !scores.has(id))];
  } else {
    const list = ranked();
    const cut = (list[0]?.[1] ?? 0) * 0.25;
    // One table per shape: a copy of a chosen table (same columns) would only crowd out others.
    const shape = (id: string) =>
      byId
        .get(id)!
        .columns.map((c) => c.name.toLowerCase())
        .sort()
        .join(",");
    const shapes = new Set<string>();
    chosen = [];
    for (const [id, sc] of list) {
      if (sc < cut || chosen.length >= maxTables) break;
      if (shapes.has(shape(id))) continue;
      shapes.add(shape(id));
      chosen.push(id);
    }
    for (const id of [...hinted, ...named.map((v) => v.table)]) if (!chosen.includes(id)) chosen.push(id);
    chosen = withBridges(catalog, chosen, scores);
  }
  return {
    tables: chosen.map((id) => ({ id, score: Math.round((scores.get(id) ?? 0) * 100) / 100 })),
    columns: [...columns].filter((c) => chosen.includes(c.slice(0, c.lastIndexOf(".")))),
    values: named,
    all,
    total: catalog.tables.length,
  };
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

/** The linked tables as prompt lines: id, rows, description, then columns with types, notes and values. */
export function renderLinkedTables(catalog: Catalog, linked: LinkedSchema): string[] {
  const byId = new Map(catalog.tables.map((t) => [t.id, t]));
  const lines = linked.tables.map(({ id }) => {
    const t = byId.get(id)!;
    const head = [
      t.id,
      t.rowCount !== undefined ? `${t.rowCount} rows` : "",
      t.partitioning ? `partitioned by ${t.partitioning}` : "",
    ]
      .filter(Boolean)
      .join(", ");
    const cols = t.columns.map((c) => {
      const vals = c.values?.length
        ? ` [${c.values.slice(0, 12).join(", ")}${c.values.length > 12 ? ", …" : ""}]`
        : "";
      return `    ${c.name} ${c.type}${c.description ? ` — ${c.description}` : ""}${vals}`;
    });
    return `- ${head}${t.description ? `: ${t.description}` : ""}\n${cols.join("\n")}`;
  });
  if (!linked.all && linked.total > linked.tables.length) {
    lines.push(
      `(${linked.total - linked.tables.length} more tables are not shown: list_tables and describe_table reach them.)`,
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

/**
 * The catalog as evidence for schema linking, indexed once per catalog: every table's name and
 * description, and every column's name, description and stored values, as small documents that
 * vote for the table holding them. A vote weighs what matched (a table's name, a column's name, a
 * stored value, a description) and how specific the term is across the catalog, like IDF: a
 * `country` column in 600 tables is weak evidence for any one of them, `signup_date` in a handful
 * is strong. Words are compared by a light stem (`registered`/`register`, `launched_on`/`launch`),
 * and two words of the question also count joined (`signed up` → `signup`).
 *
 * It also finds what the question's words mean by value (a stored value named in the question:
 * "Germany" → `country = 'DE'`), and which columns are measures (numeric, not keys) and of what
 * kind — money (decimals) or counts (integers) — so a measure word pulls the table that computes it.
 */
import type { Catalog, CatalogTable } from "../catalog";
import { STOP_WORDS, mentions, nearlyEqual, words } from "../knowledge";

type Field = "table" | "column" | "value" | "text";

/** How much a match in each place says about its table. */
const FIELD_WEIGHT: Record<Field, number> = { table: 3, column: 2, value: 1.5, text: 1 };

interface Hit {
  table: number;
  /** The column that matched (none for the table's own name or description). */
  column?: string;
  field: Field;
}

export interface ValueMatch {
  /** The words of the question that named it. */
  text: string;
  table: string;
  column: string;
  value: string;
}

interface ValueEntry extends Omit<ValueMatch, "text"> {
  spelling: string;
}

export interface Evidence {
  /** Stem → the places that hold it (the best field per table and column). */
  terms: Map<string, Hit[]>;
  /** Stem → how many tables hold it. */
  df: Map<string, number>;
  /** A value's first word (lower case) → the values that start with it. */
  values: Map<string, ValueEntry[]>;
  tables: number;
}

const regionNames = new Intl.DisplayNames(["en"], { type: "region" });

/** Ways a question may name a stored value: itself, with spaces for `_`, a region's English name. */
export function spellings(value: string): string[] {
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

/**
 * A light stem: `registered` → `register`, `launching` → `launch`, `place`/`placed` → `plac`,
 * `profitable` → `profit`, `monthly` → `month`.
 */
function stem(w: string): string {
  let s = w;
  if (s.length > 6 && s.endsWith("able")) s = s.slice(0, -4);
  else if (s.length > 5 && s.endsWith("ly")) s = s.slice(0, -2);
  else if (s.length > 5 && s.endsWith("ing")) s = s.slice(0, -3);
  else if (s.length > 4 && s.endsWith("ed")) s = s.slice(0, -2);
  if (s.length > 3 && s.endsWith("e")) s = s.slice(0, -1);
  return s;
}

/** The stems of a text's words, without stop words. */
function stems(text: string): string[] {
  return words(text.replace(/[._]+/g, " "))
    .filter((w) => !STOP_WORDS.has(w))
    .map(stem);
}

const indexes = new WeakMap<Catalog, Evidence>();

/** The catalog's evidence index (built once per catalog object). */
export function evidenceOf(catalog: Catalog): Evidence {
  let ev = indexes.get(catalog);
  if (ev) return ev;
  const terms = new Map<string, Hit[]>();
  const values = new Map<string, ValueEntry[]>();
  catalog.tables.forEach((t, table) => {
    const best = new Map<string, Hit>();
    const put = (text: string, field: Field, column?: string) => {
      for (const s of stems(text)) {
        const key = `${s}\u0000${column ?? ""}`;
        const seen = best.get(key);
        if (!seen || FIELD_WEIGHT[field] > FIELD_WEIGHT[seen.field]) best.set(key, { table, column, field });
      }
    };
    put(t.id.split(".").pop()!, "table");
    put(t.description ?? "", "text");
    for (const c of t.columns) {
      put(c.name, "column", c.name);
      put(c.description ?? "", "text", c.name);
      for (const v of c.values ?? []) {
        for (const sp of new Set(spellings(v))) {
          put(sp, "value", c.name);
          const first = words(sp)[0];
          if (first && sp.length > 1) {
            const list = values.get(first) ?? [];
            list.push({ table: t.id, column: c.name, value: v, spelling: sp });
            values.set(first, list);
          }
        }
      }
    }
    for (const [key, hit] of best) {
      const s = key.slice(0, key.indexOf("\u0000"));
      terms.set(s, [...(terms.get(s) ?? []), hit]);
    }
  });
  const df = new Map<string, number>();
  for (const [s, hits] of terms) df.set(s, new Set(hits.map((h) => h.table)).size);
  ev = { terms, df, values, tables: catalog.tables.length };
  indexes.set(catalog, ev);
  return ev;
}

/** How specific a term is, 0…1: 1 when one table holds it, near 0 when every table does. */
export function specificity(ev: Evidence, term: string): number {
  const df = ev.df.get(term) ?? 0;
  if (!df) return 0;
  return Math.log(1 + ev.tables / df) / Math.log(1 + ev.tables);
}

/** The question's terms as the catalog knows them: stems, and two adjacent stems joined. */
export function questionTerms(ev: Evidence, question: string): string[] {
  const s = stems(question);
  const out = new Set(s.filter((t) => ev.terms.has(t)));
  const parts = new Set<string>();
  for (let i = 0; i + 1 < s.length; i++) {
    const joined = s[i] + s[i + 1];
    for (const j of [joined, joined.replace(/s$/, "")]) {
      if (!ev.terms.has(j)) continue;
      out.add(j);
      parts.add(s[i]).add(s[i + 1]);
    }
  }
  // Two words read as one ("signed up" → signup) mean that, not each word alone.
  return [...out].filter((t) => !parts.has(t));
}

/** Each table's vote: per term, its best field's weight × the term's specificity, summed. */
export function votes(ev: Evidence, terms: string[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const term of terms) {
    const spec = specificity(ev, term);
    const best = new Map<number, number>();
    for (const h of ev.terms.get(term) ?? []) {
      best.set(h.table, Math.max(best.get(h.table) ?? 0, FIELD_WEIGHT[h.field]));
    }
    for (const [table, w] of best) out.set(table, (out.get(table) ?? 0) + w * spec);
  }
  return out;
}

/**
 * The stored values the question names (every table that stores them). A short code in capitals
 * (`IN`, `US`) counts only when the question writes it so, not as the word "in" or "us".
 */
export function namedValues(ev: Evidence, question: string): ValueMatch[] {
  const asked = words(question);
  const capitals = new Set(question.match(/\b[A-Z]{2,3}\b/g) ?? []);
  const out: ValueMatch[] = [];
  const seen = new Set<string>();
  const firsts = [...ev.values.keys()];
  for (const w of new Set(asked)) {
    for (const first of w.length < 5 ? [w] : firsts) {
      if (!nearlyEqual(w, first) || !ev.values.has(first)) continue;
      for (const e of ev.values.get(first)!) {
        const key = `${e.table}.${e.column}=${e.value}`;
        if (seen.has(key) || !mentions(asked, e.spelling)) continue;
        if (/^[A-Z]{2,3}$/.test(e.spelling) && !capitals.has(e.spelling)) continue;
        seen.add(key);
        out.push({ text: e.spelling, table: e.table, column: e.column, value: e.value });
      }
    }
  }
  return out;
}

const MONEY_TYPE = /^(DECIMAL|NUMERIC|BIGNUMERIC|FLOAT|DOUBLE|REAL)/i;
const COUNT_TYPE = /^(INT|BIGINT|SMALLINT|INTEGER|HUGEINT)/i;
const isKey = (name: string) => /(^|_)(id|number|no|year|month|day|rank)$/i.test(name);

export type MeasureKind = "money" | "count";

/**
 * Everyday words for what a measure counts: money (revenue, spend, profit, price…) or units (units,
 * quantity, items…). General business English, not the names of any schema's columns.
 */
const MEASURE_WORDS: Record<MeasureKind, string[]> = {
  money:
    "revenue sale sell sold spend spent turnover income earning gmv profit margin cost price value money paid pay amount"
      .split(" ")
      .map(stem),
  count: "unit quantity qty item piece volume".split(" ").map(stem),
};

/** The kinds of measure the question asks for. */
export function measureKinds(question: string): MeasureKind[] {
  const s = new Set(stems(question));
  return (Object.keys(MEASURE_WORDS) as MeasureKind[]).filter((k) => MEASURE_WORDS[k].some((w) => s.has(w)));
}

/** A table's measure columns by kind: numeric columns that are not keys or calendar parts. */
export function measures(t: CatalogTable): Record<MeasureKind, string[]> {
  const out: Record<MeasureKind, string[]> = { money: [], count: [] };
  for (const c of t.columns) {
    if (isKey(c.name) || c.name.includes(".")) continue;
    if (MONEY_TYPE.test(c.type)) out.money.push(c.name);
    else if (COUNT_TYPE.test(c.type)) out.count.push(c.name);
  }
  return out;
}

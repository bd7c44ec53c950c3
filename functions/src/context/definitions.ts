/**
 * Which of the team's definitions an answer used: a glossary term with SQL counts as used when
 * every aggregate its SQL computes (`SUM(product_price)`, `COUNT(DISTINCT order_id)`…) and every
 * table it reads appear in a query that ran this turn — compared as text with case, spacing,
 * quoting and table qualifiers ignored, so `SUM(oi.product_price)` over `jaffle.order_items oi`
 * matches. Lexical, offline, and conservative: a definition rewritten another way is not claimed.
 */
import type { DefinitionUse } from "../contract/events";
import type { GlossaryOrigin } from "./authored";

/** A term that can be named as used: its SQL and where it came from. */
export interface DefinitionCandidate {
  term: string;
  sql?: string;
  origin?: GlossaryOrigin;
}

/** Lower case, no quotes, single spaces, no spaces inside parentheses. */
function normal(sql: string): string {
  return sql
    .toLowerCase()
    .replace(/[`"]/g, "")
    .replace(/\s+/g, " ")
    .replace(/\(\s+/g, "(")
    .replace(/\s+\)/g, ")")
    .trim();
}

/** `alias.column` → `column` (any qualifier before a column name dropped). */
const unqualified = (sql: string) => sql.replace(/\b[a-z_][\w]*\.(?=[a-z_])/g, "");

const AGGREGATE = /\b(sum|count|avg|min|max|median|quantile_cont|quantile_disc|safe_divide)\s*\(/g;

/** The aggregate calls of a SQL text, each with its balanced parentheses. */
function aggregates(sql: string): string[] {
  const out: string[] = [];
  for (const m of sql.matchAll(AGGREGATE)) {
    let depth = 0;
    for (let i = m.index + m[0].length - 1; i < sql.length; i++) {
      if (sql[i] === "(") depth++;
      else if (sql[i] === ")" && --depth === 0) {
        out.push(sql.slice(m.index, i + 1).replace(/^(\w+)\s*\(/, "$1("));
        break;
      }
    }
  }
  return out;
}

/** A SQL text as the comparisons here read it: lower case, unquoted, single-spaced. */
export const normalSql = (sql: string): string => normal(sql);

/** The aggregate calls a SQL text computes, normalized and without table qualifiers. */
export const aggregatesOf = (sql: string): string[] => aggregates(normal(sql)).map(unqualified);

/** The tables a definition's SQL reads (`FROM`/`JOIN` names, qualified). */
function tablesOf(sql: string): string[] {
  return [...sql.matchAll(/\b(?:from|join)\s+([a-z_][\w-]*(?:\.[a-z_][\w-]*)+)/g)].map((m) => m[1]);
}

/** The definitions among `chosen` whose aggregates and tables every appear in one of `ran`. */
export function definitionsUsed(
  chosen: readonly DefinitionCandidate[],
  ran: readonly string[],
): DefinitionUse[] {
  const queries = ran.map((q) => {
    const n = normal(q);
    return { text: n, bare: unqualified(n) };
  });
  const out: DefinitionUse[] = [];
  for (const g of chosen) {
    if (!g.sql || !g.origin) continue;
    const def = normal(g.sql);
    const aggs = aggregates(def).map(unqualified);
    const tables = tablesOf(def);
    if (!aggs.length) continue;
    const used = queries.some(
      (q) => aggs.every((a) => q.bare.includes(a)) && tables.every((t) => q.text.includes(t)),
    );
    if (used) out.push({ name: g.term, ...g.origin });
  }
  return out;
}

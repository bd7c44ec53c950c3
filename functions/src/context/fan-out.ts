/**
 * Fan-out along declared joins: a query that joins a table to one that refers to it many times
 * (`order_items.order_id → orders.order_id`, many to one) and sums, averages or counts a column of
 * the "one" side repeats that side's rows once per matching row of the other — `SUM(o.order_cost)`
 * over `order_items JOIN orders` counts each order's cost once per item. Read from the SQL text:
 * one level of FROM/JOIN with aliases; a query with a subquery in its FROM, or aggregates that are
 * DISTINCT or unqualified, is not judged (never a false alarm from what it cannot read).
 */
import type { DeclaredJoin } from "./catalog";

export interface FanOut {
  /** The aggregate as written (`SUM(o.order_cost)`). */
  aggregate: string;
  /** The table whose rows repeat, and the table that repeats them. */
  table: string;
  by: string;
  join: DeclaredJoin;
}

const clean = (s: string) => s.replace(/[`"]/g, "").toLowerCase();

/** Alias → table id of the query's FROM and JOIN tables (an unaliased table is its own last name). */
function tablesOf(sql: string): Map<string, string> | undefined {
  const from =
    /\bfrom\b([\s\S]*?)(\bwhere\b|\bgroup\s+by\b|\border\s+by\b|\bhaving\b|\blimit\b|\bqualify\b|$)/i.exec(
      sql,
    );
  if (!from || /\(\s*select\b/i.test(from[1])) return undefined;
  const out = new Map<string, string>();
  const ref =
    /(?:^|,|\bjoin\b)\s*([`"\w.-]+)(?:\s+(?:as\s+)?(?!on\b|using\b|left\b|right\b|inner\b|full\b|cross\b|join\b|natural\b)([a-z_]\w*))?/gi;
  for (const m of from[1].matchAll(ref)) {
    const table = clean(m[1]);
    if (!table.includes(".")) continue;
    out.set(clean(m[2] ?? table.split(".").pop()!), table);
  }
  return out.size ? out : undefined;
}

/** The fan-outs in one SQL statement, given the declared joins. */
export function fanOuts(sql: string, joins: readonly DeclaredJoin[]): FanOut[] {
  if (!joins.length) return [];
  const tables = tablesOf(sql);
  if (!tables || tables.size < 2) return [];
  const present = new Set(tables.values());
  const out: FanOut[] = [];
  for (const m of sql.matchAll(
    /\b(sum|avg|count)\s*\(\s*(?!distinct\b)([`"]?[a-z_]\w*[`"]?)\.([`"]?\w+[`"]?)\s*\)/gi,
  )) {
    const table = tables.get(clean(m[2]));
    if (!table) continue;
    for (const j of joins) {
      // `many` refers to `one` many times: `one`'s rows repeat when both are joined.
      const [many, one] =
        j.cardinality === "many_to_one"
          ? [j.from.table, j.to.table]
          : j.cardinality === "one_to_many"
            ? [j.to.table, j.from.table]
            : [undefined, undefined];
      if (one?.toLowerCase() === table && many && present.has(many.toLowerCase())) {
        out.push({ aggregate: m[0], table: one, by: many, join: j });
      }
    }
  }
  return out;
}

/** The planner's instruction for a fan-out. */
export function fanOutRefinement(f: FanOut, sql: string): string {
  const j = f.join;
  return (
    `${f.aggregate} counts each row of ${f.table} once per matching row of ${f.by} ` +
    `(the team declares ${j.from.table}.${j.from.column} → ${j.to.table}.${j.to.column} as ${j.cardinality.replaceAll("_", " ")}), ` +
    `so the total is inflated. Aggregate ${f.by} per ${f.table} row in a subquery first, or compute the ${f.table} ` +
    `aggregate on its own and combine the results.\nSQL:\n${sql}`
  );
}

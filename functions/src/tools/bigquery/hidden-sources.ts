/**
 * What BigQuery can read without reporting a table: the fences that hold for every scope, a full
 * scope and an admin's too. `INFORMATION_SCHEMA` views (every person's query text in
 * `JOBS_BY_USER`, datasets outside the allowlist in `SCHEMATA`) and `EXTERNAL_QUERY` (a Cloud SQL or
 * Spanner connection) are not listed in a dry run's `referencedTables`, so the allowlist check that
 * runs on those never sees them. They are refused by name before the dry run, and after it a query
 * that reads from something while BigQuery reports no table read at all is refused too: whatever it
 * reads, Quarry cannot check it.
 */
import { WarehouseError } from "../types";

const REFUSED: readonly { pattern: RegExp; says: string }[] = [
  {
    pattern: /\bINFORMATION_SCHEMA\b/i,
    says: "INFORMATION_SCHEMA is not available; use list_tables and describe_table.",
  },
  {
    pattern: /\bEXTERNAL_QUERY\s*\(/i,
    says: "EXTERNAL_QUERY is not available: Quarry reads only the allowed BigQuery datasets. Query their tables directly.",
  },
  {
    pattern: /\bEXTERNAL_OBJECT_TRANSFORM\s*\(/i,
    says: "EXTERNAL_OBJECT_TRANSFORM is not available: Quarry reads only the allowed BigQuery datasets.",
  },
];

/**
 * Refuses, for every scope, SQL that names a source BigQuery does not report: checked on the SQL as
 * sent and on its names as BigQuery reads them (comments blanked), so neither a comment nor a string
 * hides one.
 */
export function refuseHiddenSources(sql: string, names: string): void {
  for (const { pattern, says } of REFUSED) {
    if (pattern.test(sql) || pattern.test(names)) throw new WarehouseError("refused", says);
  }
}

/** String literals blanked (their text is not SQL), offsets kept. */
function withoutStrings(text: string): string {
  return text.replace(
    /[rRbB]{0,2}('''[\s\S]*?'''|"""[\s\S]*?"""|'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")/g,
    (s) => " ".repeat(s.length),
  );
}

/** `FROM` that is not a source: `EXTRACT(part FROM x)`, `IS [NOT] DISTINCT FROM`. */
const NOT_A_SOURCE = /\bEXTRACT\s*\(\s*\w+(?:\s*\(\s*\w+\s*\))?\s+FROM\b|\bDISTINCT\s+FROM\b/gi;

/** The query's own names for its parts: `WITH name AS (`, `, name AS (`. */
const CTE = /(?:\bWITH(?:\s+RECURSIVE)?|,)\s*`?([A-Za-z_]\w*)`?\s+AS\s*\(/gi;

/** What follows a `FROM` or a `JOIN`, unless it is a subquery or `UNNEST(…)`. */
const SOURCE = /\b(?:FROM|JOIN)\s+(?!\(|UNNEST\s*\()(`[^`]*`|[A-Za-z_][\w$.-]*)/gi;

/**
 * After the dry run: when BigQuery reports no table read, the query may read only its own parts
 * (common table expressions), `UNNEST` and subqueries; a `FROM` or `JOIN` on anything else is a
 * source Quarry cannot check (a table function, a connection), refused for every scope.
 */
export function refuseUnreportedSources(names: string, referencedTables: readonly string[]): void {
  if (referencedTables.length) return;
  const text = withoutStrings(names).replace(NOT_A_SOURCE, (s) => " ".repeat(s.length));
  const own = new Set([...text.matchAll(CTE)].map((m) => m[1].toLowerCase()));
  for (const m of text.matchAll(SOURCE)) {
    const name = m[1].replace(/`/g, "");
    if (own.has(name.toLowerCase())) continue;
    throw new WarehouseError(
      "refused",
      `BigQuery reported no table read for \`${name}\`, so Quarry cannot check what it reads: query the tables of ` +
        "the allowed datasets directly (list_tables shows them).",
    );
  }
}

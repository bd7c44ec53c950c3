/** SQL text for the ingest's DuckDB: literals and identifiers quoted, never spliced raw. */

/** A string literal. */
export const lit = (s: string) => `'${s.replace(/'/g, "''")}'`;

/** A quoted identifier. */
export const ident = (s: string) => `"${s.replace(/"/g, '""')}"`;

/** The first line of a DuckDB error (the rest is DuckDB's advice to a SQL author, not to the person). */
export const firstLine = (err: unknown) => (err instanceof Error ? err.message : String(err)).split("\n")[0];

/** What the ingest's DuckDB errors say, in their first line (quoting is tools/sql-text.ts). */

/** The first line of a DuckDB error (the rest is DuckDB's advice to a SQL author, not to the person). */
export const firstLine = (err: unknown) => (err instanceof Error ? err.message : String(err)).split("\n")[0];

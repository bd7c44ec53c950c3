/**
 * SQL text built from values, for DuckDB's dialect (and BigQuery's string literals): literals and
 * identifiers quoted, never spliced raw. The one home of the quoting rules every engine module and
 * the upload child process use.
 */

/** A string literal: `'it''s'`. */
export const lit = (s: string) => `'${s.replaceAll("'", "''")}'`;

/** One quoted identifier: `"my ""col"""`. */
export const ident = (s: string) => `"${s.replaceAll('"', '""')}"`;

/** A dotted name, each part quoted: `"shop"."orders"`. */
export const quoteId = (id: string) => id.split(".").map(ident).join(".");

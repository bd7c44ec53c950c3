/**
 * The scope fence on DuckDB's own parse tree (`json_serialize_sql`, parse only — nothing is bound,
 * so no binder error can describe a table outside the scope). For a limited scope every table the
 * statement reads must be a listed table in scope: a name is resolved as DuckDB writes it (comments
 * and quoting do not hide it), a CTE's own name is not a table, and a name that is no listed table
 * (`duckdb_tables`, `pg_tables`, a hidden table) is answered as missing. Table functions other than
 * the generators below (`query_table('finance.salaries')`, `duckdb_columns()`) and SHOW are refused:
 * their tables are not in the statement's text.
 */
import type { DuckDBConnection } from "@duckdb/node-api";
import { inScope, type Scope } from "../scope";
import { WarehouseError } from "../types";
import { duckDbNotFound } from "./errors";

/** Catalogs and schemas of DuckDB's own views (`system.main.duckdb_tables`, `pg_catalog.pg_tables`). */
const SYSTEM = new Set(["system", "temp", "main", "memory", "pg_catalog", "information_schema"]);

/** Table functions that read no table. */
const GENERATORS = new Set(["range", "generate_series", "unnest"]);

interface Refs {
  tables: { catalog: string; schema: string; table: string }[];
  functions: string[];
  show: boolean;
  ctes: Set<string>;
}

function collect(node: unknown, refs: Refs): void {
  if (Array.isArray(node)) {
    for (const n of node) collect(n, refs);
    return;
  }
  if (!node || typeof node !== "object") return;
  const n = node as Record<string, unknown>;
  if (n.type === "BASE_TABLE" && typeof n.table_name === "string") {
    refs.tables.push({
      catalog: String(n.catalog_name ?? ""),
      schema: String(n.schema_name ?? ""),
      table: n.table_name,
    });
  } else if (n.type === "TABLE_FUNCTION") {
    const fn = (n.function as { function_name?: string } | undefined)?.function_name ?? "?";
    refs.functions.push(fn.toLowerCase());
  } else if (n.type === "SHOW_REF") {
    refs.show = true;
  }
  const ctes = (n.cte_map as { map?: { key?: string }[] } | undefined)?.map;
  for (const c of ctes ?? []) if (typeof c.key === "string") refs.ctes.add(c.key.toLowerCase());
  for (const v of Object.values(n)) collect(v, refs);
}

/**
 * Refuses, for a limited scope, what the statement reads outside it (see the file's header).
 * `known` are the warehouse's table ids (`shop.orders`, `finance.salaries`, `db.main.t`).
 */
export async function refuseUnscopedParse(
  conn: DuckDBConnection,
  sql: string,
  scope: Scope,
  known: readonly string[],
): Promise<void> {
  if (scope.all) return;
  const res = await conn.runAndReadAll("SELECT json_serialize_sql(?::VARCHAR)", [sql]);
  const tree = JSON.parse(String(res.getRows()[0]?.[0] ?? "{}")) as { error?: boolean };
  if (tree.error) return; // DuckDB's parser error follows, naming no table
  const refs: Refs = { tables: [], functions: [], show: false, ctes: new Set() };
  collect(tree, refs);
  const other = refs.functions.filter((f) => !GENERATORS.has(f));
  if (refs.show || other.length) {
    throw new WarehouseError(
      "refused",
      `${refs.show ? "SHOW" : `The table function ${other[0]}()`} is not available; query the tables list_tables shows.`,
    );
  }
  for (const ref of refs.tables) {
    const { catalog, schema, table } = ref;
    if (!catalog && !schema && refs.ctes.has(table.toLowerCase())) continue;
    const id = resolve(ref, known);
    if (id && inScope(scope, id)) continue;
    const dataset = schema && schema !== "main" ? schema : catalog;
    // A table that does not exist in a dataset the person sees, or in one that exists nowhere:
    // DuckDB's own answer follows (its hints scrubbed), naming nothing hidden.
    const knownDataset = known.some((k) => k.split(".")[0] === dataset);
    const seenDataset = known.some((k) => k.split(".")[0] === dataset && inScope(scope, k));
    if (!id && dataset && !SYSTEM.has(dataset.toLowerCase()) && (seenDataset || !knownDataset)) continue;
    const missing = duckDbNotFound(
      { dataset: dataset || table, table, datasetSeen: seenDataset || !dataset },
      { line: 1, column: 1 },
    );
    throw new WarehouseError(missing.category, missing.message, missing.details, {
      outOfScope: [id ?? [catalog, schema, table].filter(Boolean).join(".")],
    });
  }
}

/** The listed table a parsed reference means, if any. */
function resolve(
  ref: { catalog: string; schema: string; table: string },
  known: readonly string[],
): string | undefined {
  const want = [ref.catalog, ref.schema, ref.table].filter(Boolean).map((p) => p.toLowerCase());
  return known.find((id) => {
    const parts = id.toLowerCase().split(".");
    const candidates = [
      parts,
      parts.length === 2 ? [parts[0], "main", parts[1]] : parts,
      ["memory", ...parts],
    ];
    return candidates.some(
      (c) =>
        c.length >= want.length && c.slice(-want.length).join(".") === want.join(".") && want.length >= 2,
    );
  });
}

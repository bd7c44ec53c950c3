/**
 * The query gate's scope checks, shared by both engines. A person's SQL may name only tables in
 * their scope (`scope.ts`); a name outside it is answered exactly like a table that does not exist
 * (the engine's own not-found wording, at the name's position), and no engine hint ("Did you mean
 * finance.salaries?") may name a table outside it. Three fences, in order:
 * 1. Before the engine sees the SQL: every `dataset.name` of a dataset the engine holds is checked
 *    against the scope (a dataset the person may not see is never bound, so no binder error can
 *    describe its columns). Names inside string literals and comments count too: fails closed.
 * 2. After the engine parsed or dry-ran it: the tables it reports reading (views resolved).
 * 3. Any error's suggestions are kept only when they name something in scope.
 */
import { datasetCoverage, inScope, type Scope } from "./scope";
import { WarehouseError } from "./types";

/** What an engine answers for a table that does not exist (`dataset.table` as written), at a position in the SQL. */
export type NotFound = (
  /** `datasetSeen`: whether the person sees any of the dataset (else it does not exist for them). */
  ref: { dataset: string; table: string; datasetSeen: boolean },
  position: { line: number; column: number },
) => WarehouseError;

const IDENT = "[A-Za-z_][\\w$-]*";

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Line and column (1-based) of an offset in `text`. */
function positionAt(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset).split("\n");
  return { line: before.length, column: before[before.length - 1].length + 1 };
}

/**
 * Fence 1: throws the engine's not-found error for the first `dataset.table` of `datasets` (the
 * dataset names the engine holds, e.g. `shop`, `finance`) that the scope does not allow.
 */
export function refuseUnscopedNames(
  sql: string,
  scope: Scope,
  datasets: readonly string[],
  notFound: NotFound,
): void {
  const hit = firstUnscopedName(sql, scope, datasets);
  if (hit) throw tagged(notFound(hit.ref, hit.position), [`${hit.ref.dataset}.${hit.ref.table}`]);
}

/** Whether every `dataset.table` that `sql` names (of `datasets`) is inside the scope. */
export function namesInScope(sql: string, scope: Scope, datasets: readonly string[]): boolean {
  return firstUnscopedName(sql, scope, datasets) === undefined;
}

function firstUnscopedName(
  sql: string,
  scope: Scope,
  datasets: readonly string[],
): { ref: Parameters<NotFound>[0]; position: { line: number; column: number } } | undefined {
  if (scope.all) return undefined;
  // Quotes and backticks may split or wrap a name (`p.finance.salaries`, "finance"."salaries");
  // replacing them with spaces keeps every offset where it was.
  const plain = sql.replace(/[`"]/g, " ");
  for (const dataset of datasets) {
    const name = new RegExp(`(?<![\\w$-])${escape(dataset)}\\s*\\.\\s*(${IDENT})`, "gi");
    for (const m of plain.matchAll(name)) {
      const table = `${dataset}.${m[1]}`;
      if (inScope(scope, table)) continue;
      // A quoted name ("finance"."salaries") starts at its quote, as the engine reports it.
      const start = m.index > 0 && /[`"]/.test(sql[m.index - 1]) ? m.index - 1 : m.index;
      return {
        ref: { dataset, table: m[1], datasetSeen: datasetCoverage(scope, dataset) !== "none" },
        position: positionAt(sql, start),
      };
    }
  }
  return undefined;
}

/** Fence 2: the tables the engine says the statement reads, each in scope, else not found. */
export function refuseUnscopedTables(tables: readonly string[], scope: Scope, notFound: NotFound): void {
  if (scope.all) return;
  const outside = tables.filter((t) => !inScope(scope, t));
  if (outside.length) {
    const parts = outside[0].split(".");
    const dataset = parts.slice(0, -1).join(".");
    const ref = {
      dataset,
      table: parts[parts.length - 1],
      datasetSeen: datasetCoverage(scope, dataset) !== "none",
    };
    throw tagged(notFound(ref, { line: 1, column: 1 }), outside);
  }
}

/** Catalog views and functions that list every table, whatever the scope (DuckDB). */
const INTROSPECTION = /\b(information_schema|pg_catalog|sqlite_master|duckdb_\w+\s*\(|pragma_\w+\s*\()/i;

/** A limited scope may not read the engine's catalog: it would list tables outside it. */
export function refuseIntrospection(sql: string, scope: Scope): void {
  if (scope.all || !INTROSPECTION.test(sql)) return;
  throw new WarehouseError(
    "refused",
    "Catalog views and functions (information_schema, duckdb_tables() …) are not available; use list_tables and describe_table.",
  );
}

/**
 * Fence 3: an engine error whose suggestions ("Did you mean "x"?", "Candidate tables: …") name a
 * table outside the scope loses them. `known` is every table id the engine holds; an unqualified
 * suggestion stays only when a table in scope has that name.
 */
export function scrubSuggestions(
  err: WarehouseError,
  scope: Scope,
  known: readonly string[],
): WarehouseError {
  if (scope.all) return err;
  const allowed = (name: string) => {
    const n = name.toLowerCase();
    if (n.includes(".")) return known.some((id) => id.toLowerCase().endsWith(n) && inScope(scope, id));
    return known.some((id) => id.toLowerCase().split(".").at(-1) === n && inScope(scope, id));
  };
  const clean = (text: string) =>
    text
      .replace(/\s*Did you mean "?([\w.$-]+)"?\?/g, (all, name: string) => (allowed(name) ? all : ""))
      .replace(/\s*Candidate tables: ([^\n]*)/g, (_all, list: string) => {
        const kept = list
          .split(",")
          .map((s) => s.trim())
          .filter((s) => allowed(s.replace(/"/g, "")));
        return kept.length ? `\nCandidate tables: ${kept.join(", ")}` : "";
      });
  const message = clean(err.message);
  const engineMessage = err.details.engineMessage;
  if (message === err.message && (engineMessage === undefined || clean(engineMessage) === engineMessage))
    return err;
  return new WarehouseError(
    err.category,
    message,
    { ...err.details, ...(engineMessage !== undefined ? { engineMessage: clean(engineMessage) } : {}) },
    { cause: err.cause, ...(err.outOfScope ? { outOfScope: err.outOfScope } : {}) },
  );
}

function tagged(err: WarehouseError, tables: readonly string[]): WarehouseError {
  return new WarehouseError(err.category, err.message, err.details, { cause: err.cause, outOfScope: tables });
}

/**
 * SQL as BigQuery reads its names, for the checks above: comments (which may separate a name's
 * parts) become spaces. A backslash inside backticks (an escape that could spell a hidden name,
 * `` `fin\x61nce` ``, `` `INFORMATION_SCHEM\x41` ``) is refused to every scope: a full scope's
 * fences (INFORMATION_SCHEMA, the uploads dataset) match names as written.
 */
export function bigQueryNamesText(sql: string): string {
  if (/`[^`]*\\[^`]*`/.test(sql)) {
    throw new WarehouseError(
      "bad_input",
      "Escapes inside backticks are not accepted; write table and column names plainly.",
    );
  }
  return sql.replace(/\/\*[\s\S]*?\*\/|--[^\n]*|#[^\n]*/g, (c) => " ".repeat(c.length));
}

/**
 * The uploads fence, for every scope (full scope too), before the engine sees the SQL and again on
 * the tables it reports: a table of the uploads dataset (`dataset`, the bare id) is readable only
 * when it is one of this conversation's uploads (`own`: `dataset.table` or `project.dataset.table`,
 * any case). Any other is answered like a table that does not exist, so no engine error ever
 * describes another conversation's file. Fails closed: names inside literals and comments count,
 * and escapes inside backticks (which could spell the dataset) are refused.
 */
export function refuseOtherUploads(
  text: string,
  uploads: { dataset: string; qualified: string },
  own: readonly string[],
  notFound: NotFound,
): void {
  if (/`[^`]*\\[^`]*`/.test(text)) {
    throw new WarehouseError(
      "bad_input",
      "Escapes inside backticks are not accepted; write table and column names plainly.",
    );
  }
  const tails = new Set(own.map((id) => id.toLowerCase().split(".").slice(-2).join(".")));
  const plain = text.replace(/[`"]/g, " ");
  const name = new RegExp(`(?<![\\w$-])${escape(uploads.dataset)}\\s*\\.\\s*(${IDENT}|\\*)?`, "gi");
  for (const m of plain.matchAll(name)) {
    const table = m[1] ?? "";
    if (table && tails.has(`${uploads.dataset}.${table}`.toLowerCase())) continue;
    const start = m.index > 0 && /[`"]/.test(text[m.index - 1]) ? m.index - 1 : m.index;
    const ref = { dataset: uploads.qualified, table: table || "*", datasetSeen: own.length > 0 };
    throw tagged(notFound(ref, positionAt(text, start)), [`${uploads.qualified}.${table || "*"}`]);
  }
}

/** The uploads fence on the tables the engine reports reading (`project.dataset.table`). */
export function refuseOtherUploadTables(
  tables: readonly string[],
  uploads: { qualified: string },
  own: readonly string[],
  notFound: NotFound,
): void {
  const mine = new Set(own.map((id) => id.toLowerCase()));
  const prefix = `${uploads.qualified.toLowerCase()}.`;
  const other = tables.filter((t) => t.toLowerCase().startsWith(prefix) && !mine.has(t.toLowerCase()));
  if (!other.length) return;
  const ref = { dataset: uploads.qualified, table: other[0].split(".").at(-1)!, datasetSeen: own.length > 0 };
  throw tagged(notFound(ref, { line: 1, column: 1 }), other);
}

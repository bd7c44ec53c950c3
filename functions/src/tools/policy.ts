/**
 * The rules every engine applies before SQL reaches it: sane input, one read-only statement,
 * tables inside the allowed scope. Messages say what to change, because the planner reads them.
 */
import { WarehouseError, type QueryContext } from "./types";

/** Longest SQL accepted; a real analytical query is far shorter, and the model pays for every token. */
export const MAX_SQL_CHARS = 100_000;

/** One Markdown code fence around the whole text, with or without a language tag (```sql … ```). */
const FENCE = /^```[A-Za-z0-9_-]*[ \t]*\r?\n?([\s\S]*?)\r?\n?[ \t]*```$/;

/**
 * The statement a model meant: chat models often wrap a tool's SQL in one Markdown fence and end it
 * with a semicolon. Both are stripped (one fence, trailing semicolons and space), so the statement
 * runs on the first try and the person and the audit log see the statement itself. Anything inside
 * is left alone: two statements in a fence are still two statements, refused by the engine's check.
 */
export function stripSqlWrapping(sql: string): string {
  let text = sql.trim();
  const fenced = FENCE.exec(text);
  if (fenced) text = fenced[1].trim();
  return text.replace(/(?:\s*;)+$/, "").trim();
}

/** Refuses empty, oversized or non-string SQL before any engine sees it; strips a fence and trailing semicolons. */
export function checkSqlInput(sql: unknown): string {
  if (typeof sql !== "string") {
    throw new WarehouseError("bad_input", `The sql argument must be a string, got ${describe(sql)}.`);
  }
  const trimmed = stripSqlWrapping(sql);
  if (!trimmed || /^(;|\s)*$/.test(trimmed)) {
    throw new WarehouseError("bad_input", "The SQL is empty. Send one SELECT statement.");
  }
  if (sql.length > MAX_SQL_CHARS) {
    throw new WarehouseError(
      "bad_input",
      `The SQL is ${sql.length.toLocaleString("en-US")} characters; the limit is ${MAX_SQL_CHARS.toLocaleString("en-US")}. ` +
        "Write a shorter query (aggregate in SQL instead of listing values).",
    );
  }
  return trimmed;
}

function describe(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  return typeof v === "object" ? "an object" : `a ${typeof v}`;
}

/** Refuses anything but a single SELECT (statement type as reported by the engine, not parsed by us). */
export function requireSelect(statementType: string, statementCount = 1): void {
  if (statementCount > 1) {
    throw new WarehouseError(
      "refused",
      `The SQL contains ${statementCount} statements; send exactly one SELECT statement (no scripts).`,
      { statementType: "SCRIPT" },
    );
  }
  if (statementType.toUpperCase() !== "SELECT") {
    throw new WarehouseError(
      "refused",
      `Only read-only SELECT queries are allowed; this statement's type is ${statementType}. Rewrite it as one SELECT.`,
      { statementType },
    );
  }
}

/** Refuses tables outside the allowlist; `allowed(table)` decides per fully qualified name. */
export function requireInScope(tables: string[], allowed: (table: string) => boolean, scope: string): void {
  const outside = tables.filter((t) => !allowed(t));
  if (outside.length) {
    throw new WarehouseError(
      "access_denied",
      `The query reads ${outside.join(", ")}, outside the allowed data (${scope}). Use list_tables to see what you may query.`,
      { tables: outside },
    );
  }
}

/** Throws the abort reason as a cancellation if the run was cancelled. */
export function throwIfAborted(ctx: Pick<QueryContext, "signal">): void {
  if (ctx.signal?.aborted) {
    throw new WarehouseError("timeout", "The query was cancelled because the run was cancelled.");
  }
}

/** Formats bytes for messages: exact number plus a readable unit. */
export function formatBytes(n: number): string {
  const units = ["B", "KB", "MB", "GB", "TB", "PB"];
  let v = n;
  let u = 0;
  while (v >= 1000 && u < units.length - 1) {
    v /= 1000;
    u++;
  }
  return `${n.toLocaleString("en-US")} bytes (${u === 0 ? v : v.toFixed(2)} ${units[u]})`;
}

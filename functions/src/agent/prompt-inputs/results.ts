/**
 * Pure judgements over tool results: what went wrong, the concrete refinement the planner gets, the
 * honest failure summary the generator gets, and the digest of results for answer writing.
 */
import type { DeclaredJoin } from "../../context/catalog";
import { fanOutRefinement, fanOuts, type FanOut } from "../../context/fan-out";
import type { ToolArtifact } from "../../tools/types";
import type { TurnResult } from "../state";
import { statedFacts, unsupportedFacts } from "../../context/computed";
import type { DefinitionCandidate } from "../../context/definitions";

export type Problem =
  | { kind: "error"; result: TurnResult; artifact: Extract<ToolArtifact, { kind: "error" }> }
  | { kind: "empty"; result: TurnResult; sql: string }
  | { kind: "fan_out"; result: TurnResult; sql: string; fanOut: FanOut }
  /** The facts stated beside the query claim what its SQL does not do (context/computed.ts). */
  | { kind: "unsupported_facts"; result: TurnResult; sql: string; claims: string[] };

/**
 * Errors, empty query results and — with the team's declared joins — sums across a one-to-many
 * join that repeat rows (context/fan-out.ts) in a batch of tool results.
 */
export function findProblems(
  results: TurnResult[],
  joins: readonly DeclaredJoin[] = [],
  definitions: readonly DefinitionCandidate[] = [],
): Problem[] {
  const out: Problem[] = [];
  for (const r of results) {
    const a = r.artifact;
    if (a.kind === "error") out.push({ kind: "error", result: r, artifact: a });
    else if (a.kind === "query" && a.result.totalRows === 0)
      out.push({ kind: "empty", result: r, sql: a.result.sql });
    else if (a.kind === "query") {
      const found = fanOuts(a.result.sql, joins)[0];
      const claims = unsupportedFacts(statedFacts(r.args), a.result.sql, definitions);
      if (found) out.push({ kind: "fan_out", result: r, sql: a.result.sql, fanOut: found });
      else if (claims.length) out.push({ kind: "unsupported_facts", result: r, sql: a.result.sql, claims });
    }
  }
  return out;
}

/** True when the batch ran at least one query that returned rows. */
export function hasRows(results: TurnResult[]): boolean {
  return results.some((r) => r.artifact.kind === "query" && r.artifact.result.totalRows > 0);
}

// BigQuery: "Unrecognized name: prodct_name; Did you mean product_name? at [1:8]"; DuckDB words it
// 'Referenced column "x" not found ... Candidate bindings: "y"'.
const UNRECOGNIZED = /Unrecognized name:\s*([\w.`"]+)[;,.]?\s*Did you mean\s+([\w.`"]+)\??/i;
const DUCK_CANDIDATE = /column "?([\w.]+)"? not found[\s\S]*?Candidate bindings:\s*"?([\w.]+)"?/i;

/** The concrete instruction the planner gets for one problem. */
export function refinementFor(p: Problem): string {
  if (p.kind === "fan_out") return fanOutRefinement(p.fanOut, p.sql);
  if (p.kind === "unsupported_facts") {
    return (
      `The facts stated with this query do not match its SQL: ${p.claims.join("; ")}.\n${p.sql}\n` +
      "Fix the SQL so it does what the facts say, or state only what the SQL does, then query again."
    );
  }
  if (p.kind === "empty") {
    return (
      `The query returned no rows:\n${p.sql}\n` +
      "Check the filter values before concluding there is no data: query the DISTINCT values (or MIN/MAX for dates) " +
      "of each filtered column, fix case, spelling or date ranges, or relax the filters, then query again."
    );
  }
  const a = p.artifact;
  const engine = a.details.engineMessage ?? a.message;
  const named = UNRECOGNIZED.exec(engine) ?? DUCK_CANDIDATE.exec(engine);
  const sql = a.sql ? `\nFailed SQL:\n${a.sql}` : "";
  if (named) {
    return `The column ${named[1]} does not exist; the engine suggests ${named[2]}. Rewrite the SQL using ${named[2]}.${sql}`;
  }
  switch (a.category) {
    case "not_found":
      return `${a.message}. Use only the tables listed above (call list_tables or describe_table to check names).${sql}`;
    case "invalid_query":
      return `The SQL is invalid: ${engine}. Fix it (check names with describe_table) and query again.${sql}`;
    case "timeout":
      return `The query timed out: ${a.message}. Aggregate more, filter earlier, or add a LIMIT.${sql}`;
    case "bytes_limit":
    case "budget":
      return `The query would read too much data: ${a.message}. Select fewer columns and filter on partition columns.${sql}`;
    default:
      return `${p.result.tool} failed (${a.category}): ${a.message}.${sql}`;
  }
}

/** One refinement for a whole batch. */
export function refinementForBatch(problems: Problem[]): string {
  return problems.map(refinementFor).join("\n\n");
}

/** What failed, for the honest answer after retries ran out. */
export function failureSummary(problems: Problem[]): string {
  if (problems.length === 0) return "the question could not be answered within the step budget";
  return problems
    .map((p) =>
      p.kind === "empty"
        ? `the query \`${oneLine(p.sql)}\` returned no rows`
        : p.kind === "fan_out"
          ? `the query \`${oneLine(p.sql)}\` repeats rows of ${p.fanOut.table} (${p.fanOut.aggregate} across a one-to-many join)`
          : p.kind === "unsupported_facts"
            ? `the facts stated with \`${oneLine(p.sql)}\` do not match it (${p.claims.join("; ")})`
            : `${p.result.tool} failed (${p.artifact.category}): ${p.artifact.message}`,
    )
    .join("; ");
}

/** Text digest of the turn's tool results for the generator and the adequacy check. */
export function digestResults(results: TurnResult[], maxChars = 8_000): string {
  const parts = results.map((r) => {
    const a = r.artifact;
    switch (a.kind) {
      case "query":
        return (
          `SQL: ${a.result.sql}\nRows: ${a.result.totalRows}${a.result.truncated ? " (truncated)" : ""}\n` +
          a.result.preview
        );
      case "tables":
        return `Tables: ${a.tables.map((t) => t.id).join(", ")}`;
      case "schema":
        return `Schema of ${a.schema.id}: ${a.schema.columns.map((c) => `${c.name} ${c.type}`).join(", ")}`;
      case "error":
        return `${r.tool} failed (${a.category}): ${a.message}${a.sql ? `\nSQL: ${a.sql}` : ""}`;
    }
  });
  const text = parts.join("\n\n");
  return text.length > maxChars ? `${text.slice(0, maxChars)}\n…(cut)` : text;
}

function oneLine(sql: string): string {
  const s = sql.replace(/\s+/g, " ").trim();
  return s.length > 160 ? `${s.slice(0, 157)}...` : s;
}

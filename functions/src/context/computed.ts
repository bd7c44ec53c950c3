/**
 * "How this was computed", from structured facts, never from free prose: what the planner stated
 * beside its SQL (`bq_query`'s `facts`: definitions, filters, time range, grain, caveats), each
 * checked against the SQL that ran before it is shown (a stated range, filter value or definition
 * the SQL does not contain sends the planner back with the reason), plus what is read off the
 * queries themselves — the tables, the team's definitions they used, rows cut — and whether the
 * data team stands behind the answer: its SQL is a verified query, or every aggregate in it is an
 * approved definition's.
 */
import type { ComputedFacts, DefinitionUse, StatedFacts } from "../contract/events";
import { aggregatesOf, definitionsUsed, normalSql, type DefinitionCandidate } from "./definitions";

/** A verified query the question was given (a context file's, or approved in the admin page). */
export interface VerifiedCandidate {
  question: string;
  sql: string;
}

/** The facts a `bq_query` call stated, as the model wrote them (snake_case), made the contract's shape. */
export function statedFacts(args: Record<string, unknown> | undefined): StatedFacts | undefined {
  const f = args?.facts as
    | {
        definitions?: string[];
        filters?: { column: string; values: string[] }[];
        time_range?: { column?: string; from?: string; to?: string };
        grain?: StatedFacts["grain"];
        caveats?: string[];
      }
    | undefined;
  if (!f || typeof f !== "object") return undefined;
  return {
    ...(f.definitions?.length ? { definitions: f.definitions } : {}),
    ...(f.filters?.length ? { filters: f.filters } : {}),
    ...(f.time_range && (f.time_range.from || f.time_range.to) ? { timeRange: f.time_range } : {}),
    ...(f.grain ? { grain: f.grain } : {}),
    ...(f.caveats?.length ? { caveats: f.caveats } : {}),
  };
}

/** `2025-01-01` and the forms SQL writes it in; a year's first or last day also as the year itself. */
function dateForms(date: string): string[] {
  const d = date.trim().slice(0, 10);
  const forms = [d, d.replaceAll("-", "")];
  const m = /^(\d{4})-(01-01|12-31)$/.exec(d);
  if (m) forms.push(m[1]);
  return forms;
}

const words = (sql: string) => new Set(sql.toLowerCase().match(/[\w.-]+/g) ?? []);

/**
 * What the stated facts claim that the SQL does not contain, each in words the planner can act on;
 * [] when every claim holds. `definitions` are the terms the question was given.
 */
export function unsupportedFacts(
  stated: StatedFacts | undefined,
  sql: string,
  definitions: readonly DefinitionCandidate[],
): string[] {
  if (!stated) return [];
  const out: string[] = [];
  const text = sql.toLowerCase();
  const tokens = words(sql);
  const { timeRange } = stated;
  for (const [edge, date] of [
    ["from", timeRange?.from],
    ["to", timeRange?.to],
  ] as const) {
    if (date && !dateForms(date).some((f) => text.includes(f.toLowerCase())))
      out.push(`the time range says ${edge} ${date}, but the SQL has no such bound`);
  }
  for (const f of stated.filters ?? []) {
    const column = f.column.split(".").pop()!.toLowerCase();
    if (!tokens.has(column) && !text.includes(column))
      out.push(`the filter on ${f.column} is not in the SQL`);
    for (const v of f.values) {
      if (!text.includes(v.toLowerCase())) out.push(`the filter ${f.column} = ${v} is not in the SQL`);
    }
  }
  for (const name of stated.definitions ?? []) {
    const def = definitions.find((d) => d.term.toLowerCase() === name.toLowerCase());
    if (!def?.sql) {
      out.push(`the definition "${name}" is not one the team's context gives for this question`);
    } else if (
      !definitionsUsed([{ ...def, origin: def.origin ?? { source: "authored", approved: true } }], [sql])
        .length
    ) {
      out.push(`the SQL does not compute "${name}" as the team defines it (${def.sql})`);
    }
  }
  return out;
}

/** The tables a query reads: `FROM`/`JOIN` names, without the query's own CTEs. */
export function tablesRead(sql: string): string[] {
  const text = sql.replace(/`/g, "");
  const ctes = new Set(
    [...text.matchAll(/(?:\bwith|,)\s*(?:recursive\s+)?([a-z_]\w*)\s+as\s*\(/gi)].map((m) =>
      m[1].toLowerCase(),
    ),
  );
  const names = [...text.matchAll(/\b(?:from|join)\s+([a-z_][\w-]*(?:\.[a-z_][\w-]*)*)/gi)].map((m) => m[1]);
  return [...new Set(names.filter((n) => !ctes.has(n.toLowerCase())))];
}

/** A query of the turn that ran: its SQL, its facts, whether its rows were cut. */
export interface RanQuery {
  sql: string;
  stated?: StatedFacts;
  truncated: boolean;
  totalRows: number;
}

/**
 * The answer's facts for the person: the definitions used, tables, filters, time range, grain and
 * caveats of the queries that ran, and whether it is verified (and by what).
 */
export function computedFacts(
  ran: readonly RanQuery[],
  definitions: readonly DefinitionCandidate[],
  verified: readonly VerifiedCandidate[],
): ComputedFacts {
  const sqls = ran.map((q) => q.sql);
  const used: DefinitionUse[] = definitionsUsed(definitions, sqls);
  // Only facts the SQL bears out: a query's stated facts are left out whole when one claim does not hold.
  const facts = ran.flatMap((q) =>
    q.stated && !unsupportedFacts(q.stated, q.sql, definitions).length ? [q.stated] : [],
  );
  const caveats = [
    ...ran
      .filter((q) => q.truncated)
      .map((q) => `Only the first rows of ${q.totalRows} are shown and were read.`),
    ...facts.flatMap((f) => f.caveats ?? []),
  ];
  const timeRange = facts.find((f) => f.timeRange)?.timeRange;
  const grain = facts.find((f) => f.grain)?.grain;
  return {
    verification: verificationOf(sqls, used, definitions, verified),
    definitions: used,
    tables: [...new Set(sqls.flatMap(tablesRead))],
    filters: facts.flatMap((f) => f.filters ?? []),
    ...(timeRange ? { timeRange } : {}),
    ...(grain ? { grain } : {}),
    caveats: [...new Set(caveats)],
    sql: sqls,
  };
}

/**
 * Verified when every query that ran is a verified query the question was given, or when every
 * aggregate every query computes is an approved definition's; else written for this question.
 */
function verificationOf(
  sqls: readonly string[],
  used: readonly DefinitionUse[],
  definitions: readonly DefinitionCandidate[],
  verified: readonly VerifiedCandidate[],
): ComputedFacts["verification"] {
  if (!sqls.length) return { status: "written" };
  const byQuery = sqls.map((s) => verified.find((v) => normalSql(v.sql) === normalSql(s)));
  if (byQuery.every(Boolean)) {
    return { status: "verified", by: "verified_query", names: [...new Set(byQuery.map((v) => v!.question))] };
  }
  const approved = used.filter((u) => u.approved);
  const approvedAggs = new Set(
    definitions
      .filter((d) => d.sql && approved.some((u) => u.name === d.term))
      .flatMap((d) => aggregatesOf(d.sql!)),
  );
  const everyAggregate = sqls.every((s) => {
    const aggs = aggregatesOf(s);
    return aggs.length > 0 && aggs.every((a) => approvedAggs.has(a));
  });
  if (approved.length && everyAggregate) {
    return { status: "verified", by: "definitions", names: approved.map((u) => u.name) };
  }
  return { status: "written" };
}

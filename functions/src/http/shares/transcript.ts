/**
 * What a shared conversation shows and what it used (pure, over the thread's messages as plain
 * dicts — `toPlain` of its state): the questions, the queries with their results, the clarifying
 * questions and the answers; never the schema look-ups (`list_tables`, `describe_table`), which
 * list and describe tables of the owner's scope that the conversation's answers may not use.
 */
import { datasetNamesOf, inScope, type Scope } from "../../tools/scope";

type Dict = Record<string, unknown>;
interface ToolCall {
  id?: string;
  name?: string;
  args?: Dict;
}

/** The tools whose calls and results a shared conversation keeps: its queries and its questions to the person. */
const KEPT_TOOLS = new Set(["bq_query", "ask_user"]);

const callsOf = (m: Dict): ToolCall[] => (Array.isArray(m.tool_calls) ? (m.tool_calls as ToolCall[]) : []);

const hasText = (content: unknown): boolean =>
  typeof content === "string"
    ? content.trim() !== ""
    : Array.isArray(content) &&
      content.some((p: { text?: unknown }) => typeof p?.text === "string" && p.text.trim() !== "");

/**
 * The conversation as it is shared and copied: human messages; AI messages with only their calls of
 * the kept tools that have a result (a call without one — a stopped run, a question still waiting —
 * is left out, so a copy never holds a call the model would have to answer); those calls' tool
 * messages. An AI message left with neither calls nor text is dropped.
 */
export function sharedTranscript(messages: readonly Dict[]): Dict[] {
  const answered = new Set(
    messages
      .filter((m) => m.type === "tool" && typeof m.tool_call_id === "string")
      .map((m) => m.tool_call_id),
  );
  const kept = new Set<string>();
  const out: Dict[] = [];
  for (const m of messages) {
    if (m.type === "human") out.push(m);
    else if (m.type === "ai") {
      const calls = callsOf(m);
      const keep = calls.filter((c) => KEPT_TOOLS.has(c.name ?? "") && c.id && answered.has(c.id));
      for (const c of keep) kept.add(c.id!);
      if (keep.length === calls.length) {
        out.push(m);
        continue;
      }
      const { tool_calls: _c, invalid_tool_calls: _i, additional_kwargs: extra, ...rest } = m;
      // Provider signatures belong to the calls as the model made them: not kept for fewer calls.
      const { signatures: _s, ...kwargs } = (extra ?? {}) as Dict;
      const next: Dict = {
        ...rest,
        ...(Object.keys(kwargs).length ? { additional_kwargs: kwargs } : {}),
        ...(keep.length ? { tool_calls: keep } : {}),
      };
      if (keep.length || hasText(next.content)) out.push(next);
    } else if (m.type === "tool" && kept.has(m.tool_call_id as string)) out.push(m);
  }
  return out;
}

/** One query of the conversation: its SQL as it was run, and whether it ran (else it failed or was refused). */
export interface SharedQuery {
  sql: string;
  ran: boolean;
}

/** The `bq_query` calls of a transcript, with the SQL their results name (else the SQL the model sent). */
export function queriesOf(transcript: readonly Dict[]): SharedQuery[] {
  const results = new Map<string, Dict>();
  for (const m of transcript) if (m.type === "tool") results.set(m.tool_call_id as string, m);
  const out: SharedQuery[] = [];
  for (const m of transcript) {
    if (m.type !== "ai") continue;
    // An investigation's steps ran as queries of its own (no tool call): its report carries them.
    for (const sql of investigationSql(m)) out.push({ sql, ran: true });
    for (const c of callsOf(m)) {
      if (c.name !== "bq_query") continue;
      const artifact = (results.get(c.id ?? "")?.artifact ?? {}) as {
        kind?: string;
        sql?: unknown;
        result?: { sql?: unknown };
      };
      const sql = [artifact.result?.sql, artifact.sql, c.args?.sql].find(
        (s): s is string => typeof s === "string" && s.trim() !== "",
      );
      if (sql) out.push({ sql, ran: artifact.kind === "query" });
    }
  }
  return out;
}

/** The SQL of the steps whose rows an investigation's report shows (`quarry_investigation_results`). */
function investigationSql(m: Dict): string[] {
  const results = (m.response_metadata as Dict | undefined)?.quarry_investigation_results;
  if (!Array.isArray(results)) return [];
  return results
    .map((r: { sql?: unknown }) => r?.sql)
    .filter((s): s is string => typeof s === "string" && s.trim() !== "");
}

/** Every string in `value`, deeply (message text, tool calls' arguments, results, metadata). */
function stringsOf(value: unknown, out: string[] = [], depth = 0): string[] {
  if (depth > 50) return out;
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) for (const v of value) stringsOf(v, out, depth + 1);
  else if (value && typeof value === "object")
    for (const v of Object.values(value)) stringsOf(v, out, depth + 1);
  return out;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * The first table of `tableIds` (the warehouse's tables) outside `scope` that `texts` name as
 * `dataset.table` (any form SQL may use: `p.finance.salaries`, `finance.salaries`, quoted or not),
 * or undefined when every table named is in scope.
 */
export function tableNamedOutside(
  texts: readonly unknown[],
  tableIds: readonly string[],
  scope: Scope,
): string | undefined {
  if (scope.all) return undefined;
  const outside = tableIds.filter((id) => !inScope(scope, id));
  if (!outside.length) return undefined;
  // Quotes and backticks may wrap or split a name: read without them, in lower case.
  const text = stringsOf(texts).join("\n").replace(/[`"]/g, "").toLowerCase();
  for (const id of outside) {
    const table = id.split(".").at(-1)!.toLowerCase();
    for (const dataset of datasetNamesOf(id.toLowerCase())) {
      const name = new RegExp(`(?<![\\w$-])${escape(dataset)}\\.${escape(table)}(?![\\w$-])`);
      if (name.test(text)) return id;
    }
  }
  return undefined;
}

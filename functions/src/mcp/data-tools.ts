/**
 * MCP's data tools — `list_tables`, `describe_table`, `run_sql`, `search_context` — on the same code
 * paths as the planner's: the warehouse tools (audited; scope, read-only check, byte caps and the
 * person's bytes left all inside `bq_query`) called with a run configuration that carries the
 * caller as a run's person, and the authored context chosen as for a question, within the caller's
 * scope. Every refusal comes back as the tool's own words (`Error (<category>): …`).
 */
import { randomUUID } from "node:crypto";
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { ToolMessage } from "@langchain/core/messages";
import type { QueryResult, TableInfo, TableSchema, ToolArtifact } from "../contract/events";
import type { Knowledge } from "../context/knowledge";
import { PERSON_KEY, type RunPerson } from "../tools/person";
import type { ToolName } from "../tools/types";
import { markdownTable, previewRows, type RowsPreview } from "./results";

/** A tool's answer: text for every client, structured content for those that read it. */
export type Answer<T> = { ok: true; text: string; data: T } | { ok: false; text: string };

/** What the data tools need: the warehouse tools, the context search, the caller as a run's person. */
export interface DataDeps {
  tools: readonly StructuredToolInterface[];
  searchContext(query: string): Promise<Knowledge>;
  person: RunPerson;
  signal?: AbortSignal;
}

/** Calls one of the warehouse tools as the planner would, for the caller; its text and artifact. */
async function callTool(
  deps: DataDeps,
  name: ToolName,
  args: Record<string, unknown>,
): Promise<{ text: string; artifact: ToolArtifact }> {
  const tool = deps.tools.find((t) => t.name === name);
  if (!tool) throw new Error(`the warehouse tool ${name} is missing`);
  const id = randomUUID();
  const msg = (await tool.invoke(
    { id, name, args, type: "tool_call" },
    {
      configurable: {
        [PERSON_KEY]: deps.person,
        // Not a thread's query: the per-conversation budget starts at zero; the audit names the call.
        quarry: { threadId: "mcp", runId: id, bytesBilledSoFar: 0 },
      },
      ...(deps.signal ? { signal: deps.signal } : {}),
    },
  )) as ToolMessage;
  return { text: String(msg.content), artifact: msg.artifact as ToolArtifact };
}

function refused(text: string): Answer<never> {
  return { ok: false, text };
}

export async function listTables(deps: DataDeps): Promise<Answer<{ tables: TableInfo[] }>> {
  const { text, artifact } = await callTool(deps, "list_tables", {});
  return artifact.kind === "tables" ? { ok: true, text, data: { tables: artifact.tables } } : refused(text);
}

export async function describeTable(deps: DataDeps, table: string): Promise<Answer<TableSchema>> {
  const { text, artifact } = await callTool(deps, "describe_table", { table });
  return artifact.kind === "schema" ? { ok: true, text, data: artifact.schema } : refused(text);
}

/** What `run_sql` answers with: the rows shown and what the query cost. */
export type SqlOutput = RowsPreview & { bytes_processed: number; bytes_billed: number; duration_ms: number };

/**
 * Runs one read-only statement through `bq_query` (dry run, read-only, scope, byte caps, the
 * person's bytes left); the rows cut to `maxRows` with the "N of M rows" notice.
 */
export async function runSql(
  deps: DataDeps,
  sql: string,
  maxRows: number,
): Promise<Answer<SqlOutput> & { billed: number }> {
  const { text, artifact } = await callTool(deps, "bq_query", { sql });
  if (artifact.kind !== "query") return { ...refused(text), billed: 0 };
  const r: QueryResult = artifact.result;
  const preview = previewRows(r, maxRows);
  return {
    ok: true,
    billed: r.bytesBilled,
    text: `${markdownTable(preview)}\n\nSQL:\n${r.sql}`,
    data: {
      ...preview,
      bytes_processed: r.bytesProcessed,
      bytes_billed: r.bytesBilled,
      duration_ms: r.durationMs,
    },
  };
}

/** What `search_context` answers with: the team's definitions that match, within the caller's scope. */
export interface ContextOutput {
  rules: string[];
  glossary: { term: string; meaning: string; sql?: string }[];
  verified_queries: { question: string; sql: string }[];
}

export async function searchContext(deps: DataDeps, query: string): Promise<Answer<ContextOutput>> {
  const k = await deps.searchContext(query);
  const data: ContextOutput = {
    rules: k.rules,
    glossary: k.glossary.map((g) => ({
      term: g.term,
      meaning: g.meaning,
      ...(g.sql ? { sql: g.sql } : {}),
    })),
    verified_queries: k.examples.map((e) => ({ question: e.question, sql: e.sql })),
  };
  const lines = [
    ...(data.glossary.length
      ? [
          "Glossary:",
          ...data.glossary.map((g) => `- ${g.term}: ${g.meaning}${g.sql ? ` (\`${g.sql}\`)` : ""}`),
        ]
      : []),
    ...(data.verified_queries.length
      ? ["Verified queries:", ...data.verified_queries.map((q) => `- ${q.question}\n  ${q.sql}`)]
      : []),
    ...(data.rules.length ? ["Rules:", ...data.rules.map((r) => `- ${r}`)] : []),
  ];
  return { ok: true, text: lines.join("\n") || `Nothing in the team's context matches "${query}".`, data };
}

/**
 * What the page shows of a conversation: turns (a question and everything the agent did for it),
 * and how to rebuild them from the checkpointed messages after a reload.
 */
import type {
  ComputedFacts,
  DefinitionUse,
  InvestigationReport,
  InvestigationStepEvent,
  Phase,
  PlanReview,
  StepResult,
  Usage,
} from "@quarry/functions/contract";
import type { QueryResult, ToolArtifact } from "@quarry/functions/contract";
import type { QueryView, ResultView } from "../results/query-view";
import { MAX_FOLLOW_UPS } from "@quarry/functions/contract";
import { attachmentsOf, type Attachment } from "../data/attachments";

export type { Phase };
export type { QueryView, ResultView } from "../results/query-view";

interface RetryView {
  attempt: number;
  maxRetries: number;
  reason: string;
}

/** "asking": the agent asked a clarifying question and waits for the answer. */
type TurnStatus = "streaming" | "asking" | "done" | "stopped" | "error";

/** The agent's clarifying question in a turn (its `ask_user` call), and the person's answer once given. */
export interface ClarificationView {
  question: string;
  choices: string[];
  answer?: string;
}

/** Prefix of the tool message that carries the person's answer (functions' clarify node). */
const ANSWER_PREFIX = "The user answered: ";

/** A clarification from `ask_user` arguments or an interrupt's value (`{ question, choices }`). */
export function toClarification(v: unknown): ClarificationView | undefined {
  if (typeof v !== "object" || v === null) return undefined;
  const { question, choices } = v as { question?: unknown; choices?: unknown };
  if (typeof question !== "string" || !question.trim()) return undefined;
  return {
    question,
    choices: Array.isArray(choices) ? choices.filter((c): c is string => typeof c === "string") : [],
  };
}

/** An investigation in a turn: its plan (with what could not be applied of an answer), progress, report. */
export interface InvestigationView {
  review?: PlanReview & { errors?: string[] };
  /** The person's answer to the plan, once given. */
  answered?: string;
  steps: Omit<InvestigationStepEvent, "type">[];
  report?: InvestigationReport;
}

/** The plan shown for review, from an interrupt's value (`kind: "investigation_plan"`). */
export function toPlanReview(v: unknown): InvestigationView["review"] | undefined {
  const r = v as Partial<PlanReview> | null;
  if (!r || r.kind !== "investigation_plan" || !r.plan || !Array.isArray(r.plan.steps)) return undefined;
  return r as InvestigationView["review"];
}

export interface Turn {
  key: string;
  question: string;
  /** The question's images and PDFs (shown as thumbnails and chips, sent again by Regenerate). */
  attachments?: Attachment[];
  answer: string;
  phase?: Phase;
  queries: QueryView[];
  retries: RetryView[];
  usage?: Usage;
  status: TurnStatus;
  error?: string;
  /** The error's code (`auth:bigquery_consent` offers Connect BigQuery). */
  errorCode?: string;
  runId?: string;
  clarification?: ClarificationView;
  /** The connection dropped while the answer streamed; the page is rejoining it. */
  reconnecting?: boolean;
  /** Questions to ask next, offered as buttons (from the answer's own model call). */
  suggestions?: string[];
  /** The team's definitions the answer's SQL used (glossary terms, authored or imported). */
  definitions?: DefinitionUse[];
  /** How the answer was computed (verified or not, definitions, tables, filters, period, caveats). */
  computed?: ComputedFacts;
  /** An investigation's plan, progress and report (`/investigate`). */
  investigation?: InvestigationView;
  /** Streamed text per AI message id (internal: the answer is the latest one). */
  streamed?: Record<string, string>;
}

/** A message as the API sends it: a plain dict (`{ type, content, id, tool_calls, artifact }`). */
export interface MessageDict {
  type: string;
  content?: unknown;
  id?: string;
  tool_calls?: { id?: string; name: string; args?: Record<string, unknown> }[];
  tool_call_chunks?: unknown[];
  tool_call_id?: string;
  name?: string;
  artifact?: unknown;
  status?: string;
  /** `quarry_stopped`: an answer the person stopped midway (kept as far as it had come). */
  response_metadata?: Record<string, unknown>;
}

/** Text of a message's content: a string, or the text blocks of a content array. */
export function messageText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((b) =>
        typeof b === "string"
          ? b
          : b && typeof b === "object" && (b as { type?: unknown }).type === "text"
            ? String((b as { text?: unknown }).text ?? "")
            : "",
      )
      .join("");
  }
  return "";
}

/** The planner's tool for a clarifying question (routed to the clarify node). */
const ASK_USER = "ask_user";

const isType = (m: MessageDict, ...types: string[]) => types.includes(m.type);
export const isHuman = (m: MessageDict) => isType(m, "human", "HumanMessage", "HumanMessageChunk", "user");
export const isAi = (m: MessageDict) => isType(m, "ai", "AIMessage", "AIMessageChunk", "assistant");
const isTool = (m: MessageDict) => isType(m, "tool", "ToolMessage", "ToolMessageChunk");

/** A QueryResult (artifact or `result` event) as the view needs it. */
export function toResultView(
  r: Omit<QueryResult, "preview" | "previewRows" | "estimatedBytes" | "sql">,
): ResultView {
  return {
    columns: r.columns ?? [],
    rows: r.rows ?? [],
    totalRows: r.totalRows ?? r.rows?.length ?? 0,
    truncated: !!r.truncated,
    ...(r.totalRowsAtLeast ? { totalRowsAtLeast: true } : {}),
    bytesProcessed: r.bytesProcessed ?? 0,
    bytesBilled: r.bytesBilled ?? 0,
    ...(r.bytesHidden ? { bytesHidden: true } : {}),
    cacheHit: !!r.cacheHit,
    durationMs: r.durationMs,
  };
}

function isArtifact(a: unknown): a is ToolArtifact {
  return typeof a === "object" && a !== null && typeof (a as { kind?: unknown }).kind === "string";
}

/**
 * The queries, answer and status of the messages of one turn (everything after its question):
 * tool calls give the SQL, tool messages' artifacts the rows or the error, the last AI text the answer.
 */
export function turnPartsFromMessages(messages: MessageDict[]): Pick<
  Turn,
  "queries" | "answer" | "clarification" | "suggestions" | "definitions" | "computed" | "investigation"
> & {
  stopped?: boolean;
} {
  const queries: QueryView[] = [];
  let answer = "";
  let meta: ReturnType<typeof answerMeta> = {};
  let clarification: ClarificationView | undefined;
  let askId: string | undefined;
  let stopped = false;
  const find = (id: string) => queries.find((q) => q.id === id);
  for (const m of messages) {
    if (isAi(m)) {
      const calls = m.tool_calls ?? [];
      for (const c of calls) {
        if (c.name === ASK_USER) {
          clarification ??= toClarification(c.args);
          askId = c.id;
          continue;
        }
        const id = c.id ?? `${m.id ?? "call"}-${queries.length}`;
        const sql =
          typeof c.args?.sql === "string"
            ? c.args.sql
            : typeof c.args?.query === "string"
              ? c.args.query
              : undefined;
        if (!find(id)) queries.push({ id, tool: c.name, sql, status: "running" });
      }
      const text = messageText(m.content);
      if (!calls.length && text.trim()) {
        answer = text;
        stopped = m.response_metadata?.quarry_stopped === true;
        meta = answerMeta(m);
      }
    } else if (isTool(m) && m.tool_call_id && m.tool_call_id === askId) {
      const text = messageText(m.content);
      if (clarification && text.startsWith(ANSWER_PREFIX))
        clarification = { ...clarification, answer: text.slice(ANSWER_PREFIX.length) };
    } else if (isTool(m) && m.tool_call_id) {
      const q = find(m.tool_call_id) ?? {
        id: m.tool_call_id,
        tool: m.name ?? "tool",
        status: "running" as const,
      };
      if (!find(q.id)) queries.push(q);
      const a = m.artifact;
      if (isArtifact(a) && a.kind === "query") {
        q.result = toResultView(a.result);
        q.sql = q.sql ?? a.result.sql;
        q.estimatedBytes = q.estimatedBytes ?? a.result.estimatedBytes;
        if (a.result.bytesHidden) q.estimateHidden = true;
        q.status = "done";
      } else if (isArtifact(a) && a.kind === "error") {
        q.error = { category: a.category, message: a.message };
        q.sql = q.sql ?? a.sql;
        q.status = "failed";
      } else {
        q.status = m.status === "error" ? "failed" : "done";
        if (m.status === "error") q.error = { category: "internal", message: messageText(m.content) };
      }
    }
  }
  // An investigation's steps: their results are kept on the report's answer.
  for (const r of meta.results ?? []) if (!find(r.ref)) queries.push(stepQuery(r));
  // Only queries and failures are evidence worth showing; successful schema look-ups are not.
  const shown = queries.filter((q) => q.sql || q.error || q.result);
  return {
    queries: shown,
    answer,
    ...(clarification ? { clarification } : {}),
    ...(meta.suggestions?.length ? { suggestions: meta.suggestions } : {}),
    ...(meta.definitions?.length ? { definitions: meta.definitions } : {}),
    ...(meta.computed ? { computed: meta.computed } : {}),
    ...(meta.report ? { investigation: { steps: [], report: meta.report } } : {}),
    ...(stopped ? { stopped } : {}),
  };
}

/** An investigation step's stored result as a query card (table and chart). */
function stepQuery(r: StepResult): QueryView {
  const result = toResultView({
    columns: r.columns.map((c) => ({ name: c.name, type: c.type ?? "STRING" })),
    rows: r.rows as ResultView["rows"],
    totalRows: r.rows.length,
    truncated: r.truncated,
    bytesProcessed: 0,
    bytesBilled: 0,
    cacheHit: false,
    durationMs: 0,
  });
  return { id: r.ref, tool: "bq_query", sql: r.sql, status: "done", result };
}

/** What the server keeps on an answer message: follow-ups, definitions used, how it was computed. */
function answerMeta(m: MessageDict): {
  suggestions?: string[];
  definitions?: DefinitionUse[];
  computed?: ComputedFacts;
  report?: InvestigationReport;
  results?: StepResult[];
} {
  const meta = m.response_metadata ?? {};
  const report = meta.quarry_investigation as InvestigationReport | undefined;
  const results = meta.quarry_investigation_results;
  return {
    ...(Array.isArray(results) ? { results: results as StepResult[] } : {}),
    ...(report && typeof report.markdown === "string" ? { report } : {}),
    suggestions: suggestionsOf(meta.quarry_suggestions),
    definitions: definitionsOf(meta.quarry_definitions),
    computed: computedOf(meta.quarry_computed),
  };
}

/** The server's follow-up questions kept on an answer message (strings only, at most three). */
function suggestionsOf(v: unknown): string[] | undefined {
  if (!Array.isArray(v)) return undefined;
  return v.filter((q): q is string => typeof q === "string" && q.trim() !== "").slice(0, MAX_FOLLOW_UPS);
}

/** The definitions kept on an answer message (well-formed entries only). */
function definitionsOf(v: unknown): DefinitionUse[] | undefined {
  if (!Array.isArray(v)) return undefined;
  return v.filter(
    (d): d is DefinitionUse =>
      !!d &&
      typeof d.name === "string" &&
      ["authored", "dbt", "lookml"].includes(d.source) &&
      typeof d.approved === "boolean" &&
      (d.file === undefined || typeof d.file === "string"),
  );
}

/** "How this was computed" kept on an answer message, when it has the shape the page draws. */
function computedOf(v: unknown): ComputedFacts | undefined {
  const c = v as Partial<ComputedFacts> | undefined;
  if (!c || typeof c !== "object" || !c.verification || !Array.isArray(c.tables) || !Array.isArray(c.sql))
    return undefined;
  return {
    ...(c as ComputedFacts),
    definitions: definitionsOf(c.definitions) ?? [],
    filters: Array.isArray(c.filters) ? c.filters : [],
    caveats: Array.isArray(c.caveats) ? c.caveats.filter((x) => typeof x === "string") : [],
  };
}

/** All turns of a thread from its checkpointed messages (after a reload). */
export function turnsFromMessages(messages: MessageDict[]): Turn[] {
  const turns: Turn[] = [];
  let current: { question: MessageDict; rest: MessageDict[] } | null = null;
  const flush = () => {
    if (!current) return;
    const parts = turnPartsFromMessages(current.rest);
    // A checkpoint is final: a call without a tool message never finished (the run was stopped).
    for (const q of parts.queries) {
      if (q.status === "running") {
        q.status = "failed";
        q.error = q.error ?? {
          category: "cancelled",
          message: "This query did not finish: the run was stopped.",
        };
      }
    }
    const { stopped, ...view } = parts;
    const attachments = attachmentsOf(current.question.content);
    turns.push({
      key: current.question.id ?? `turn-${turns.length}`,
      question: messageText(current.question.content),
      ...(attachments.length ? { attachments } : {}),
      ...view,
      retries: [],
      // A question still unanswered is the thread waiting (a new question would have followed it).
      status: stopped
        ? "stopped"
        : parts.answer
          ? "done"
          : parts.clarification && parts.clarification.answer === undefined
            ? "asking"
            : "stopped",
    });
  };
  for (const m of messages) {
    if (isHuman(m)) {
      flush();
      current = { question: m, rest: [] };
    } else if (current) {
      current.rest.push(m);
    }
  }
  flush();
  // Only the last turn can still be waiting: a question after it dropped the earlier one's ask.
  return turns.map((t, i) =>
    t.status === "asking" && i < turns.length - 1 ? { ...t, status: "stopped" } : t,
  );
}

/** Live and checkpointed views of the same queries: union by id, live details kept. */
export function mergeQueries(live: QueryView[], stored: QueryView[]): QueryView[] {
  const out = live.map((q) => ({ ...q }));
  for (const s of stored) {
    const l = out.find((q) => q.id === s.id);
    if (!l) {
      out.push(s);
      continue;
    }
    l.sql = l.sql ?? s.sql;
    l.result = l.result ?? s.result;
    l.error = l.error ?? s.error;
    l.estimatedBytes = l.estimatedBytes ?? s.estimatedBytes;
    l.estimateHidden = l.estimateHidden ?? s.estimateHidden;
    if (l.status === "running") l.status = s.status;
  }
  return out;
}

/**
 * The conversation's state machine: a reload's checkpointed messages, a new question, and every
 * stream event of its run (SDK `runs.stream` with values, messages-tuple, custom and updates
 * modes) fold into the turns the page shows. Pure, so every event sequence is unit-tested.
 */
import type { QuarryEvent, Usage } from "@quarry/functions/contract";
import { errorInWords, parseApiError } from "../data/format";
import { toContentBlock, type Attachment } from "../data/attachments";
import {
  isAi,
  isHuman,
  mergeQueries,
  messageText,
  toClarification,
  toPlanReview,
  toResultView,
  turnPartsFromMessages,
  turnsFromMessages,
  type MessageDict,
  type QueryView,
  type Turn,
} from "./model";

export interface ChatState {
  turns: Turn[];
  threadUsage?: Usage;
  /** Set when older turns were folded into a running summary by the server. */
  summarized: boolean;
}

export const EMPTY_CHAT: ChatState = { turns: [], summarized: false };

export type ChatAction =
  | {
      type: "loaded";
      values: { messages?: MessageDict[]; usage?: Usage; summary?: string } | null;
      /** What the thread waits on (its tasks' interrupts' values): an investigation's plan. */
      waiting?: unknown[];
    }
  | { type: "submitted"; key: string; question: string; attachments?: Attachment[] }
  | { type: "answered"; answer: string }
  /** A turn asked again (regenerated or edited): it and the turns after it are replaced. */
  | { type: "forked"; key: string; question: string; attachments?: Attachment[] }
  /** The connection dropped mid-answer; the page rejoins the run when it can. */
  | { type: "reconnecting" }
  /** The page joins an answer already being written (after a reload): it replays from the start. */
  | { type: "resumed" }
  | { type: "run_created"; runId: string }
  | { type: "stream"; event: string; data: unknown }
  | { type: "finished" }
  | { type: "stopped" }
  | { type: "failed"; error: unknown };

function updateLast(state: ChatState, fn: (t: Turn) => Turn): ChatState {
  const last = state.turns[state.turns.length - 1];
  if (!last) return state;
  return { ...state, turns: [...state.turns.slice(0, -1), fn(last)] };
}

function upsertQuery(queries: QueryView[], id: string, patch: Partial<QueryView>): QueryView[] {
  const i = queries.findIndex((q) => q.id === id);
  if (i < 0) return [...queries, { id, tool: "bq_query", status: "running", ...patch }];
  return queries.map((q, j) => (j === i ? { ...q, ...patch } : q));
}

/** A custom event (phases, SQL, results, tool errors, retries, usage) applied to the live turn. */
function applyCustom(turn: Turn, ev: QuarryEvent): Turn {
  switch (ev.type) {
    case "phase":
      return { ...turn, phase: ev.phase };
    case "sql":
      return {
        ...turn,
        queries: upsertQuery(turn.queries, ev.toolCallId, {
          tool: "bq_query",
          sql: ev.sql,
          estimatedBytes: ev.estimatedBytes,
          ...(ev.bytesHidden ? { estimateHidden: true } : {}),
          attempt: ev.attempt,
          status: "running",
        }),
      };
    case "result":
      return {
        ...turn,
        queries: upsertQuery(turn.queries, ev.ref, { sql: ev.sql, result: toResultView(ev), status: "done" }),
      };
    case "tool_error":
      return {
        ...turn,
        queries: upsertQuery(turn.queries, ev.toolCallId, {
          tool: ev.tool,
          ...(ev.sql ? { sql: ev.sql } : {}),
          error: { category: ev.category, message: ev.message },
          status: "failed",
        }),
      };
    case "retry":
      return {
        ...turn,
        retries: [...turn.retries, { attempt: ev.attempt, maxRetries: ev.maxRetries, reason: ev.reason }],
      };
    case "usage":
      return { ...turn, usage: ev.turn };
    case "suggestions":
      return { ...turn, suggestions: ev.questions };
    case "definitions":
      return { ...turn, definitions: ev.definitions };
    case "computed":
      return { ...turn, computed: ev.computed };
    case "investigation_step": {
      const { type: _type, ...step } = ev;
      const inv = turn.investigation ?? { steps: [] };
      const steps = [...inv.steps.filter((s) => s.id !== step.id), step].sort((a, b) => a.id - b.id);
      return { ...turn, investigation: { ...inv, steps } };
    }
    case "investigation_report":
      return { ...turn, investigation: { ...(turn.investigation ?? { steps: [] }), report: ev.report } };
    default:
      return turn;
  }
}

/**
 * A messages-tuple event: an AI token chunk appended to its message's text. Internal model calls
 * (planner, verifier, summarizer) never stream tokens: the server tags them `langsmith:nostream`,
 * which LangGraph's messages mode skips. Nodes' finished messages do come through, so a message
 * with tool calls (the planner's) is kept out of the answer here.
 */
function applyMessageChunk(turn: Turn, data: unknown): Turn {
  if (!Array.isArray(data)) return turn;
  const [msg] = data as [MessageDict?];
  if (!msg || !isAi(msg)) return turn;
  if ((msg.tool_calls?.length ?? 0) > 0 || (msg.tool_call_chunks?.length ?? 0) > 0) return turn;
  const text = messageText(msg.content);
  if (!text) return turn;
  const id = msg.id ?? "stream";
  const streamed = { ...(turn.streamed ?? {}) };
  // Chunks carry deltas (serialized with type "ai" like whole messages); a node that did not
  // stream emits its whole message once, which then starts with everything seen so far.
  const prev = streamed[id] ?? "";
  streamed[id] = prev && text.startsWith(prev) ? text : prev + text;
  return { ...turn, streamed, answer: streamed[id] };
}

/** A values event: the checkpointed messages of this turn are the source of truth. */
function applyValues(state: ChatState, values: Record<string, unknown>): ChatState {
  const messages = Array.isArray(values.messages) ? (values.messages as MessageDict[]) : [];
  let lastHuman = -1;
  messages.forEach((m, i) => {
    if (isHuman(m)) lastHuman = i;
  });
  // The run stopped at a question to the person (LangGraph's interrupt, in the values stream).
  if (Array.isArray(values.__interrupt__)) {
    const review = values.__interrupt__.map((i) => toPlanReview((i as { value?: unknown } | null)?.value))[0];
    if (review) {
      return updateLast(state, (t) => ({
        ...t,
        phase: "asking",
        investigation: { steps: [], ...t.investigation, review, answered: undefined },
      }));
    }
    const asked = values.__interrupt__
      .map((i) => toClarification((i as { value?: unknown } | null)?.value))
      .find(Boolean);
    return asked
      ? updateLast(state, (t) => ({ ...t, phase: "asking", clarification: t.clarification ?? asked }))
      : state;
  }
  const usage = values.usage as Usage | undefined;
  const next = updateLast(state, (turn) => {
    if (lastHuman < 0) return turn;
    const parts = turnPartsFromMessages(messages.slice(lastHuman + 1));
    const clarification =
      turn.clarification && parts.clarification
        ? { ...parts.clarification, answer: turn.clarification.answer ?? parts.clarification.answer }
        : (turn.clarification ?? parts.clarification);
    return {
      ...turn,
      answer: parts.answer || turn.answer,
      queries: mergeQueries(turn.queries, parts.queries),
      ...(parts.suggestions ? { suggestions: parts.suggestions } : {}),
      ...(parts.definitions ? { definitions: parts.definitions } : {}),
      ...(parts.computed ? { computed: parts.computed } : {}),
      ...(clarification ? { clarification } : {}),
      ...(parts.investigation?.report
        ? { investigation: { steps: [], ...turn.investigation, report: parts.investigation.report } }
        : {}),
    };
  });
  return usage ? { ...next, threadUsage: usage } : next;
}

function applyStream(state: ChatState, event: string, data: unknown): ChatState {
  // Subgraph events are named "mode|namespace".
  const mode = event.split("|")[0];
  switch (mode) {
    case "metadata": {
      const runId = (data as { run_id?: unknown })?.run_id;
      return typeof runId === "string" ? updateLast(state, (t) => ({ ...t, runId })) : state;
    }
    case "custom":
      return updateLast(state, (t) => applyCustom(t, data as QuarryEvent));
    case "messages":
    case "messages/partial":
      return updateLast(state, (t) => applyMessageChunk(t, data));
    case "values":
      return data && typeof data === "object" ? applyValues(state, data as Record<string, unknown>) : state;
    case "updates": {
      // Phase fallback for graphs that report it only in state updates.
      let phase: string | undefined;
      for (const u of Object.values((data ?? {}) as Record<string, unknown>)) {
        const p = (u as { phase?: unknown } | null)?.phase;
        if (typeof p === "string") phase = p;
      }
      return phase ? updateLast(state, (t) => ({ ...t, phase: phase as Turn["phase"] })) : state;
    }
    case "error":
      return updateLast(state, (t) => ({
        ...t,
        status: "error",
        error: errorInWords(data),
        errorCode: parseApiError(data).code,
      }));
    default:
      return state;
  }
}

/** A question just sent: its turn, streaming from the start. */
function newTurn(key: string, question: string, attachments?: Attachment[]): Turn {
  return {
    key,
    question,
    ...(attachments?.length ? { attachments } : {}),
    answer: "",
    queries: [],
    retries: [],
    status: "streaming",
    phase: "ingress",
  };
}

/** The reducer behind the chat view. */
export function chatReducer(state: ChatState, action: ChatAction): ChatState {
  switch (action.type) {
    case "loaded": {
      const v = action.values ?? {};
      const turns = withWaitingPlan(turnsFromMessages(v.messages ?? []), action.waiting);
      return { turns, threadUsage: v.usage, summarized: !!v.summary };
    }
    case "submitted":
      return { ...state, turns: [...state.turns, newTurn(action.key, action.question, action.attachments)] };
    case "forked": {
      const at = state.turns.findIndex((t) => t.key === action.key);
      const kept = at < 0 ? state.turns : state.turns.slice(0, at);
      return { ...state, turns: [...kept, newTurn(action.key, action.question, action.attachments)] };
    }
    case "answered":
      return updateLast(state, (t) => answeredTurn(t, action.answer));
    case "run_created":
      return updateLast(state, (t) => ({ ...t, runId: action.runId }));
    case "stream": {
      const next = applyStream(state, action.event, action.data);
      return next.turns.at(-1)?.reconnecting
        ? updateLast(next, (t) => ({ ...t, reconnecting: false }))
        : next;
    }
    case "reconnecting":
      return updateLast(state, (t) => (t.status === "streaming" ? { ...t, reconnecting: true } : t));
    case "resumed":
      // The replay brings every event of the run again: start the turn's live parts afresh.
      return updateLast(state, (t) => ({
        ...t,
        ...newTurn(t.key, t.question, t.attachments),
        streamed: {},
        error: undefined,
      }));
    case "finished":
      return updateLast(state, (t) =>
        t.status !== "streaming"
          ? t
          : waiting(t)
            ? { ...t, status: "asking", phase: "asking" }
            : {
                ...t,
                status: "done",
                phase: "done",
                queries: settle(t.queries, "The query did not finish."),
              },
      );
    case "stopped":
      return updateLast(state, (t) =>
        t.status === "streaming"
          ? { ...t, status: "stopped", queries: settle(t.queries, "Stopped before the query finished.") }
          : t,
      );
    case "failed":
      return updateLast(state, (t) =>
        t.status === "error"
          ? t
          : {
              ...t,
              status: "error",
              error: errorInWords(action.error),
              errorCode: parseApiError(action.error).code,
              queries: settle(t.queries, "The run failed before the query finished."),
            },
      );
    default:
      return state;
  }
}

/** After a reload: a last turn without an answer whose thread waits on a plan waits for the person again. */
function withWaitingPlan(turns: Turn[], waiting: unknown[] | undefined): Turn[] {
  const review = (waiting ?? []).map(toPlanReview).find(Boolean);
  const last = turns.at(-1);
  if (!review || !last || last.answer) return turns;
  return [...turns.slice(0, -1), { ...last, status: "asking", investigation: { steps: [], review } }];
}

/** The person answered the turn's plan or clarifying question: the turn goes on. */
function answeredTurn(t: Turn, answer: string): Turn {
  if (t.investigation?.review && t.investigation.answered === undefined) {
    const investigation = { ...t.investigation, answered: answer };
    return { ...t, status: "streaming", phase: "querying", error: undefined, investigation };
  }
  if (!t.clarification) return t;
  const clarification = { ...t.clarification, answer };
  return { ...t, status: "streaming", phase: "planning", error: undefined, clarification };
}

/** The turn stopped at a question or a plan the person has not answered. */
function waiting(t: Turn): boolean {
  if (t.answer) return false;
  if (t.investigation?.review && t.investigation.answered === undefined) return true;
  return !!t.clarification && t.clarification.answer === undefined;
}

/** When a run ends, a query still marked running will never finish. */
function settle(queries: QueryView[], why: string): QueryView[] {
  return queries.map((q) =>
    q.status === "running"
      ? { ...q, status: "failed", error: q.error ?? { category: "cancelled", message: why } }
      : q,
  );
}

/**
 * The run input for a question; `id` becomes the stored message's id (feedback refers to it). With
 * attachments the content is agent-chat-ui's list: the text block (when there is text), then the
 * images' and PDFs' blocks.
 */
export function humanInput(
  text: string,
  id?: string,
  attachments: Attachment[] = [],
): { messages: MessageDict[] } {
  const content = attachments.length
    ? [...(text ? [{ type: "text", text }] : []), ...attachments.map(toContentBlock)]
    : text;
  return { messages: [{ type: "human", content, ...(id ? { id } : {}) }] };
}

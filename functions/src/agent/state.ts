/**
 * The graph's state. Reducers decide how node updates combine: messages append (and honour
 * RemoveMessage, which the summarizer uses), usage accumulates over the whole thread, everything
 * else is last-write-wins and is reset by `ingress` at the start of each turn.
 */
import type { GlossaryOrigin } from "../context/authored";
import { Annotation, messagesStateReducer } from "@langchain/langgraph";
import type { BaseMessage } from "@langchain/core/messages";
import type { Phase, Usage } from "./events";
import { ZERO_USAGE } from "../contract/events";
import type { OUTPUT_CHANNELS } from "../contract/protocol";
import type { ToolArtifact } from "../tools/types";
import type { InvestigationPlan, InvestigationReport, StepOutcome } from "../contract/investigations";

/** A turn's investigation (docs/investigations.md): its plan, the person's review, the steps, the report. */
export interface InvestigationState {
  plan: InvestigationPlan;
  /** What the person changed ("dropped step 4"). */
  edits: string[];
  /** Why the person's last answer to the plan could not be applied (shown with the plan again). */
  reviewErrors?: string[];
  decision?: "run" | "cancel";
  outcomes: StepOutcome[];
  report?: InvestigationReport;
}

/** Who is asking and what they told us about themselves (settings document, display name). */
export interface UserContext {
  displayName?: string;
  /** Free-text preferences, e.g. "answer in French", "use metric units". */
  preferences?: string;
  timezone?: string;
}

/** Computed once per turn by `ingress`; every prompt reads it instead of recomputing it. */
export interface SystemContext {
  /** ISO timestamp of the turn's start. */
  now: string;
  dialect: string;
  dialectNote: string;
  /** One line per table the model may query. */
  tables: string[];
  /** The team's knowledge chosen for this turn's question (authored context), as prompt text. */
  knowledge?: string;
  /** The chosen glossary terms with SQL and a known origin, to name the ones the answer used. */
  definitions?: { term: string; sql: string; origin: GlossaryOrigin }[];
  /** The verified queries chosen for the question: an answer whose SQL is one of them is marked verified. */
  verifiedQueries?: { question: string; sql: string }[];
}

/** One tool call of the current turn and what came of it. */
export interface TurnResult {
  toolCallId: string;
  tool: string;
  args: Record<string, unknown>;
  artifact: ToolArtifact;
}

/** The verifier's decision, read by the router after it and by the planner's/generator's prompts. */
export interface Verdict {
  action: "replan" | "answer" | "give_up";
  /** For `replan`: the concrete refinement the planner gets; for `give_up`: what failed. */
  reason?: string;
}

/** Adds usage deltas; the reducer of the thread-wide `usage` channel. */
export function addUsage(a: Usage, b: Partial<Usage>): Usage {
  return {
    inputTokens: a.inputTokens + (b.inputTokens ?? 0),
    outputTokens: a.outputTokens + (b.outputTokens ?? 0),
    totalTokens: a.totalTokens + (b.totalTokens ?? 0),
    bytesBilled: a.bytesBilled + (b.bytesBilled ?? 0),
    modelCalls: a.modelCalls + (b.modelCalls ?? 0),
    toolCalls: a.toolCalls + (b.toolCalls ?? 0),
  };
}

/** `a - b`, for the usage of the current turn (thread usage minus usage at the turn's start). */
export function subtractUsage(a: Usage, b: Usage): Usage {
  return {
    inputTokens: a.inputTokens - b.inputTokens,
    outputTokens: a.outputTokens - b.outputTokens,
    totalTokens: a.totalTokens - b.totalTokens,
    bytesBilled: a.bytesBilled - b.bytesBilled,
    modelCalls: a.modelCalls - b.modelCalls,
    toolCalls: a.toolCalls - b.toolCalls,
  };
}

const last = <T>(fallback: () => T) => Annotation<T>({ reducer: (_a: T, b: T) => b, default: fallback });

export const QuarryState = Annotation.Root({
  /** Conversation history; appends, replaces by id, removes on RemoveMessage. */
  messages: Annotation<BaseMessage[]>({ reducer: messagesStateReducer, default: () => [] }),
  userId: last<string>(() => ""),
  threadId: last<string>(() => ""),
  userContext: last<UserContext>(() => ({})),
  systemContext: last<SystemContext | null>(() => null),
  phase: last<Phase>(() => "ingress"),
  /** Tool calls of the current turn with their artifacts (reset by ingress). */
  turnResults: last<TurnResult[]>(() => []),
  /** Re-plans after errors/empty results in this turn (bounded by AgentConfig.maxRetries). */
  retryCount: last<number>(() => 0),
  /** Model calls in this turn (bounded by AgentConfig.maxModelCalls). */
  modelCalls: last<number>(() => 0),
  verdict: last<Verdict | null>(() => null),
  /** Whether this turn already asked the user a clarifying question (at most one per turn). */
  clarified: last<boolean>(() => false),
  /** Thread-wide usage: tokens, bytes billed, model and tool calls (accumulates). */
  usage: Annotation<Usage, Partial<Usage>>({ reducer: addUsage, default: () => ({ ...ZERO_USAGE }) }),
  /** `usage` when this turn began, so the turn's share is a subtraction. */
  usageAtTurnStart: last<Usage>(() => ({ ...ZERO_USAGE })),
  /** Bytes billed by queries over the thread (accumulates; also inside `usage`). */
  bytesBilled: Annotation<number>({ reducer: (a: number, b: number) => a + b, default: () => 0 }),
  /** Running summary of turns removed from `messages` by the summarizer. */
  summary: last<string>(() => ""),
  /** Set when ingress refuses the input: the message shown instead of an answer. */
  refusal: last<string | null>(() => null),
  /** Set by the turn's input: answer with an investigation (a plan, its steps, a report). */
  investigate: last<boolean>(() => false),
  /** The turn's investigation; null when the turn is a plain question (reset by ingress). */
  investigation: last<InvestigationState | null>(() => null),
  /** The generator's answer for this turn. */
  finalAnswer: last<string>(() => ""),
});

export type QuarryStateType = typeof QuarryState.State;
export type QuarryUpdate = typeof QuarryState.Update;

/**
 * What the graph gives back (its `values` stream, and `invoke`'s result): the conversation and its
 * usage. The turn's scratch state — the system context with the linked tables' schemas, the turn's
 * results, the verdict — stays in the checkpoints (the thread's state and history show all of it).
 */
export const QuarryOutput = Annotation.Root({
  messages: QuarryState.spec.messages,
  usage: QuarryState.spec.usage,
} satisfies Record<(typeof OUTPUT_CHANNELS)[number], unknown>);

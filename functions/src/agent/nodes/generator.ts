/** `generator`: writes the answer; the only node whose model tokens stream to the user. */
import { SystemMessage } from "@langchain/core/messages";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { AgentDeps } from "../deps";
import { emit, emitPhase, emitUsage } from "../emit";
import { callModel } from "../model-call";
import {
  messageText,
  questionWithAttachments,
  priorConversation,
  turnClarification,
  turnStartIndex,
} from "../prompt-inputs/history";
import { digestResults } from "../prompt-inputs/results";
import { renderPreamble } from "../prompt-inputs/system-context";
import { usageOfModelCall } from "../prompt-inputs/usage";
import {
  CLARIFICATION_BLOCK,
  FAILURE_BLOCK,
  FOLLOW_UPS_BLOCK,
  GENERATOR_PROMPT,
  RESULTS_BLOCK,
  fill,
} from "../prompts";
import { splitFollowUps } from "../../contract/follow-ups";
import type { ComputedFacts } from "../../contract/events";
import { computedFacts, statedFacts, type RanQuery } from "../../context/computed";
import { visibleFollowUps } from "../prompt-inputs/follow-ups";
import type { QuarryStateType, QuarryUpdate } from "../state";

/** The generator's prompt: results as a digest, earlier turns as text, the question last. */
function generatorMessages(state: QuarryStateType, digestChars: number) {
  if (!state.systemContext) throw new Error("generator ran before ingress built the system context.");
  const results = state.turnResults.length
    ? fill(RESULTS_BLOCK, { digest: digestResults(state.turnResults, digestChars) })
    : "";
  const failure =
    state.verdict?.action === "give_up" ? fill(FAILURE_BLOCK, { reason: state.verdict.reason ?? "" }) : "";
  const asked = turnClarification(state.messages);
  const clarification = asked
    ? fill(CLARIFICATION_BLOCK, { question: asked.question, answer: asked.answer })
    : "";
  const system = fill(GENERATOR_PROMPT, {
    preamble: renderPreamble(state.systemContext, state.userContext, state.summary),
    followUps: FOLLOW_UPS_BLOCK,
    clarification,
    results,
    failure,
  });
  const asking = state.messages[turnStartIndex(state.messages)];
  // The question with its images and PDFs: the answer is written looking at them too.
  const question = asking ? [questionWithAttachments(asking)] : [];
  return [new SystemMessage(system), ...priorConversation(state.messages), ...question];
}

/** How this turn's answer was computed (context/computed.ts), when it ran SQL. */
function computedOf(state: QuarryStateType): ComputedFacts | undefined {
  const ran: RanQuery[] = [];
  // The same SQL run again (a re-plan that fixed only its stated facts) counts once, as last run.
  for (const r of [...state.turnResults].reverse()) {
    const a = r.artifact;
    if (a.kind !== "query" || ran.some((q) => q.sql === a.result.sql)) continue;
    const { sql, truncated, totalRows } = a.result;
    const stated = statedFacts(r.args);
    ran.unshift({ sql, truncated, totalRows, ...(stated ? { stated } : {}) });
  }
  if (!ran.length) return undefined;
  const ctx = state.systemContext;
  return computedFacts(ran, ctx?.definitions ?? [], ctx?.verifiedQueries ?? []);
}

export function makeGenerator(deps: AgentDeps) {
  return async function generator(
    state: QuarryStateType,
    config: LangGraphRunnableConfig,
  ): Promise<QuarryUpdate> {
    emitPhase(config, "answering");
    const computed = computedOf(state);
    const definitions = computed?.definitions ?? [];
    if (definitions.length) emit(config, { type: "definitions", definitions });
    if (computed) emit(config, { type: "computed", computed });
    const messages = generatorMessages(state, deps.digestChars);
    const reply = await callModel(deps, config, { node: "generator", messages, streamToUser: true });
    const delta = usageOfModelCall(reply);
    emitUsage(config, state, delta);
    // The follow-ups came with the answer: offered only when they name nothing the prompt did not show.
    const text = messageText(reply);
    const { body, followUps } = splitFollowUps(text);
    // The stored answer is the answer alone: a client that shows the thread's messages as they are
    // (the SDK's useStream, agent-chat-ui) never shows the block, whose questions travel in metadata.
    if (body !== text) reply.content = body;
    const shown = messages.map((m) => messageText(m)).join("\n");
    const suggestions = visibleFollowUps(followUps, shown);
    if (suggestions.length) {
      emit(config, { type: "suggestions", questions: suggestions });
      reply.response_metadata = { ...reply.response_metadata, quarry_suggestions: suggestions };
    }
    if (definitions.length) {
      reply.response_metadata = { ...reply.response_metadata, quarry_definitions: definitions };
    }
    if (computed) reply.response_metadata = { ...reply.response_metadata, quarry_computed: computed };
    return {
      phase: "answering",
      messages: [reply],
      finalAnswer: body,
      modelCalls: state.modelCalls + 1,
      usage: delta,
    };
  };
}

/**
 * `planner`: one model call with the tools bound. Tool calls go to the executor; a reply without
 * tool calls is not kept (the generator writes the answer the user sees), which keeps a greeting
 * at two model calls.
 */
import { randomUUID } from "node:crypto";
import { AIMessage, SystemMessage } from "@langchain/core/messages";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { AgentDeps } from "../deps";
import { emitPhase, emitUsage } from "../emit";
import { callModel } from "../model-call";
import { currentTurn, priorConversation } from "../prompt-inputs/history";
import { renderPreamble } from "../prompt-inputs/system-context";
import { usageOfModelCall } from "../prompt-inputs/usage";
import { ASKING_BLOCK, PLANNER_PROMPT, REFINEMENT_BLOCK, fill } from "../prompts";
import type { QuarryStateType, QuarryUpdate } from "../state";
import { runPersonOf } from "../../tools/person";

/** The planner's prompt: preamble, refinement, earlier turns as text, the current turn verbatim. */
function plannerMessages(state: QuarryStateType, maxRetries: number, asking = false) {
  if (!state.systemContext) throw new Error("planner ran before ingress built the system context.");
  const refinement =
    state.verdict?.action === "replan" && state.verdict.reason
      ? fill(REFINEMENT_BLOCK, {
          attempt: String(state.retryCount),
          maxRetries: String(maxRetries),
          reason: state.verdict.reason,
        })
      : "";
  const system = fill(PLANNER_PROMPT, {
    preamble: renderPreamble(state.systemContext, state.userContext, state.summary),
    refinement,
    asking: asking ? ASKING_BLOCK : "",
  });
  return [new SystemMessage(system), ...priorConversation(state.messages), ...currentTurn(state.messages)];
}

export function makePlanner(deps: AgentDeps) {
  return async function planner(
    state: QuarryStateType,
    config: LangGraphRunnableConfig,
  ): Promise<QuarryUpdate> {
    // Keep one call in reserve for the generator, which must always be able to answer.
    if (state.modelCalls + 2 > deps.agent.maxModelCalls) {
      return {
        verdict: {
          action: "give_up",
          reason: `the turn used its budget of ${deps.agent.maxModelCalls} model calls before the data was retrieved`,
        },
      };
    }
    emitPhase(config, "planning");
    const scheduled = runPersonOf(config.configurable)?.schedule;
    if (scheduled) return savedQuery(state, scheduled.sql);
    const reply = await callModel(deps, config, {
      node: "planner",
      messages: plannerMessages(
        state,
        deps.agent.maxRetries,
        deps.agent.clarify !== false && !state.clarified,
      ),
      withTools: true,
    });
    const delta = usageOfModelCall(reply);
    emitUsage(config, state, delta);
    const update: QuarryUpdate = {
      phase: "planning",
      modelCalls: state.modelCalls + 1,
      usage: delta,
      verdict: null,
    };
    if (reply.tool_calls?.length) update.messages = [reply];
    return update;
  };
}

/**
 * A schedule's turn runs the SQL its owner saved, through the same executor and gate, with no model
 * call: one `bq_query` call. What the verifier sends back is not re-planned — a failed saved query
 * is the schedule's failure to report (the generator explains it), and an empty result is an answer.
 */
function savedQuery(state: QuarryStateType, sql: string): QuarryUpdate {
  if (state.verdict?.action === "replan") {
    return {
      phase: "planning",
      verdict: state.verdict.reason
        ? { action: "give_up", reason: `the saved query failed: ${state.verdict.reason}` }
        : { action: "answer" },
    };
  }
  const call = { name: "bq_query", args: { sql }, id: `saved-${randomUUID()}`, type: "tool_call" as const };
  return { phase: "planning", verdict: null, messages: [new AIMessage({ content: "", tool_calls: [call] })] };
}

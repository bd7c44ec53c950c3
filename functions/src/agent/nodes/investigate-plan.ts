/**
 * `investigate_plan`: the model writes an investigation's typed plan (one `submit_plan` call).
 * Quarry validates it (agent/investigation/plan.ts); a refused plan goes back once with the
 * errors, and a plan refused twice ends the turn with an answer that lists what was wrong — no
 * step runs on a plan Quarry could not check.
 */
import { AIMessage, SystemMessage } from "@langchain/core/messages";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { AgentDeps } from "../deps";
import { emitPhase, emitUsage } from "../emit";
import { callModel } from "../model-call";
import { checkPlan, type PlanCheck } from "../investigation/plan";
import { SUBMIT_PLAN, callArgs, submitPlanTool } from "../investigation/tools";
import { currentTurn, priorConversation } from "../prompt-inputs/history";
import { renderPreamble } from "../prompt-inputs/system-context";
import { usageOfModelCall } from "../prompt-inputs/usage";
import { INVESTIGATION_PLANNER_PROMPT, PLAN_ERRORS_BLOCK, fill } from "../prompts";
import { addUsage, type QuarryStateType, type QuarryUpdate } from "../state";
import type { Usage } from "../events";
import { ZERO_USAGE } from "../../contract/events";

/** Model calls the planner may make: one, and one more to fix a refused plan. */
const PLAN_ATTEMPTS = 2;

export function makeInvestigatePlan(deps: AgentDeps) {
  return async function investigatePlan(
    state: QuarryStateType,
    config: LangGraphRunnableConfig,
  ): Promise<QuarryUpdate> {
    if (!state.systemContext) throw new Error("investigate_plan ran before ingress.");
    emitPhase(config, "planning", "investigation");
    const { maxSteps } = deps.agent.investigation;
    let usage: Usage = { ...ZERO_USAGE };
    let calls = 0;
    let checked: PlanCheck = { ok: false, errors: [] };
    // The turn's cap on model calls (QUARRY_MAX_MODEL_CALLS) holds here too: no retry past it.
    const attempts = Math.min(PLAN_ATTEMPTS, Math.max(deps.agent.maxModelCalls - state.modelCalls, 1));
    for (let attempt = 1; attempt <= attempts && !checked.ok; attempt++) {
      const errors = checked.errors.length
        ? fill(PLAN_ERRORS_BLOCK, { errors: checked.errors.map((e) => `- ${e}`).join("\n") })
        : "";
      const system = fill(INVESTIGATION_PLANNER_PROMPT, {
        preamble: renderPreamble(state.systemContext, state.userContext, state.summary),
        maxSteps: String(maxSteps),
        errors,
      });
      const reply = await callModel(deps, config, {
        node: "investigate_plan",
        messages: [
          new SystemMessage(system),
          ...priorConversation(state.messages),
          ...currentTurn(state.messages),
        ],
        tools: [submitPlanTool],
      });
      calls++;
      const delta = usageOfModelCall(reply);
      emitUsage(config, { ...state, usage: addUsage(state.usage, usage) }, delta);
      usage = addUsage(usage, delta);
      const args = callArgs(reply, SUBMIT_PLAN);
      checked =
        args === undefined
          ? { ok: false, errors: [`call ${SUBMIT_PLAN} with the plan (the reply had no such call)`] }
          : checkPlan(args, maxSteps);
    }
    const common = { phase: "planning" as const, modelCalls: state.modelCalls + calls, usage };
    if (checked.ok) return { ...common, investigation: { plan: checked.plan, edits: [], outcomes: [] } };
    const answer =
      "I could not make an investigation plan that Quarry can check, so nothing was run. What was wrong:\n" +
      checked.errors.map((e) => `- ${e}`).join("\n") +
      "\n\nAsk again with the measure and the periods you mean, or ask it as a plain question.";
    return { ...common, finalAnswer: answer, messages: [new AIMessage(answer)] };
  };
}

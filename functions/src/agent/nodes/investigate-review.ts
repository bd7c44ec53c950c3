/**
 * `investigate_review`: the plan is shown before anything runs. The run stops with LangGraph's
 * `interrupt()` (as `clarify` does) and the person answers with `command: {resume}`: "run" (or
 * nothing) runs it as is, "drop 2, 4" or `{"drop": [2, 4]}` drops steps, `{"plan": {…}}` replaces
 * it with an edited plan (validated like the planner's), "cancel" runs nothing. An answer that
 * cannot be applied stops the run again at the same plan, with what was wrong.
 */
import { AIMessage } from "@langchain/core/messages";
import { interrupt, type LangGraphRunnableConfig } from "@langchain/langgraph";
import type { PlanReview } from "../../contract/investigations";
import type { AgentDeps } from "../deps";
import { emitPhase } from "../emit";
import { decide } from "../investigation/plan";
import { answerOf } from "./clarify";
import type { QuarryStateType, QuarryUpdate } from "../state";

const HOW_TO_ANSWER =
  'Answer "run" to run the plan as is, "drop 2, 4" to drop steps, {"plan": {…}} with an edited plan, or "cancel".';

export function makeInvestigateReview(deps: AgentDeps) {
  return function investigateReview(state: QuarryStateType, config: LangGraphRunnableConfig): QuarryUpdate {
    const inv = state.investigation;
    if (!inv) throw new Error("investigate_review ran without a plan.");
    emitPhase(config, "asking", "investigation plan");
    const { maxSteps, parallel, bytes, tokens, seconds } = deps.agent.investigation;
    const review: PlanReview & { errors?: string[] } = {
      kind: "investigation_plan",
      plan: inv.plan,
      parallel,
      budget: { maxSteps, bytes, tokens, seconds },
      howToAnswer: HOW_TO_ANSWER,
      ...(inv.reviewErrors?.length ? { errors: inv.reviewErrors } : {}),
    };
    const decision = decide(inv.plan, answerOf(interrupt<typeof review, unknown>(review)), maxSteps);
    if (decision.action === "refused") {
      return { phase: "asking", investigation: { ...inv, reviewErrors: decision.errors } };
    }
    if (decision.action === "cancel") {
      const answer = "The investigation was cancelled before any step ran.";
      return {
        phase: "asking",
        investigation: { ...inv, reviewErrors: [], decision: "cancel" },
        finalAnswer: answer,
        messages: [new AIMessage(answer)],
      };
    }
    return {
      phase: "asking",
      investigation: {
        ...inv,
        plan: decision.plan,
        edits: [...inv.edits, ...decision.edited],
        reviewErrors: [],
        decision: "run",
      },
    };
  };
}

/** Pure routing functions with literal return types; graph.ts wires them to conditional edges. */
import { pendingToolCalls } from "./prompt-inputs/history";
import { ASK_USER } from "./ask-user";
import type { QuarryStateType } from "./state";

type S = Pick<QuarryStateType, "messages" | "refusal" | "verdict" | "investigate" | "investigation">;

/** A refused input skips the model entirely; an investigation starts with its plan. */
export function routeAfterIngress(
  state: Pick<S, "refusal"> & Partial<Pick<S, "investigate">>,
): "planner" | "investigate_plan" | "summarizer" {
  if (state.refusal) return "summarizer";
  return state.investigate ? "investigate_plan" : "planner";
}

/** A plan Quarry accepted is shown to the person; a refused one has already been answered. */
export function routeAfterInvestigatePlan(
  state: Pick<S, "investigation">,
): "investigate_review" | "summarizer" {
  return state.investigation ? "investigate_review" : "summarizer";
}

/** Run the reviewed plan; ask again after an answer that could not be applied; end on cancel. */
export function routeAfterInvestigateReview(
  state: Pick<S, "investigation">,
): "investigate_steps" | "investigate_review" | "summarizer" {
  const decision = state.investigation?.decision;
  if (decision === "run") return "investigate_steps";
  return decision === "cancel" ? "summarizer" : "investigate_review";
}

/**
 * A question to the user goes to `clarify`, other tool calls to the executor; anything else (direct
 * reply, budget spent) to the generator.
 */
export function routeAfterPlanner(
  state: Pick<S, "messages" | "verdict">,
): "executor" | "clarify" | "generator" {
  if (state.verdict?.action === "give_up") return "generator";
  const calls = pendingToolCalls(state.messages);
  if (calls.some((c) => c.name === ASK_USER)) return "clarify";
  return calls.length > 0 ? "executor" : "generator";
}

/** Re-plan on the verifier's say-so; answer (or explain the failure) otherwise. */
export function routeAfterVerifier(state: Pick<S, "verdict">): "planner" | "generator" {
  return state.verdict?.action === "replan" ? "planner" : "generator";
}

/** Pure routing functions with literal return types; graph.ts wires them to conditional edges. */
import { pendingToolCalls } from "./prompt-inputs/history";
import { ASK_USER } from "./ask-user";
import type { QuarryStateType } from "./state";

type S = Pick<QuarryStateType, "messages" | "refusal" | "verdict">;

/** A refused input skips the model entirely. */
export function routeAfterIngress(state: Pick<S, "refusal">): "planner" | "summarizer" {
  return state.refusal ? "summarizer" : "planner";
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

/** Pure routing functions with literal return types; graph.ts wires them to conditional edges. */
import { pendingToolCalls } from "./context/history";
import type { QuarryStateType } from "./state";

type S = Pick<QuarryStateType, "messages" | "refusal" | "verdict">;

/** A refused input skips the model entirely. */
export function routeAfterIngress(state: Pick<S, "refusal">): "planner" | "summarizer" {
  return state.refusal ? "summarizer" : "planner";
}

/** Tool calls go to the executor; anything else (direct reply, budget spent) to the generator. */
export function routeAfterPlanner(state: Pick<S, "messages" | "verdict">): "executor" | "generator" {
  if (state.verdict?.action === "give_up") return "generator";
  return pendingToolCalls(state.messages).length > 0 ? "executor" : "generator";
}

/** Re-plan on the verifier's say-so; answer (or explain the failure) otherwise. */
export function routeAfterVerifier(state: Pick<S, "verdict">): "planner" | "generator" {
  return state.verdict?.action === "replan" ? "planner" : "generator";
}

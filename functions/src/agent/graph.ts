/** Quarry's graph: nodes and edges only (behaviour lives in nodes/, routing in routers.ts). */
import { Command, END, START, StateGraph, type BaseCheckpointSaver } from "@langchain/langgraph";
import type { AgentDeps } from "./deps";
import { makeClarify } from "./nodes/clarify";
import { makeExecutor } from "./nodes/executor";
import { makeGenerator } from "./nodes/generator";
import { makeIngress } from "./nodes/ingress";
import { makeInvestigatePlan } from "./nodes/investigate-plan";
import { makeInvestigateReport } from "./nodes/investigate-report";
import { makeInvestigateReview } from "./nodes/investigate-review";
import { makeInvestigateSteps } from "./nodes/investigate-steps";
import { makePlanner } from "./nodes/planner";
import { makeSummarizer } from "./nodes/summarizer";
import { makeVerifier } from "./nodes/verifier";
import {
  routeAfterIngress,
  routeAfterInvestigatePlan,
  routeAfterInvestigateReview,
  routeAfterPlanner,
  routeAfterVerifier,
} from "./routers";
import { QuarryOutput, QuarryState } from "./state";

export function buildGraph(deps: AgentDeps, checkpointer: BaseCheckpointSaver) {
  return new StateGraph({ stateSchema: QuarryState, output: QuarryOutput })
    .addNode("ingress", makeIngress(deps))
    .addNode("planner", makePlanner(deps))
    .addNode("executor", makeExecutor(deps))
    .addNode("clarify", makeClarify())
    .addNode("verifier", makeVerifier(deps))
    .addNode("generator", makeGenerator(deps))
    .addNode("summarizer", makeSummarizer(deps))
    .addNode("investigate_plan", makeInvestigatePlan(deps))
    .addNode("investigate_review", makeInvestigateReview(deps))
    .addNode("investigate_steps", makeInvestigateSteps(deps))
    .addNode("investigate_report", makeInvestigateReport(deps))
    .addEdge(START, "ingress")
    .addConditionalEdges("ingress", routeAfterIngress, ["planner", "investigate_plan", "summarizer"])
    .addConditionalEdges("investigate_plan", routeAfterInvestigatePlan, ["investigate_review", "summarizer"])
    .addConditionalEdges("investigate_review", routeAfterInvestigateReview, [
      "investigate_steps",
      "investigate_review",
      "summarizer",
    ])
    .addEdge("investigate_steps", "investigate_report")
    .addEdge("investigate_report", "summarizer")
    .addConditionalEdges("planner", routeAfterPlanner, ["executor", "clarify", "generator"])
    .addEdge("clarify", "planner")
    .addEdge("executor", "verifier")
    .addConditionalEdges("verifier", routeAfterVerifier, ["planner", "generator"])
    .addEdge("generator", "summarizer")
    .addEdge("summarizer", END)
    .compile({ checkpointer, name: "quarry" });
}

export type QuarryGraph = ReturnType<typeof buildGraph>;

/** The user's answer to the question the thread stopped at (`interrupt()` in the clarify node). */
export function resumeInput(answer: string) {
  return new Command({ resume: answer });
}

/**
 * A user's turn as graph input: a Command that adds the message to `messages` and goes to the entry
 * node, like START → ingress. Unlike plain input (held in `__start__` until step 0 maps it into
 * state), it puts the message in the state of LangGraph's first checkpoint of the run — the one a
 * server can store before any model call, so the question survives a crash at any later point.
 */
export function turnInput(message: { type: "human"; content: unknown; id: string }, investigate = false) {
  return new Command({ update: { messages: [message], investigate }, goto: "ingress" });
}

/** Quarry's graph: nodes and edges only (behaviour lives in nodes/, routing in routers.ts). */
import { END, START, StateGraph, type BaseCheckpointSaver } from "@langchain/langgraph";
import type { AgentDeps } from "./deps";
import { makeExecutor } from "./nodes/executor";
import { makeGenerator } from "./nodes/generator";
import { makeIngress } from "./nodes/ingress";
import { makePlanner } from "./nodes/planner";
import { makeSummarizer } from "./nodes/summarizer";
import { makeVerifier } from "./nodes/verifier";
import { routeAfterIngress, routeAfterPlanner, routeAfterVerifier } from "./routers";
import { QuarryState } from "./state";

export function buildGraph(deps: AgentDeps, checkpointer: BaseCheckpointSaver) {
  return new StateGraph(QuarryState)
    .addNode("ingress", makeIngress(deps))
    .addNode("planner", makePlanner(deps))
    .addNode("executor", makeExecutor(deps))
    .addNode("verifier", makeVerifier(deps))
    .addNode("generator", makeGenerator(deps))
    .addNode("summarizer", makeSummarizer(deps))
    .addEdge(START, "ingress")
    .addConditionalEdges("ingress", routeAfterIngress, ["planner", "summarizer"])
    .addConditionalEdges("planner", routeAfterPlanner, ["executor", "generator"])
    .addEdge("executor", "verifier")
    .addConditionalEdges("verifier", routeAfterVerifier, ["planner", "generator"])
    .addEdge("generator", "summarizer")
    .addEdge("summarizer", END)
    .compile({ checkpointer, name: "quarry" });
}

export type QuarryGraph = ReturnType<typeof buildGraph>;

/** Writes Quarry's custom stream events through the graph's stream writer. */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { Phase, QuarryEvent, Usage } from "./events";
import { addUsage, subtractUsage, type QuarryStateType } from "./state";

/** Sends one custom event (a no-op when the caller did not ask for the `custom` stream mode). */
export function emit(config: LangGraphRunnableConfig, event: QuarryEvent): void {
  config.writer?.(event);
}

/**
 * A phase starts. It carries LangGraph's step of the node that starts it: the run's progress at
 * this boundary is the checkpoint of the step before (runs/durable.ts), whatever the graph has
 * done since by the time the event is handled.
 */
export function emitPhase(config: LangGraphRunnableConfig, phase: Phase, detail?: string): void {
  const step = (config.metadata as { langgraph_step?: unknown } | undefined)?.langgraph_step;
  emit(config, {
    type: "phase",
    phase,
    ...(detail === undefined ? {} : { detail }),
    ...(typeof step === "number" ? { step } : {}),
  });
}

/** Emits the turn's and the thread's usage after a node added `delta` to it. */
export function emitUsage(
  config: LangGraphRunnableConfig,
  state: QuarryStateType,
  delta: Partial<Usage>,
): void {
  const thread = addUsage(state.usage, delta);
  emit(config, { type: "usage", turn: subtractUsage(thread, state.usageAtTurnStart), thread });
}

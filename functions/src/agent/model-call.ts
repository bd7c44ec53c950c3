/**
 * One model call on behalf of a node. Internal calls (planner, verifier, summarizer) carry the
 * `langsmith:nostream` tag, which LangGraph's `messages` stream mode skips, so only the
 * generator's tokens reach the user.
 */
import type { BaseMessage, AIMessage } from "@langchain/core/messages";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { AgentDeps } from "./deps";

export const NOSTREAM_TAG = "langsmith:nostream";

/** Raised when a turn would exceed AgentConfig.maxModelCalls. */
export class ModelBudgetError extends Error {
  constructor(limit: number) {
    super(`This turn reached its limit of ${limit} model calls (QUARRY_MAX_MODEL_CALLS).`);
    this.name = "ModelBudgetError";
  }
}

export async function callModel(
  deps: AgentDeps,
  config: LangGraphRunnableConfig,
  opts: { node: string; messages: BaseMessage[]; withTools?: boolean; streamToUser?: boolean },
): Promise<AIMessage> {
  let runnable = deps.model as { invoke: (m: BaseMessage[], c: object) => Promise<AIMessage> };
  if (opts.withTools) {
    if (!deps.model.bindTools) throw new Error("The chat model does not support tool calling (bindTools).");
    runnable = deps.model.bindTools(deps.tools) as typeof runnable;
  }
  // The node's own config carries LangGraph's callbacks (stream handlers) and metadata.
  const tags = [...(config.tags ?? []), `quarry:${opts.node}`];
  if (!opts.streamToUser) tags.push(NOSTREAM_TAG);
  return runnable.invoke(opts.messages, {
    ...config,
    runName: `quarry_${opts.node}`,
    tags,
    metadata: { ...config.metadata, quarry_node: opts.node },
  });
}

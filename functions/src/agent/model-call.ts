/**
 * One model call on behalf of a node. Internal calls (planner, verifier, summarizer) carry the
 * `langsmith:nostream` tag, which LangGraph's `messages` stream mode skips, so only the
 * generator's tokens reach the user.
 */
import type { BaseMessage, AIMessage } from "@langchain/core/messages";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { QuarryError } from "../errors";
import type { AgentDeps } from "./deps";
import { classifyModelError, emptyReplyError } from "./model/errors";
import { askUserTool } from "./nodes/clarify";

const NOSTREAM_TAG = "langsmith:nostream";

/**
 * Calls the model for a node. A failure of the model service becomes a `model:*` QuarryError that
 * says what to change (bad key, quota, unknown model, safety block, network); an empty answer is
 * one too, so the user never gets a blank reply.
 */
export async function callModel(
  deps: AgentDeps,
  config: LangGraphRunnableConfig,
  opts: { node: string; messages: BaseMessage[]; withTools?: boolean; streamToUser?: boolean },
): Promise<AIMessage> {
  if (!deps.model) {
    throw (
      deps.modelUnavailable ??
      new QuarryError("model:not_configured", "No AI model is configured: see the README's quick start.")
    );
  }
  let runnable = deps.model as { invoke: (m: BaseMessage[], c: object) => Promise<AIMessage> };
  if (opts.withTools) {
    if (!deps.model.bindTools) throw new Error("The chat model does not support tool calling (bindTools).");
    // The planner may also ask the user (routed to the clarify node, never invoked as a tool).
    const tools = deps.agent.clarify === false ? deps.tools : [...deps.tools, askUserTool];
    runnable = deps.model.bindTools(tools) as typeof runnable;
  }
  // The node's own config carries LangGraph's callbacks (stream handlers) and metadata.
  const tags = [...(config.tags ?? []), `quarry:${opts.node}`];
  if (!opts.streamToUser) tags.push(NOSTREAM_TAG);
  let reply: AIMessage;
  try {
    reply = await runnable.invoke(opts.messages, {
      ...config,
      runName: `quarry_${opts.node}`,
      tags,
      metadata: { ...config.metadata, quarry_node: opts.node },
    });
  } catch (err) {
    // An abort (Stop, disconnect) is not the model's fault: it keeps its own handling.
    if (config.signal?.aborted) throw err;
    throw classifyModelError(err, deps.modelInfo) ?? err;
  }
  // Only the answer is checked: an internal call may legitimately say nothing (the planner with no
  // tool to call), while an empty answer would leave the user with a blank reply.
  if (opts.streamToUser && isEmpty(reply)) {
    const meta = reply.response_metadata as Record<string, unknown> | undefined;
    const reason = [meta?.finishReason, meta?.finish_reason, meta?.blockReason].find(
      (r) => typeof r === "string",
    ) as string | undefined;
    throw emptyReplyError(deps.modelInfo, reason);
  }
  return reply;
}

function isEmpty(reply: AIMessage): boolean {
  if (reply.tool_calls?.length) return false;
  const c = reply.content as unknown;
  if (typeof c === "string") return c.trim() === "";
  if (Array.isArray(c))
    return !c.some((p) => typeof p === "string" || (p as { type?: string; text?: string })?.text?.trim());
  return c == null;
}

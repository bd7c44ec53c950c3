/**
 * One model call on behalf of a node. Internal calls (planner, verifier, summarizer) carry the
 * `langsmith:nostream` tag, which LangGraph's `messages` stream mode skips, so only the
 * generator's tokens reach the user.
 */
import type { BaseMessage, AIMessage } from "@langchain/core/messages";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { QuarryError } from "../errors";
import { forProvider, hasAttachments } from "./model/content";
import type { AgentDeps } from "./deps";
import { classifyModelError, emptyReplyError } from "./model/errors";
import { MODEL_TRANSPORT_RETRY } from "./model/transport";
import { backoffMs, pause, transportFailure } from "../transport";
import { askUserTool } from "./ask-user";

const NOSTREAM_TAG = "langsmith:nostream";

type Invocable = {
  invoke: (m: BaseMessage[], c: object) => Promise<AIMessage>;
  withConfig: (c: object) => Invocable;
};

/**
 * Calls the model for a node. A failure of the model service becomes a `model:*` QuarryError that
 * says what to change (bad key, quota, unknown model, safety block, network); an empty answer is
 * one too, so the user never gets a blank reply.
 *
 * A request that fails at the transport (a connection closed or reset under it, refused while a
 * server restarts) is sent again — bounded in attempts and time, after a jittered wait — as long as
 * none of its tokens reached the user. Once one has, it is not: the user would see text twice.
 */
export async function callModel(
  deps: AgentDeps,
  config: LangGraphRunnableConfig,
  opts: {
    node: string;
    messages: BaseMessage[];
    withTools?: boolean;
    /** Bind these tools instead of the warehouse's (an investigation's plan and report). */
    tools?: StructuredToolInterface[];
    streamToUser?: boolean;
  },
): Promise<AIMessage> {
  if (!deps.model) {
    throw (
      deps.modelUnavailable ??
      new QuarryError("model:not_configured", "No AI model is configured: see the README's quick start.")
    );
  }
  let runnable = deps.model as unknown as Invocable;
  if (opts.tools) {
    if (!deps.model.bindTools) throw new Error("The chat model does not support tool calling (bindTools).");
    runnable = deps.model.bindTools(opts.tools) as unknown as Invocable;
  } else if (opts.withTools) {
    if (!deps.model.bindTools) throw new Error("The chat model does not support tool calling (bindTools).");
    // The planner may also ask the user (routed to the clarify node, never invoked as a tool).
    const tools = deps.agent.clarify === false ? deps.tools : [...deps.tools, askUserTool];
    runnable = deps.model.bindTools(tools) as unknown as Invocable;
  }
  // The node's own config carries LangGraph's callbacks (stream handlers) and metadata.
  const tags = [...(config.tags ?? []), `quarry:${opts.node}`];
  if (!opts.streamToUser) tags.push(NOSTREAM_TAG);
  const callConfig = {
    ...config,
    runName: `quarry_${opts.node}`,
    tags,
    metadata: { ...config.metadata, quarry_node: opts.node },
  };
  const messages = forProvider(opts.messages, deps.modelInfo);
  const reply = await invokeWithRetry(deps, runnable, messages, callConfig, !!opts.streamToUser);
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

/** The call, sent again after a transport failure while nothing of it reached the user. */
async function invokeWithRetry(
  deps: AgentDeps,
  runnable: Invocable,
  messages: BaseMessage[],
  config: LangGraphRunnableConfig,
  streamToUser: boolean,
): Promise<AIMessage> {
  const policy = MODEL_TRANSPORT_RETRY;
  const started = Date.now();
  // Set by the first token with content that this call streams (the tokens the user sees).
  let streamed = false;
  const watch = BaseCallbackHandler.fromMethods({
    handleLLMNewToken(token: string, _i: unknown, _r: unknown, _p: unknown, _t: unknown, fields?: object) {
      const chunk = (fields as { chunk?: { message?: { tool_call_chunks?: unknown[] } } } | undefined)?.chunk;
      if (token || chunk?.message?.tool_call_chunks?.length) streamed = true;
    },
  });
  // Awaited like LangGraph's own stream handler: a handler run in the background would queue every
  // token callback behind it, and the tokens would reach the stream after the node has ended.
  watch.awaitHandlers = true;
  // Added to the node's own callbacks (LangGraph's stream handler among them).
  const cbs = config.callbacks as { copy?: (extra: object[]) => unknown } | object[] | undefined;
  const callbacks = Array.isArray(cbs) ? [...cbs, watch] : cbs?.copy ? cbs.copy([watch]) : [watch];
  for (let attempt = 1; ; attempt++) {
    try {
      return await runnable.invoke(messages, { ...config, callbacks });
    } catch (err) {
      // An abort (Stop, disconnect) is not the model's fault: it keeps its own handling.
      if (config.signal?.aborted) throw err;
      const userSaw = streamToUser && streamed;
      const wait = backoffMs(policy, attempt);
      const again =
        transportFailure(err)?.retryable &&
        !userSaw &&
        attempt < policy.attempts &&
        Date.now() + wait - started < policy.budgetMs;
      if (!again)
        throw (
          classifyModelError(err, deps.modelInfo, {
            streamed: userSaw,
            attempts: attempt,
            attachments: hasAttachments(messages),
          }) ?? err
        );
      await pause(wait, config.signal);
    }
  }
}

function isEmpty(reply: AIMessage): boolean {
  if (reply.tool_calls?.length) return false;
  const c = reply.content as unknown;
  if (typeof c === "string") return c.trim() === "";
  if (Array.isArray(c))
    return !c.some((p) => typeof p === "string" || (p as { type?: string; text?: string })?.text?.trim());
  return c == null;
}

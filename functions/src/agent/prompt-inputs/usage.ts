/** Pure usage arithmetic for model calls. */
import type { AIMessage } from "@langchain/core/messages";
import type { Usage } from "../events";

/** Token usage a model call reported (zero when the provider reported none), counted as one call. */
export function usageOfModelCall(msg: AIMessage): Partial<Usage> {
  const u = msg.usage_metadata;
  return {
    inputTokens: u?.input_tokens ?? 0,
    outputTokens: u?.output_tokens ?? 0,
    totalTokens: u?.total_tokens ?? (u ? u.input_tokens + u.output_tokens : 0),
    modelCalls: 1,
  };
}

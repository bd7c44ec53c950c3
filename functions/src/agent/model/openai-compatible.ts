/**
 * A local (or any) OpenAI-compatible chat-completions server — Ollama, vLLM, llama.cpp's server,
 * LM Studio — through `@langchain/openai`, loaded lazily. ChatOpenAICompletions always speaks
 * `/chat/completions` (ChatOpenAI may switch to OpenAI's Responses API, which these servers lack),
 * streams tool calls, and asks for usage in the stream (`stream_options.include_usage`).
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { ModelConfig } from "../../config";
import { asChatModel, LIBRARY_RETRY } from "./common";

export async function createOpenAICompatibleModel(cfg: ModelConfig, model: string): Promise<BaseChatModel> {
  const { ChatOpenAICompletions } = await import("@langchain/openai");
  return asChatModel(
    new ChatOpenAICompletions({
      model,
      temperature: cfg.temperature,
      ...LIBRARY_RETRY,
      streamUsage: true,
      // Local servers ignore the key, but the client refuses to start without one.
      apiKey: cfg.openaiApiKey ?? "not-needed",
      configuration: { baseURL: cfg.openaiBaseUrl },
    }),
  );
}

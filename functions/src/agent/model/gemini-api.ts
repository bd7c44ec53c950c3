/**
 * The Gemini Developer API with an API key (Google AI Studio), through `@langchain/google-genai`'s
 * ChatGoogleGenerativeAI, loaded lazily. The key comes from GEMINI_API_KEY (or GOOGLE_API_KEY); in
 * production it is a Cloud Functions secret (see `index.ts`). QUARRY_GEMINI_BASE_URL points the
 * client at a gateway or a local stand-in of the same wire protocol.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { ModelConfig } from "../../config";
import { asChatModel, LIBRARY_RETRY } from "./common";

export async function createGeminiApiModel(cfg: ModelConfig, model: string): Promise<BaseChatModel> {
  const { ChatGoogleGenerativeAI } = await import("@langchain/google-genai");
  return asChatModel(
    new ChatGoogleGenerativeAI({
      model,
      apiKey: cfg.geminiApiKey,
      temperature: cfg.temperature,
      ...LIBRARY_RETRY,
      ...(cfg.geminiBaseUrl ? { baseUrl: cfg.geminiBaseUrl.replace(/\/$/, "") } : {}),
    }),
  );
}

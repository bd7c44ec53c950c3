/** Small pieces every provider module shares. */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";

/**
 * Retries of a failed model request inside the client library. LangChain's caller never retries
 * 4xx answers (bad key, model not found); this bounds how long a 429 or 5xx keeps a user waiting.
 */
export const MODEL_MAX_RETRIES = 2;

/**
 * A dynamic import() resolves a package's ESM typings while static type imports in this CommonJS
 * build resolve the CJS ones: the same class, declared twice, so TypeScript needs the cast.
 */
export function asChatModel(m: unknown): BaseChatModel {
  return m as BaseChatModel;
}

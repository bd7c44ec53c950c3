/** Small pieces every provider module shares. */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";

import { libraryFailedAttempt } from "./transport";

/**
 * Retries of a failed model request inside the client library. LangChain's caller never retries
 * 4xx answers (bad key, model not found); this bounds how long a 429 or 5xx keeps a user waiting.
 */
export const MODEL_MAX_RETRIES = 2;

/**
 * The retry settings every provider's client gets: 429/5xx retried by the library, transport
 * failures left to `callModel` (transport.ts says why).
 */
export const LIBRARY_RETRY = Object.freeze({
  maxRetries: MODEL_MAX_RETRIES,
  onFailedAttempt: libraryFailedAttempt,
});

/**
 * A dynamic import() resolves a package's ESM typings while static type imports in this CommonJS
 * build resolve the CJS ones: the same class, declared twice, so TypeScript needs the cast.
 */
export function asChatModel(m: unknown): BaseChatModel {
  return m as BaseChatModel;
}

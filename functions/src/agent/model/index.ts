/**
 * The agent's model factory: one module per provider (Vertex AI, the Gemini Developer API, an
 * OpenAI-compatible server) behind `createChatModel`. `choose.ts` decides which one runs from
 * configuration; the graph never knows which.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { ModelConfig, ModelProvider } from "../../config";
import {
  ModelConfigError,
  gatherCredentialFacts,
  resolveModel,
  type CredentialFacts,
  type ModelStatus,
} from "./choose";
import type { ModelInfo } from "./errors";
import { useModelKeepAlive } from "./transport";

export {
  ModelConfigError,
  describeModel,
  gatherCredentialFacts,
  preflightVertex,
  resolveModel,
  type CredentialFacts,
  type ModelStatus,
} from "./choose";
export { type ModelInfo } from "./errors";

const BUILDERS: Record<ModelProvider, (cfg: ModelConfig, model: string) => Promise<BaseChatModel>> = {
  vertex: async (cfg, model) => (await import("./vertex.js")).createVertexModel(cfg, model),
  gemini: async (cfg, model) => (await import("./gemini-api.js")).createGeminiApiModel(cfg, model),
  openai: async (cfg, model) =>
    (await import("./openai-compatible.js")).createOpenAICompatibleModel(cfg, model),
};

/** The chosen model and what it is; throws ModelConfigError (saying what to set) when none can run. */
export async function createModel(
  cfg: ModelConfig,
  facts: CredentialFacts | undefined = gatherCredentialFacts(cfg),
): Promise<{ model: BaseChatModel; info: ModelInfo; status: ModelStatus }> {
  const status = resolveModel(cfg, facts);
  if (!status.ready) throw new ModelConfigError(status.message);
  await useModelKeepAlive();
  const model = await BUILDERS[status.provider](cfg, status.model);
  return {
    model,
    info: { provider: status.provider, model: status.model, endpoint: status.endpoint },
    status,
  };
}

/** Builds the configured chat model (see `createModel`). */
export async function createChatModel(
  cfg: ModelConfig,
  facts: CredentialFacts = gatherCredentialFacts(cfg),
): Promise<BaseChatModel> {
  return (await createModel(cfg, facts)).model;
}

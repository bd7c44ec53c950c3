/**
 * The optional embedding model for schema linking (`QUARRY_EMBEDDING_MODEL`), from the same
 * provider as the chat model: Vertex AI (`VertexAIEmbeddings`), the Gemini Developer API
 * (`GoogleGenerativeAIEmbeddings`) or an OpenAI-compatible server (`OpenAIEmbeddings`, e.g.
 * Ollama's `nomic-embed-text`). Unset, linking stays lexical and offline.
 */
import type { EmbeddingsInterface } from "@langchain/core/embeddings";
import type { ModelConfig } from "../../config";
import { gatherCredentialFacts, resolveModel, type CredentialFacts } from "./choose";
import { MODEL_MAX_RETRIES } from "./common";

export interface EmbeddingModel {
  embeddings: EmbeddingsInterface;
  provider: string;
  model: string;
}

/** The configured embedding model, or undefined when none is configured or no provider can run. */
export async function createEmbeddingModel(
  cfg: ModelConfig,
  facts: CredentialFacts = gatherCredentialFacts(cfg),
): Promise<EmbeddingModel | undefined> {
  const model = cfg.embeddingModel;
  if (!model) return undefined;
  const status = resolveModel(cfg, facts);
  if (!status.ready) return undefined;
  const provider = status.provider;
  if (provider === "openai") {
    const { OpenAIEmbeddings } = await import("@langchain/openai");
    return {
      provider,
      model,
      embeddings: new OpenAIEmbeddings({
        model,
        maxRetries: MODEL_MAX_RETRIES,
        apiKey: cfg.openaiApiKey ?? "not-needed",
        configuration: { baseURL: cfg.openaiBaseUrl },
      }),
    };
  }
  if (provider === "gemini") {
    const { GoogleGenerativeAIEmbeddings } = await import("@langchain/google-genai");
    return {
      provider,
      model,
      embeddings: new GoogleGenerativeAIEmbeddings({
        model,
        apiKey: cfg.geminiApiKey,
        maxRetries: MODEL_MAX_RETRIES,
        ...(cfg.geminiBaseUrl ? { baseUrl: cfg.geminiBaseUrl.replace(/\/$/, "") } : {}),
      }),
    };
  }
  const { VertexAIEmbeddings } = await import("@langchain/google-vertexai");
  const authClient = { fetch: (url: string, init?: RequestInit) => fetch(url, init) };
  return {
    provider,
    model,
    embeddings: new VertexAIEmbeddings({
      model,
      location: cfg.location,
      maxRetries: MODEL_MAX_RETRIES,
      apiKey: "",
      ...(cfg.emulatorHost
        ? {
            endpoint: cfg.emulatorHost,
            authOptions: { projectId: cfg.project, authClient: authClient as never },
          }
        : { authOptions: { projectId: cfg.project } }),
    }),
  };
}

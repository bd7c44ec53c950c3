/**
 * Vertex AI: Gemini through `@langchain/google-vertexai`'s ChatVertexAI, loaded lazily.
 * `VERTEX_AI_EMULATOR_HOST=host:port` points the same class at a local HTTPS stand-in with no
 * credentials (the way FIRESTORE_EMULATOR_HOST works for Firestore): the library builds
 * `https://{endpoint}/v1/projects/{project}/locations/{location}/publishers/google/models/{model}:
 * streamGenerateContent`, and GoogleAuth uses the `authClient` and `projectId` we hand it instead
 * of looking for credentials or probing the metadata server. Trust the stand-in's self-signed
 * certificate with NODE_EXTRA_CA_CERTS.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { ModelConfig } from "../../config";
import { asChatModel, MODEL_MAX_RETRIES } from "./common";

export async function createVertexModel(cfg: ModelConfig, model: string): Promise<BaseChatModel> {
  const { ChatVertexAI } = await import("@langchain/google-vertexai");
  const common = {
    model,
    temperature: cfg.temperature,
    location: cfg.location,
    maxRetries: MODEL_MAX_RETRIES,
  };
  if (!cfg.emulatorHost) {
    // An empty apiKey keeps a GOOGLE_API_KEY in the environment from switching the library to
    // the Gemini Developer API: this module is Vertex AI only.
    return asChatModel(new ChatVertexAI({ ...common, apiKey: "", authOptions: { projectId: cfg.project } }));
  }
  // The stand-in needs no token: an auth client whose fetch is plain fetch.
  const authClient = { fetch: (url: string, init?: RequestInit) => fetch(url, init) };
  return asChatModel(
    new ChatVertexAI({
      ...common,
      apiKey: "",
      endpoint: cfg.emulatorHost,
      authOptions: { projectId: cfg.project, authClient: authClient as never },
    }),
  );
}

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
import { asChatModel, LIBRARY_RETRY } from "./common";

export async function createVertexModel(cfg: ModelConfig, model: string): Promise<BaseChatModel> {
  const { ChatVertexAI } = await import("@langchain/google-vertexai");
  const common = {
    model,
    temperature: cfg.temperature,
    location: cfg.location,
    ...LIBRARY_RETRY,
    // An empty apiKey keeps a GOOGLE_API_KEY in the environment from switching the library to
    // the Gemini Developer API: this module is Vertex AI only.
    apiKey: "",
  };
  if (!cfg.emulatorHost) {
    return keepEveryStreamedPart(
      surfaceStreamFailures(
        asChatModel(new ChatVertexAI({ ...common, authOptions: { projectId: cfg.project } })),
      ),
    );
  }
  // The stand-in needs no token: an auth client whose fetch is plain fetch.
  const authClient = { fetch: (url: string, init?: RequestInit) => fetch(url, init) };
  return keepEveryStreamedPart(
    surfaceStreamFailures(
      asChatModel(
        new ChatVertexAI({
          ...common,
          endpoint: cfg.emulatorHost,
          authOptions: { projectId: cfg.project, authClient: authClient as never },
        }),
      ),
    ),
  );
}

interface StreamingClient {
  _buildData: (res: { body?: unknown }, opts: { responseType?: string }) => Promise<unknown>;
}
interface ChunkStream {
  nextChunk: () => Promise<unknown>;
}

/**
 * Works around @langchain/google-common 2.3.2 losing a failure of a streamed response's body:
 * `ReadableAbstractStream.run()` is never awaited, so a connection cut in the middle of an answer
 * becomes an unhandled rejection and the chunk stream never ends — the run would hang until the
 * function's timeout. The library now reads a body that ends instead of failing, and its chunk
 * reader rethrows the failure once the chunks that had fully arrived are consumed.
 */
function surfaceStreamFailures(model: BaseChatModel): BaseChatModel {
  const client = (model as unknown as { streamedConnection?: { client?: StreamingClient } })
    .streamedConnection?.client;
  if (!client?._buildData) return model;
  const build = client._buildData.bind(client);
  client._buildData = async (res, opts) => {
    if (opts?.responseType !== "stream" || !res?.body) return build(res, opts);
    const failure: { error?: unknown } = {};
    const stream = (await build({ body: endInsteadOfFailing(res.body, failure) }, opts)) as ChunkStream;
    const next = stream.nextChunk.bind(stream);
    stream.nextChunk = async () => {
      const chunk = await next();
      if (chunk === null && "error" in failure) throw failure.error;
      return chunk;
    };
    return stream;
  };
  return model;
}

async function* endInsteadOfFailing(body: unknown, failure: { error?: unknown }): AsyncGenerator<Uint8Array> {
  try {
    for await (const part of body as AsyncIterable<Uint8Array>) yield part;
  } catch (err) {
    failure.error = err;
  }
}

interface GeminiApi {
  responseToChatGeneration: (response: { data: unknown }) => { message: unknown; generationInfo?: unknown };
  responseToBaseMessage: (response: { data: unknown }) => {
    content: unknown;
    tool_calls?: { name: string; args: unknown; id?: string }[];
    additional_kwargs?: Record<string, unknown>;
  };
  responseToString: (response: { data: unknown }) => string;
}

/**
 * Works around @langchain/google-common 2.3.2 reading only the first part of each streamed Gemini
 * response (langchain-ai/langchainjs#10196, fix pending in #10197): parallel function calls, which
 * Gemini sends as several parts of one chunk, lost all but the first — and Quarry streams every
 * model call (LangGraph's messages mode). A chunk with several parts is rebuilt from all of them
 * through the library's own non-streaming converter; single-part chunks are left as they are.
 */
async function keepEveryStreamedPart(model: BaseChatModel): Promise<BaseChatModel> {
  const { AIMessageChunk } = await import("@langchain/core/messages");
  const { ChatGenerationChunk } = await import("@langchain/core/outputs");
  const connection = (model as unknown as { connection?: { api?: GeminiApi } }).connection;
  const api = connection?.api; // a getter that builds a new object per call: pin one, patched
  if (!connection || !api) return model;
  Object.defineProperty(connection, "api", { value: api, configurable: true });
  const firstPartOnly = api.responseToChatGeneration.bind(api);
  api.responseToChatGeneration = (response) => {
    const chunk = firstPartOnly(response); // keeps the safety handling, usage and finish reason
    const data = response.data as { candidates?: { content?: { parts?: unknown[] } }[] } | undefined;
    if ((data?.candidates?.[0]?.content?.parts?.length ?? 0) <= 1) return chunk;
    const full = api.responseToBaseMessage(response);
    const text = api.responseToString(response);
    const first = chunk.message as { response_metadata?: Record<string, unknown> };
    const calls = full.tool_calls ?? [];
    return new ChatGenerationChunk({
      text,
      generationInfo: chunk.generationInfo as Record<string, unknown> | undefined,
      message: new AIMessageChunk({
        content: text,
        tool_calls: calls.map((c) => ({
          ...c,
          args: c.args as Record<string, unknown>,
          type: "tool_call" as const,
        })),
        tool_call_chunks: calls.map((c) => ({
          name: c.name,
          args: JSON.stringify(c.args),
          id: c.id,
          type: "tool_call_chunk" as const,
        })),
        additional_kwargs: full.additional_kwargs ?? {},
        response_metadata: first.response_metadata ?? {},
      }),
    });
  };
  return model;
}

/**
 * A loopback OpenAI-compatible server (the protocol Ollama, vLLM, llama.cpp's server and LM Studio
 * speak): `POST /v1/chat/completions`, streamed as SSE `chat.completion.chunk`s with text deltas,
 * tool calls streamed in pieces (id and name first, then argument fragments; several calls by
 * `index` for parallel calls), `finish_reason`, a usage chunk when `stream_options.include_usage`
 * asks for it, and `[DONE]`; errors in OpenAI's `{error: {message, type, code}}` shape. Answers from
 * the same Script as the Google stand-in. Point the real ChatOpenAICompletions at it with
 * QUARRY_OPENAI_BASE_URL=<baseUrl>.
 */
import { randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { embedText } from "./embedding-space";
import {
  STANDIN_IDLE_CLOSE_MS,
  closeIdleConnections,
  dropConnection,
  type ConnectionStats,
} from "./standin-connections";
import { holdOrPause } from "./vertex-standin";
import {
  roleOf,
  smartScript,
  type Script,
  type ScriptReply,
  type ScriptRequest,
  type ScriptTurn,
} from "./scripted-model-script";

export interface OpenAIStandinOptions {
  script?: Script;
  /** `/v1/embeddings` answers with this error instead of vectors (a broken or missing embedding model). */
  embeddingError?: { status: number; message: string };
  /** Models the server has (others answer 404 like Ollama's "model not found"). */
  models?: string[];
  /** Bearer key required, if any (a wrong one answers 401 invalid_api_key). */
  apiKey?: string;
  charsPerChunk?: number;
  tokenDelayMs?: number;
  /** Idle connections are closed after this long, without notice (default STANDIN_IDLE_CLOSE_MS). */
  idleCloseMs?: number;
  /**
   * Models that read no images: a request with an `image_url` part for one of them answers 400 in
   * llama.cpp's server's words (a text-only model has no multimodal projector).
   */
  textOnly?: string[];
}

interface ChatMessage {
  role: "system" | "user" | "assistant" | "tool" | "developer";
  content?: string | { type: string; text?: string }[] | null;
  tool_calls?: { id: string; type: "function"; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}
interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  tools?: { type: "function"; function: { name: string } }[];
}

interface RecordedOpenAIRequest {
  body: ChatRequest;
  authorization?: string;
  request: ScriptRequest;
  reply: ScriptReply;
  closed: Promise<{ aborted: boolean; chunksSent: number }>;
}

export interface OpenAIStandin {
  /** `http://127.0.0.1:<port>/v1`, the value of QUARRY_OPENAI_BASE_URL. */
  baseUrl: string;
  requests: RecordedOpenAIRequest[];
  /** What the server did to its connections: opened, closed when idle, reset. */
  connections: ConnectionStats;
  setScript(script: Script): void;
  /** `/v1/embeddings` requests served so far. */
  embeddingRequests(): number;
  stop(): Promise<void>;
}

interface EmbeddingRequest {
  model: string;
  input: string | string[];
  encoding_format?: "float" | "base64";
}

/** OpenAI's `/v1/embeddings`: one vector per input, as floats or as base64 float32 (the SDK's default). */
function embeddings(res: http.ServerResponse, body: EmbeddingRequest, opts: OpenAIStandinOptions) {
  if (opts.embeddingError) {
    return sendError(res, opts.embeddingError.status, opts.embeddingError.message, "api_error");
  }
  const inputs = Array.isArray(body.input) ? body.input : [body.input];
  const data = inputs.map((text, index) => {
    const v = embedText(String(text));
    const embedding =
      body.encoding_format === "base64" ? Buffer.from(Float32Array.from(v).buffer).toString("base64") : v;
    return { object: "embedding", index, embedding };
  });
  const tokens = inputs.reduce((n, t) => n + Math.ceil(String(t).length / 4), 0);
  res.writeHead(200, { "content-type": "application/json" });
  res.end(
    JSON.stringify({
      object: "list",
      data,
      model: body.model,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    }),
  );
}

const text = (c: ChatMessage["content"]) =>
  typeof c === "string" ? c : (c ?? []).map((p) => p.text ?? "").join("");

/** Chat messages → the script's request. */
function normaliseChat(body: ChatRequest, call: number): ScriptRequest {
  const names = new Map<string, string>();
  let system = "";
  const turns: ScriptTurn[] = [];
  for (const m of body.messages ?? []) {
    if (m.role === "system" || m.role === "developer") system += (system ? "\n" : "") + text(m.content);
    else if (m.role === "user") turns.push({ role: "user", text: text(m.content) });
    else if (m.role === "assistant") {
      const calls = (m.tool_calls ?? []).map((c) => {
        names.set(c.id, c.function.name);
        return {
          name: c.function.name,
          args: JSON.parse(c.function.arguments || "{}") as Record<string, unknown>,
        };
      });
      turns.push({ role: "model", text: text(m.content), toolCalls: calls });
    } else if (m.role === "tool") {
      turns.push({ role: "tool", text: text(m.content), toolName: names.get(m.tool_call_id ?? "") });
    }
  }
  const tools = (body.tools ?? []).map((t) => t.function.name);
  return { role: roleOf(system || turns[0]?.text || ""), system, turns, tools, call };
}

function sendError(res: http.ServerResponse, status: number, message: string, type: string, code?: string) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ error: { message, type, param: null, code: code ?? null } }));
}

export async function startOpenAIStandin(opts: OpenAIStandinOptions = {}): Promise<OpenAIStandin> {
  let script = opts.script ?? smartScript();
  let calls = 0;
  let embeddingRequests = 0;
  const requests: RecordedOpenAIRequest[] = [];
  const connections: ConnectionStats = { opened: 0, idleClosed: 0, dropped: 0 };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      void (async () => {
        if (req.method === "POST" && req.url === "/v1/embeddings") {
          embeddingRequests++;
          return embeddings(
            res,
            JSON.parse(Buffer.concat(chunks).toString("utf8")) as EmbeddingRequest,
            opts,
          );
        }
        if (req.method !== "POST" || req.url !== "/v1/chat/completions")
          return sendError(res, 404, `No route ${req.method} ${req.url}`, "invalid_request_error");
        const authorization = req.headers.authorization;
        if (opts.apiKey && authorization !== `Bearer ${opts.apiKey}`) {
          return sendError(
            res,
            401,
            "Incorrect API key provided.",
            "invalid_request_error",
            "invalid_api_key",
          );
        }
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as ChatRequest;
        if (opts.models && !opts.models.includes(body.model)) {
          return sendError(res, 404, `model "${body.model}" not found, try pulling it first`, "api_error");
        }
        const imaged = (body.messages ?? []).some(
          (m) =>
            Array.isArray(m.content) && m.content.some((p) => (p as { type?: unknown }).type === "image_url"),
        );
        if (imaged && opts.textOnly?.includes(body.model)) {
          return sendError(
            res,
            400,
            "image input is not supported - hint: if this is unexpected, you may need to provide the mmproj",
            "invalid_request_error",
          );
        }
        const request = normaliseChat(body, calls++);
        const reply = await script(request);
        const sent = { n: 0 };
        const closed = new Promise<{ aborted: boolean; chunksSent: number }>((resolve) =>
          res.once("close", () => resolve({ aborted: !res.writableFinished, chunksSent: sent.n })),
        );
        requests.push({ body, authorization, request, reply, closed });
        if (reply.drop?.afterChunks === 0) return dropConnection(res, reply.drop.with, connections);
        if (reply.error) return sendError(res, reply.error.status, reply.error.message, "api_error");
        if (!body.stream) return complete(res, body, reply);
        await stream(res, body, reply, opts, sent, connections);
      })().catch((err: unknown) => {
        if (!res.headersSent) sendError(res, 500, String(err), "server_error");
        else res.destroy();
      });
    });
  });
  closeIdleConnections(server, opts.idleCloseMs ?? STANDIN_IDLE_CLOSE_MS, connections, false);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    connections,
    embeddingRequests: () => embeddingRequests,
    setScript(s) {
      script = s;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function usageOf(reply: ScriptReply) {
  const input = reply.usage?.input ?? 10;
  const output = reply.usage?.output ?? Math.max(1, Math.ceil((reply.text ?? "").length / 4));
  return { prompt_tokens: input, completion_tokens: output, total_tokens: input + output };
}

const toolCalls = (reply: ScriptReply) =>
  (reply.toolCalls ?? []).map((c, i) => ({
    id: `call_${i}_${c.name}`,
    type: "function" as const,
    function: { name: c.name, arguments: JSON.stringify(c.args) },
  }));

function complete(res: http.ServerResponse, body: ChatRequest, reply: ScriptReply) {
  const calls = toolCalls(reply);
  res.writeHead(200, { "content-type": "application/json" });
  res.end(
    JSON.stringify({
      id: `chatcmpl-${randomUUID()}`,
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model: body.model,
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: reply.text ?? "",
            ...(calls.length ? { tool_calls: calls } : {}),
          },
          finish_reason: calls.length ? "tool_calls" : "stop",
        },
      ],
      usage: usageOf(reply),
    }),
  );
}

async function stream(
  res: http.ServerResponse,
  body: ChatRequest,
  reply: ScriptReply,
  opts: OpenAIStandinOptions,
  sent: { n: number },
  connections: ConnectionStats,
) {
  // Each completion has its own id, as real servers give (LangChain uses it as the message id).
  const base = {
    id: `chatcmpl-${randomUUID()}`,
    object: "chat.completion.chunk",
    created: 0,
    model: body.model,
  };
  const deltas: Record<string, unknown>[] = [{ role: "assistant", content: "" }];
  const size = opts.charsPerChunk ?? 8;
  const t = reply.text ?? "";
  for (let i = 0; i < t.length; i += size) deltas.push({ content: t.slice(i, i + size) });
  toolCalls(reply).forEach((c, index) => {
    deltas.push({
      tool_calls: [{ index, id: c.id, type: "function", function: { name: c.function.name, arguments: "" } }],
    });
    // Arguments arrive in fragments, as real servers send them.
    const args = c.function.arguments;
    for (let i = 0; i < args.length; i += 7)
      deltas.push({ tool_calls: [{ index, function: { arguments: args.slice(i, i + 7) } }] });
  });
  res.writeHead(200, { "content-type": "text/event-stream" });
  const write = (chunk: object) => {
    res.write(`data: ${JSON.stringify({ ...base, ...chunk })}\n\n`);
    sent.n++;
  };
  for (let i = 0; i < deltas.length; i++) {
    if (opts.tokenDelayMs) await new Promise((r) => setTimeout(r, opts.tokenDelayMs));
    await holdOrPause(res, reply, i);
    if (res.destroyed) return;
    if (reply.drop?.afterChunks === i) return dropConnection(res, reply.drop.with, connections);
    write({ choices: [{ index: 0, delta: deltas[i], finish_reason: null }] });
  }
  write({
    choices: [{ index: 0, delta: {}, finish_reason: reply.toolCalls?.length ? "tool_calls" : "stop" }],
  });
  if (body.stream_options?.include_usage) write({ choices: [], usage: usageOf(reply) });
  res.end("data: [DONE]\n\n");
}

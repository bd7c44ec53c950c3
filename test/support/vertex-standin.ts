/**
 * A loopback Google model stand-in: an HTTPS server speaking Gemini's `generateContent` and
 * `streamGenerateContent` (the streamed JSON array ChatVertexAI reads, or SSE with `alt=sse`), with
 * text and function-call parts and usageMetadata, answering from a Script per request — on both
 * Vertex AI's path (`/v1/projects/…/publishers/google/models/…`) and the Gemini Developer API's
 * (`/v1beta/models/…`, key in `x-goog-api-key`, refused like Google does when it is wrong). Point
 * the real ChatVertexAI at it with VERTEX_AI_EMULATOR_HOST=<host>, ChatGoogleGenerativeAI with
 * QUARRY_GEMINI_BASE_URL=https://<host>, and trust its certificate with
 * NODE_EXTRA_CA_CERTS=<certFile> (other processes) or `trust: true` (this one).
 */
import https from "node:https";
import type { AddressInfo } from "node:net";
import {
  STANDIN_IDLE_CLOSE_MS,
  closeIdleConnections,
  dropConnection,
  type ConnectionStats,
} from "./standin-connections";
import { makeSelfSignedCert, trustCertificate } from "./vertex-standin-cert";
import {
  roleOf,
  smartScript,
  type Script,
  type ScriptReply,
  type ScriptRequest,
  type ScriptTurn,
} from "./scripted-model-script";

export interface StandinOptions {
  /** Replies per request; defaults to `smartScript()` over the DuckDB sample dataset. */
  script?: Script;
  /** Delay before each streamed text chunk, for load tests. */
  tokenDelayMs?: number;
  /** Characters of text per streamed chunk. */
  charsPerChunk?: number;
  /** Trust the certificate in this process (tls default CA list). */
  trust?: boolean;
  port?: number;
  /** The Gemini Developer API key this stand-in accepts (any other is refused with API_KEY_INVALID). */
  apiKey?: string;
  /** Idle connections are closed after this long, without notice (default STANDIN_IDLE_CLOSE_MS). */
  idleCloseMs?: number;
}

interface RecordedStandinRequest {
  /** Which of Google's APIs was called. */
  api: "vertex" | "gemini";
  model: string;
  method: "generateContent" | "streamGenerateContent";
  /** Vertex AI only. */
  project: string;
  location: string;
  /** The Gemini API key sent, if any. */
  apiKey?: string;
  /** Resolves when the response is over: `aborted` when the client closed it before the end. */
  closed: Promise<{ aborted: boolean; chunksSent: number }>;
  body: GeminiRequest;
  request: ScriptRequest;
  reply: ScriptReply;
}

export interface VertexStandin {
  /** `127.0.0.1:<port>`, the value of VERTEX_AI_EMULATOR_HOST. */
  host: string;
  /** PEM file for NODE_EXTRA_CA_CERTS. */
  certFile: string;
  certPem: string;
  requests: RecordedStandinRequest[];
  /**
   * Every model call as it arrived (before the script answers it, so a held call is here too) and
   * how its response ended: still `open`, `finished`, or `aborted` by the client (the function
   * dropping a model call it no longer needs).
   */
  arrivals: { prompt: string; state: "open" | "finished" | "aborted" }[];
  /** What the server did to its connections: opened, closed when idle, reset. */
  connections: ConnectionStats;
  /** Replaces the script for the following requests. */
  setScript(script: Script): void;
  stop(): Promise<void>;
}

interface GeminiPart {
  text?: string;
  functionCall?: { name: string; args?: Record<string, unknown> };
  functionResponse?: { name: string; response?: unknown };
}
interface GeminiContent {
  role?: string;
  parts?: GeminiPart[];
}
interface GeminiRequest {
  contents?: GeminiContent[];
  systemInstruction?: GeminiContent;
  tools?: { functionDeclarations?: { name: string }[] }[];
}

const PATH =
  /^\/v1(?:beta1?)?\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/google\/models\/([^/:]+):(streamGenerateContent|generateContent)$/;
const GEMINI_API_PATH = /^\/v1(?:beta)?\/models\/([^/:]+):(streamGenerateContent|generateContent)$/;

/** What the Gemini Developer API answers for a wrong key (HTTP 400, reason API_KEY_INVALID). */
const API_KEY_INVALID = {
  error: {
    code: 400,
    message: "API key not valid. Please pass a valid API key.",
    status: "INVALID_ARGUMENT",
    details: [
      {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        reason: "API_KEY_INVALID",
        domain: "googleapis.com",
        metadata: { service: "generativelanguage.googleapis.com" },
      },
    ],
  },
};

export async function startVertexStandin(opts: StandinOptions = {}): Promise<VertexStandin> {
  const cert = makeSelfSignedCert();
  if (opts.trust) trustCertificate(cert.cert);
  let script = opts.script ?? smartScript();
  let calls = 0;
  const requests: RecordedStandinRequest[] = [];
  const arrivals: VertexStandin["arrivals"] = [];
  const connections: ConnectionStats = { opened: 0, idleClosed: 0, dropped: 0 };

  const server = https.createServer({ key: cert.key, cert: cert.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      void (async () => {
        const url = new URL(req.url ?? "/", "https://standin");
        const vertex = PATH.exec(url.pathname);
        const gemini = vertex ? null : GEMINI_API_PATH.exec(url.pathname);
        if (req.method !== "POST" || !(vertex || gemini))
          return sendError(res, 404, `No such Vertex AI or Gemini API method: ${req.method} ${url.pathname}`);
        const apiKey =
          (req.headers["x-goog-api-key"] as string | undefined) ?? url.searchParams.get("key") ?? undefined;
        if (gemini && apiKey !== opts.apiKey) {
          res.writeHead(400, { "content-type": "application/json" });
          return res.end(JSON.stringify(API_KEY_INVALID));
        }
        let body: GeminiRequest;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as GeminiRequest;
        } catch {
          return sendError(res, 400, "Request body is not JSON.");
        }
        const arrival: VertexStandin["arrivals"][number] = { prompt: JSON.stringify(body), state: "open" };
        arrivals.push(arrival);
        res.once("close", () => (arrival.state = res.writableFinished ? "finished" : "aborted"));
        const request = normalise(body, calls++);
        let reply: ScriptReply;
        try {
          reply = await script(request);
        } catch (err) {
          return sendError(res, 500, `Stand-in script failed: ${String(err)}`);
        }
        const method = (vertex ? vertex[4] : gemini![2]) as RecordedStandinRequest["method"];
        const sent = { n: 0 };
        const closed = new Promise<{ aborted: boolean; chunksSent: number }>((resolve) =>
          res.once("close", () => resolve({ aborted: !res.writableFinished, chunksSent: sent.n })),
        );
        requests.push({
          api: vertex ? "vertex" : "gemini",
          project: vertex?.[1] ?? "",
          location: vertex?.[2] ?? "",
          model: vertex ? vertex[3] : gemini![1],
          method,
          apiKey,
          closed,
          body,
          request,
          reply,
        });
        if (reply.drop?.afterChunks === 0) return dropConnection(res, reply.drop.with, connections);
        if (reply.error) return sendError(res, reply.error.status, reply.error.message);
        if (reply.blocked) {
          res.writeHead(200, {
            "content-type": method === "generateContent" ? "application/json" : "text/event-stream",
          });
          const blocked = JSON.stringify({
            promptFeedback: { blockReason: "SAFETY" },
            modelVersion: "standin",
          });
          return res.end(
            method === "generateContent"
              ? blocked
              : url.searchParams.get("alt") === "sse"
                ? `data: ${blocked}\r\n\r\n`
                : `[${blocked}]`,
          );
        }
        if (method === "generateContent") {
          res.writeHead(200, { "content-type": "application/json" });
          return res.end(JSON.stringify(response(reply, reply.text ?? "", true)));
        }
        await stream(res, reply, url.searchParams.get("alt") === "sse", opts, sent, connections);
      })().catch((err) => {
        if (!res.headersSent) sendError(res, 500, String(err));
        else res.destroy();
      });
    });
  });
  closeIdleConnections(server, opts.idleCloseMs ?? STANDIN_IDLE_CLOSE_MS, connections, true);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    host: `127.0.0.1:${port}`,
    certFile: cert.certFile,
    certPem: cert.cert,
    requests,
    arrivals,
    connections,
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

function sendError(res: import("node:http").ServerResponse, status: number, message: string): void {
  const code =
    (
      { 400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND" } as const
    )[status as 400] ?? (status === 429 ? "RESOURCE_EXHAUSTED" : status === 503 ? "UNAVAILABLE" : "INTERNAL");
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ error: { code: status, message, status: code } }));
}

/** One GenerateContentResponse; usage only on the last chunk, as Vertex AI does. */
function response(reply: ScriptReply, text: string, last: boolean, withCalls = last) {
  const parts: GeminiPart[] = [];
  if (text) parts.push({ text });
  if (withCalls)
    for (const c of reply.toolCalls ?? []) parts.push({ functionCall: { name: c.name, args: c.args } });
  const input = reply.usage?.input ?? 10;
  const output = reply.usage?.output ?? Math.max(1, Math.ceil((reply.text ?? "").length / 4));
  return {
    candidates: [{ content: { role: "model", parts }, index: 0, ...(last ? { finishReason: "STOP" } : {}) }],
    ...(last
      ? {
          usageMetadata: {
            promptTokenCount: input,
            candidatesTokenCount: output,
            totalTokenCount: input + output,
          },
        }
      : {}),
    modelVersion: "standin",
  };
}

/** Longest a held reply waits for its client to go away. */
const HOLD_LIMIT_MS = 30_000;

/**
 * Before chunk `i`: a held reply (`holdAfterChunks`) waits until the client goes away (bounded by
 * HOLD_LIMIT_MS, so a broken test ends); a paused one (`pauseAfterChunks`) until the test's
 * `resume` or the client goes away. Tests act at a known point instead of racing a stream.
 */
export async function holdOrPause(res: import("node:http").ServerResponse, reply: ScriptReply, i: number) {
  if (reply.holdAfterChunks === i) {
    await new Promise<void>((r) => {
      const t = setTimeout(r, HOLD_LIMIT_MS);
      res.once("close", () => {
        clearTimeout(t);
        r();
      });
    });
  }
  if (reply.pauseAfterChunks === i && reply.resume) {
    await Promise.race([reply.resume, new Promise((r) => res.once("close", r))]);
  }
}

async function stream(
  res: import("node:http").ServerResponse,
  reply: ScriptReply,
  sse: boolean,
  opts: StandinOptions,
  sent: { n: number },
  connections: ConnectionStats,
) {
  const text = reply.text ?? "";
  const size = opts.charsPerChunk ?? 8;
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size));
  if (pieces.length === 0) pieces.push("");
  res.writeHead(200, { "content-type": sse ? "text/event-stream" : "application/json" });
  if (!sse) res.write("[");
  for (let i = 0; i < pieces.length; i++) {
    if (opts.tokenDelayMs) await new Promise((r) => setTimeout(r, opts.tokenDelayMs));
    if (res.destroyed) return;
    await holdOrPause(res, reply, i);
    if (res.destroyed) return;
    if (reply.drop?.afterChunks === i) return dropConnection(res, reply.drop.with, connections);
    const body = JSON.stringify(response(reply, pieces[i], i === pieces.length - 1));
    res.write(sse ? `data: ${body}\r\n\r\n` : `${i ? ",\r\n" : ""}${body}`);
    sent.n++;
  }
  res.end(sse ? "" : "]");
}

function textOf(c: GeminiContent | undefined): string {
  return (c?.parts ?? []).map((p) => p.text ?? "").join("");
}

/** Gemini request → the script's request (system instruction, turns, tool names). */
function normalise(body: GeminiRequest, call: number): ScriptRequest {
  let system = textOf(body.systemInstruction);
  const contents = [...(body.contents ?? [])];
  // Without systemInstruction the library sends the system text as a user turn answered "Ok".
  if (
    !system &&
    contents.length > 1 &&
    roleOf(textOf(contents[0])) !== "unknown" &&
    textOf(contents[1]) === "Ok"
  ) {
    system = textOf(contents.shift());
    contents.shift();
  }
  const turns: ScriptTurn[] = [];
  for (const c of contents) {
    for (const p of c.parts ?? []) {
      if (p.functionResponse) {
        const r = p.functionResponse.response as { content?: unknown } | undefined;
        const content = typeof r?.content === "string" ? r.content : JSON.stringify(r?.content ?? r);
        turns.push({ role: "tool", text: content, toolName: p.functionResponse.name });
      }
    }
    const calls = (c.parts ?? [])
      .filter((p) => p.functionCall)
      .map((p) => ({ name: p.functionCall!.name, args: p.functionCall!.args ?? {} }));
    const text = textOf(c);
    if (c.role === "model") turns.push({ role: "model", text, toolCalls: calls });
    else if (c.role === "user" && (text || !(c.parts ?? []).some((p) => p.functionResponse)))
      turns.push({ role: "user", text });
  }
  const tools = (body.tools ?? []).flatMap((t) => (t.functionDeclarations ?? []).map((f) => f.name));
  return { role: roleOf(system || turns[0]?.text || ""), system, turns, tools, call };
}

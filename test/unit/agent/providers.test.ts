/**
 * The three model providers, each through its real LangChain client class against a loopback
 * stand-in of its own wire protocol, chosen by configuration exactly as the function chooses:
 * Vertex AI (ChatVertexAI → Vertex's streamGenerateContent), the Gemini Developer API
 * (ChatGoogleGenerativeAI → /v1beta/models/…, x-goog-api-key) and an OpenAI-compatible server
 * (ChatOpenAICompletions → /v1/chat/completions with streamed tool calls). Each must answer a
 * one-query question with parallel tool calls, SQL, a result table, streamed tokens and usage; turn a
 * bad key into a specific error with the question kept; and abort the upstream request on cancel.
 */
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { MemorySaver } from "@langchain/langgraph";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAgentGraph, resolveModel } from "../../../functions/src/agent";
import { closeWarehouses } from "../../../functions/src/tools";
import { startOpenAIStandin, type OpenAIStandin } from "../../support/openai-standin";
import { startVertexStandin, type VertexStandin } from "../../support/vertex-standin";
import { byRole, type Script, type ScriptReply } from "../../support/scripted-model-script";
import { duckTools, runTurn, testConfig, tokenChunks, type Harness } from "./harness";
import { personConfig } from "../../support/person";

const KEY = "AIza-test-key";
const PNG = Buffer.concat([Buffer.from("89504e470d0a1a0a", "hex"), Buffer.alloc(32, 7)]).toString("base64");
const PDF = Buffer.from("%PDF-1.7\n1 0 obj\n<<>>\nendobj\n").toString("base64");

/** The model requests a provider's stand-in received, as JSON text. */
function bodies(p: Provider): string[] {
  if (p.name === "openai") return openai.requests.map((r) => JSON.stringify(r.body));
  return google.requests.filter((r) => r.api === p.name).map((r) => JSON.stringify(r.body));
}
const SQL = "SELECT COUNT(*) AS orders FROM shop.orders";
const ANSWER = "There are 43,491 orders in the shop, counted over both years of data.";

let google: VertexStandin;
let openai: OpenAIStandin;
beforeAll(async () => {
  google = await startVertexStandin({ trust: true, apiKey: KEY, charsPerChunk: 6 });
  openai = await startOpenAIStandin({
    models: ["qwen2.5:7b", "llama3.2:3b"],
    textOnly: ["llama3.2:3b"],
    apiKey: "local-key",
    charsPerChunk: 6,
  });
});
afterAll(async () => {
  await google?.stop();
  await openai?.stop();
  await closeWarehouses();
});

interface Provider {
  name: "vertex" | "gemini" | "openai";
  env: () => Record<string, string>;
  setScript: (s: Script) => void;
  /** The stand-in's requests so far: the script's view and when each response closed. */
  requests: () => {
    role: string;
    tools: string[];
    closed: Promise<{ aborted: boolean; chunksSent: number }>;
  }[];
}

const PROVIDERS: Provider[] = [
  {
    name: "vertex",
    env: () => ({ VERTEX_AI_EMULATOR_HOST: google.host }),
    setScript: (s) => google.setScript(s),
    requests: () =>
      google.requests
        .filter((r) => r.api === "vertex")
        .map((r) => ({ role: r.request.role, tools: r.request.tools, closed: r.closed })),
  },
  {
    name: "gemini",
    env: () => ({ GEMINI_API_KEY: KEY, QUARRY_GEMINI_BASE_URL: `https://${google.host}` }),
    setScript: (s) => google.setScript(s),
    requests: () =>
      google.requests
        .filter((r) => r.api === "gemini")
        .map((r) => ({ role: r.request.role, tools: r.request.tools, closed: r.closed })),
  },
  {
    name: "openai",
    env: () => ({
      QUARRY_OPENAI_BASE_URL: openai.baseUrl,
      QUARRY_MODEL: "qwen2.5:7b",
      QUARRY_OPENAI_API_KEY: "local-key",
    }),
    setScript: (s) => openai.setScript(s),
    requests: () =>
      openai.requests.map((r) => ({ role: r.request.role, tools: r.request.tools, closed: r.closed })),
  },
];

const usage = { input: 120, output: 30 };
/** Planner: two tool calls at once, then the query; generator: the answer. */
function oneQueryScript(generator: ScriptReply = { text: ANSWER, usage }): Script {
  return byRole({
    planner: [
      {
        toolCalls: [
          { name: "list_tables", args: {} },
          { name: "describe_table", args: { table: "shop.orders" } },
        ],
        usage,
      },
      { toolCalls: [{ name: "bq_query", args: { sql: SQL } }], usage },
    ],
    generator: [generator],
  });
}

/** A machine without Google credentials, whatever this one has. */
const NO_GOOGLE = { credentialsFileExists: false, adcFileExists: false, onGoogleCloud: false };

async function graphFor(p: Provider, env: Record<string, string> = p.env()) {
  const cfg = testConfig(env);
  const status = resolveModel(cfg.model, NO_GOOGLE);
  const graph = await createAgentGraph({
    checkpointer: new MemorySaver(),
    tools: await duckTools(cfg),
    config: cfg,
    credentialFacts: NO_GOOGLE,
  });
  return { graph, status, h: { graph } as unknown as Harness };
}

describe.each(PROVIDERS)("provider $name through its real LangChain client", (p) => {
  it("is the one chosen when only it is configured", async () => {
    const { status } = await graphFor(p);
    expect(status).toMatchObject({ ready: true, provider: p.name });
  });

  it("answers a one-query question: parallel tool calls, SQL, table, streamed tokens, usage", async () => {
    p.setScript(oneQueryScript());
    const before = p.requests().length;
    const { h } = await graphFor(p);
    const out = await runTurn(h, `t-${p.name}-ok`, "How many orders are there?");
    expect(out.error).toBeUndefined();
    // Both tools of the first planner reply ran (parallel calls survived the wire both ways).
    const toolResults = out.updates
      .flatMap((u) => (u.executor as { messages?: { name?: string }[] } | undefined)?.messages ?? [])
      .map((m) => m.name);
    expect(toolResults).toEqual(expect.arrayContaining(["list_tables", "describe_table", "bq_query"]));
    const sqlEvent = out.custom.find((e) => e.type === "sql");
    expect(sqlEvent).toMatchObject({ sql: SQL });
    const result = out.custom.find((e) => e.type === "result");
    expect(result).toMatchObject({
      sql: SQL,
      totalRows: 1,
      columns: [expect.objectContaining({ name: "orders" })],
    });
    expect(result?.type === "result" && Number(result.rows[0].orders)).toBe(43_491);
    const tokens = tokenChunks(out);
    expect(new Set(tokens.map((t) => t.node))).toEqual(new Set(["generator"]));
    expect(tokens.length).toBeGreaterThan(3);
    expect(tokens.map((t) => t.text).join("")).toBe(ANSWER);
    // The tools went out on the wire, and usage came back from it.
    const reqs = p.requests().slice(before);
    expect(reqs.map((r) => r.role)).toEqual(["planner", "planner", "generator"]);
    expect(reqs[0].tools).toEqual(expect.arrayContaining(["bq_query", "list_tables", "describe_table"]));
    const u = out.custom.filter((e) => e.type === "usage").at(-1);
    expect(u?.type === "usage" && u.turn.modelCalls).toBe(3);
    expect(u?.type === "usage" && u.turn.inputTokens).toBe(360);
  });

  it("an image in the question reaches the model in the provider's own form, the planner's call and the answer's", async () => {
    p.setScript(oneQueryScript());
    const before = bodies(p).length;
    const { h } = await graphFor(p);
    const out = await runTurn(h, `t-${p.name}-image`, [
      { type: "text", text: "How many orders are there? As in this chart." },
      { type: "image", mimeType: "image/png", data: PNG, metadata: { name: "q2.png" } },
    ]);
    expect(out.error).toBeUndefined();
    const sent = bodies(p).slice(before);
    expect(sent).toHaveLength(3);
    // The planner's first call and the answer's call carry the image, as this provider reads it.
    for (const body of [sent[0], sent[2]]) {
      if (p.name === "openai") expect(body).toContain(`"image_url":{"url":"data:image/png;base64,${PNG}"}`);
      else expect(body).toContain(`"inlineData":{"mimeType":"image/png","data":"${PNG}"}`);
    }
  });

  it("a PDF in the question: Gemini and Vertex read it; an OpenAI-compatible server is not called, the error says why", async () => {
    p.setScript(oneQueryScript());
    const before = bodies(p).length;
    const { h } = await graphFor(p);
    const out = await runTurn(h, `t-${p.name}-pdf`, [
      { type: "text", text: "How many orders are there?" },
      { type: "file", mimeType: "application/pdf", data: PDF, metadata: { filename: "r.pdf" } },
    ]);
    if (p.name === "openai") {
      expect(out.error).toMatchObject({
        code: "model:unsupported_input",
        message: expect.stringMatching(/PDF/),
      });
      expect(bodies(p).slice(before)).toHaveLength(0);
    } else {
      expect(out.error).toBeUndefined();
      expect(bodies(p).slice(before)[0]).toContain(
        `"inlineData":{"mimeType":"application/pdf","data":"${PDF}"}`,
      );
    }
  });

  it("aborts the upstream request when the run is cancelled mid-answer", { timeout: 40_000 }, async () => {
    p.setScript(
      oneQueryScript({ text: "A long answer that streams. ".repeat(40), usage, holdAfterChunks: 3 }),
    );
    const { h } = await graphFor(p);
    const abort = new AbortController();
    const before = p.requests().length;
    const out = { tokens: 0 };
    let error: unknown;
    try {
      const stream = await h.graph.stream(
        { messages: [{ type: "human", content: "How many orders?" }] } as never,
        {
          configurable: { thread_id: `t-${p.name}-abort`, ...personConfig() },
          streamMode: ["messages"],
          signal: abort.signal,
        },
      );
      for await (const [, [msg, meta]] of stream as AsyncIterable<
        [string, [{ content: unknown }, { langgraph_node?: string }]]
      >) {
        if (meta.langgraph_node === "generator" && String(msg.content)) out.tokens++;
        // The stand-in holds after its first chunks: cancel while the request is open.
        if (out.tokens === 1) abort.abort(new Error("run cancelled by the test"));
      }
    } catch (err) {
      error = err;
    }
    expect(error).toBeDefined();
    const generatorRequest = p
      .requests()
      .slice(before)
      .find((r) => r.role === "generator")!;
    // The connection to the model was closed by the client before the answer was complete.
    await expect(generatorRequest.closed).resolves.toMatchObject({ aborted: true });
    expect((await generatorRequest.closed).chunksSent).toBeLessThanOrEqual(4);
  });

  it("turns a bad key into a specific error naming what to set; the question stays stored", async () => {
    p.setScript(oneQueryScript());
    const bad =
      p.name === "gemini"
        ? { ...p.env(), GEMINI_API_KEY: "AIza-wrong" }
        : p.name === "openai"
          ? { ...p.env(), QUARRY_OPENAI_API_KEY: "wrong" }
          : p.env();
    if (p.name === "vertex") {
      // The stand-in takes no token; it answers the way Vertex AI answers bad credentials.
      p.setScript(() => ({
        error: { status: 401, message: "Request had invalid authentication credentials." },
      }));
    }
    const { h, graph } = await graphFor(p, bad);
    const out = await runTurn(h, `t-${p.name}-bad-key`, "How many orders?");
    const want = {
      gemini: /GEMINI_API_KEY.*aistudio\.google\.com\/apikey/,
      openai: /QUARRY_OPENAI_API_KEY/,
      vertex: /gcloud auth application-default login.*roles\/aiplatform\.user/,
    }[p.name];
    expect(out.error).toMatchObject({ code: "model:auth", message: expect.stringMatching(want) });
    const state = await graph.getState({ configurable: { thread_id: `t-${p.name}-bad-key` } });
    expect((state.values.messages as { content: unknown }[]).map((m) => m.content)).toEqual([
      "How many orders?",
    ]);
  });
});

describe("model service errors become specific codes", () => {
  const gemini = PROVIDERS[1];
  it.each([
    [
      { error: { status: 429, message: "Resource has been exhausted (e.g. check quota)." } },
      "model:quota",
      /Wait a minute/,
    ],
    [{ error: { status: 404, message: "models/gemini-9 is not found" } }, "model:not_found", /QUARRY_MODEL/],
    [{ error: { status: 503, message: "The model is overloaded." } }, "model:unavailable", /ask again/],
  ] as [ScriptReply, string, RegExp][])("%o → %s", { timeout: 30_000 }, async (reply, code, message) => {
    gemini.setScript(byRole({ planner: [{ text: "No data needed." }], generator: [reply] }));
    const { h } = await graphFor(gemini);
    const out = await runTurn(h, `t-gemini-${code}`, "hello");
    expect(out.error).toMatchObject({ code, message: expect.stringMatching(message) });
  });

  it.each([PROVIDERS[0], PROVIDERS[1]])("a safety block through $name says to rephrase", async (p) => {
    p.setScript(byRole({ planner: [{ text: "No data needed." }], generator: [{ blocked: true }] }));
    const { h } = await graphFor(p);
    const out = await runTurn(h, `t-${p.name}-blocked`, "hello");
    // Vertex's client names the block; the Gemini API client only sees an empty stream, so Quarry
    // says the reply was empty and that safety filters may have blocked it.
    expect(out.error).toMatchObject({
      code: p.name === "vertex" ? "model:safety" : expect.stringMatching(/^model:(safety|empty)$/),
      message: expect.stringMatching(/safety filters.*Rephrase/),
    });
  });

  it("an unknown model on an OpenAI-compatible server says how to get it", async () => {
    const { h } = await graphFor(PROVIDERS[2], { ...PROVIDERS[2].env(), QUARRY_MODEL: "llama9" });
    const out = await runTurn(h, "t-openai-no-model", "hello");
    expect(out.error).toMatchObject({
      code: "model:not_found",
      message: expect.stringMatching(/ollama pull llama9/),
    });
  });

  it("a text-only model on an OpenAI-compatible server: an image is refused in words, not as a bad request", async () => {
    const p = PROVIDERS.find((x) => x.name === "openai")!;
    p.setScript(oneQueryScript());
    const { h } = await graphFor(p, { ...p.env(), QUARRY_MODEL: "llama3.2:3b" });
    const out = await runTurn(h, "t-openai-text-only", [
      { type: "text", text: "How many orders are there?" },
      { type: "image", mimeType: "image/png", data: PNG },
    ]);
    expect(out.error).toMatchObject({
      code: "model:unsupported_input",
      message: expect.stringMatching(/cannot read the attached image.*llama3\.2:3b.*vision model/s),
    });
  });

  it("an unreachable server is a network error naming the address", { timeout: 30_000 }, async () => {
    // A port nothing listens on: the connection is refused (port 9 would be refused by fetch itself).
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const { h } = await graphFor(PROVIDERS[2], {
      ...PROVIDERS[2].env(),
      QUARRY_OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
    });
    const out = await runTurn(h, "t-openai-down", "hello");
    expect(out.error).toMatchObject({
      code: "model:network",
      message: expect.stringMatching(
        new RegExp(`could not reach .*127\\.0\\.0\\.1:${port}.*ECONNREFUSED.*running`),
      ),
    });
  });

  it("no model at all: the run stores the question and ends with what to set, calling nothing", async () => {
    const cfg = testConfig({});
    const graph = await createAgentGraph({
      checkpointer: new MemorySaver(),
      tools: await duckTools(cfg),
      config: cfg,
      credentialFacts: NO_GOOGLE,
    });
    const out = await runTurn({ graph } as unknown as Harness, "t-none", "How many orders?");
    expect(out.error).toMatchObject({
      code: "model:not_configured",
      message: expect.stringMatching(
        /GEMINI_API_KEY.*QUARRY_OPENAI_BASE_URL.*gcloud auth application-default login/,
      ),
    });
    const state = await graph.getState({ configurable: { thread_id: "t-none" } });
    expect((state.values.messages as { content: unknown }[]).map((m) => m.content)).toEqual([
      "How many orders?",
    ]);
  });
});

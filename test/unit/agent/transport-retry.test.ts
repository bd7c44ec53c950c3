/**
 * A model request whose connection the server drops — through each provider's real LangChain
 * client against its loopback stand-in, the stand-in dropping the connection at a known point:
 * - before anything was sent (a reset, or a close like a server's on an idle keep-alive
 *   connection, which is what failed Vertex AI answers under load: @langchain/google-common never
 *   retries an error without an HTTP status): sent again, and the answer arrives once;
 * - on every attempt: bounded, ending with `model:connection_lost`, which does not say "could not
 *   reach" (the server was reached);
 * - after the first tokens reached the user: not sent again, the run ends with
 *   `model:interrupted`, and no text is shown twice.
 */
import { HumanMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAgentGraph } from "../../../functions/src/agent";
import { MODEL_TRANSPORT_RETRY, libraryFailedAttempt } from "../../../functions/src/agent/model/transport";
import { backoffMs, transportFailure } from "../../../functions/src/transport";
import { closeWarehouses } from "../../../functions/src/tools";
import { errorInWords } from "../../../web/src/data/format";
import { startOpenAIStandin, type OpenAIStandin } from "../../support/openai-standin";
import { startVertexStandin, type VertexStandin } from "../../support/vertex-standin";
import { byRole, type Script, type ScriptReply } from "../../support/scripted-model-script";
import { duckTools, runTurn, testConfig, tokenChunks } from "./harness";
import { personConfig } from "../../support/person";

const KEY = "AIza-test-key";
const ANSWER = "There are 43,491 orders in the shop, counted over both years of data.";
const LONG = "Revenue grew in every quarter of the year, led by the outdoor category. ".repeat(6);
const usage = { input: 50, output: 20 };

let google: VertexStandin;
let openai: OpenAIStandin;
beforeAll(async () => {
  google = await startVertexStandin({ trust: true, apiKey: KEY, charsPerChunk: 6 });
  openai = await startOpenAIStandin({ models: ["qwen2.5:7b"], charsPerChunk: 6 });
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
  /** Roles of the requests the stand-in received for this provider, in order. */
  roles: () => string[];
}

const PROVIDERS: Provider[] = [
  {
    name: "vertex",
    env: () => ({ VERTEX_AI_EMULATOR_HOST: google.host }),
    setScript: (s) => google.setScript(s),
    roles: () => google.requests.filter((r) => r.api === "vertex").map((r) => r.request.role),
  },
  {
    name: "gemini",
    env: () => ({ GEMINI_API_KEY: KEY, QUARRY_GEMINI_BASE_URL: `https://${google.host}` }),
    setScript: (s) => google.setScript(s),
    roles: () => google.requests.filter((r) => r.api === "gemini").map((r) => r.request.role),
  },
  {
    name: "openai",
    env: () => ({ QUARRY_OPENAI_BASE_URL: openai.baseUrl, QUARRY_MODEL: "qwen2.5:7b" }),
    setScript: (s) => openai.setScript(s),
    roles: () => openai.requests.map((r) => r.request.role),
  },
];

const NO_GOOGLE = { credentialsFileExists: false, adcFileExists: false, onGoogleCloud: false };

async function graphFor(p: Provider) {
  const cfg = testConfig(p.env());
  return createAgentGraph({
    checkpointer: new MemorySaver(),
    tools: await duckTools(cfg),
    config: cfg,
    credentialFacts: NO_GOOGLE,
  });
}

/** The AI messages stored on the thread after the turn. */
async function storedAnswers(graph: Awaited<ReturnType<typeof graphFor>>, threadId: string) {
  const state = await graph.getState({ configurable: { thread_id: threadId } });
  return (state.values.messages as { getType(): string; content: unknown }[])
    .filter((m) => m.getType() === "ai")
    .map((m) => String(m.content));
}

describe.each(PROVIDERS)("$name: the connection dropped under a model request", (p) => {
  it.each(["reset", "close"] as const)(
    "before anything was sent (%s): sent again, the answer arrives once",
    { timeout: 30_000 },
    async (how) => {
      // Both the planner's (internal) and the generator's first requests are dropped.
      const drop: ScriptReply = { drop: { afterChunks: 0, with: how } };
      p.setScript(
        byRole({
          planner: [drop, { text: "No data needed.", usage }],
          generator: [drop, { text: ANSWER, usage }],
        }),
      );
      const before = p.roles().length;
      const graph = await graphFor(p);
      const thread = `t-${p.name}-before-${how}`;
      const out = await runTurn({ graph } as never, thread, "hello");
      expect(out.error).toBeUndefined();
      expect(p.roles().slice(before)).toEqual(["planner", "planner", "generator", "generator"]);
      const tokens = tokenChunks(out).filter((t) => t.node === "generator");
      expect(tokens.map((t) => t.text).join("")).toBe(ANSWER);
      expect(await storedAnswers(graph, thread)).toEqual([ANSWER]);
    },
  );

  it(
    "on every attempt: bounded, and the error says the server was reached",
    { timeout: 60_000 },
    async () => {
      p.setScript(
        byRole({
          planner: [{ text: "No data needed.", usage }],
          generator: [{ drop: { afterChunks: 0, with: "reset" } }],
        }),
      );
      const before = p.roles().length;
      const out = await runTurn({ graph: await graphFor(p) } as never, `t-${p.name}-always`, "hello");
      const generatorRequests = p
        .roles()
        .slice(before)
        .filter((r) => r === "generator");
      expect(generatorRequests).toHaveLength(MODEL_TRANSPORT_RETRY.attempts);
      expect(out.error).toMatchObject({
        code: "model:connection_lost",
        message: expect.stringMatching(/ask again in a moment/),
      });
      const message = (out.error as Error).message;
      expect(message).not.toMatch(/could not reach/);
      expect(message).toContain(`${MODEL_TRANSPORT_RETRY.attempts} times in a row`);
      expect(errorInWords(out.error)).toBe(message);
    },
  );

  it.each(["reset", "close"] as const)(
    "after the first tokens reached the user (%s): not sent again, model:interrupted, no text twice",
    { timeout: 30_000 },
    async (how) => {
      let release = () => {};
      const firstTokenSeen = new Promise<void>((r) => (release = r));
      // Two chunks go out; the stand-in holds until the user has a token, then drops the connection.
      p.setScript(
        byRole({
          planner: [{ text: "No data needed.", usage }],
          generator: [
            {
              text: LONG,
              usage,
              pauseAfterChunks: 2,
              resume: firstTokenSeen,
              drop: { afterChunks: 2, with: how },
            },
          ],
        }),
      );
      const before = p.roles().length;
      const graph = await graphFor(p);
      const shown: string[] = [];
      let error: unknown;
      try {
        const stream = await graph.stream(
          { messages: [new HumanMessage("hello")] },
          {
            configurable: { thread_id: `t-${p.name}-mid-${how}`, ...personConfig() },
            streamMode: "messages",
          },
        );
        for await (const [msg, meta] of stream as AsyncIterable<
          [{ content: unknown }, Record<string, unknown>]
        >) {
          if (meta.langgraph_node !== "generator" || !String(msg.content)) continue;
          shown.push(String(msg.content));
          release();
        }
      } catch (err) {
        error = err;
      }
      expect(error).toMatchObject({
        code: "model:interrupted",
        message: expect.stringMatching(/cut in the middle of the answer.*incomplete.*ask again/),
      });
      expect(errorInWords(error)).toBe((error as Error).message);
      expect(p.roles().slice(before)).toEqual(["planner", "generator"]);
      const text = shown.join("");
      expect(text.length).toBeGreaterThan(0);
      // What the user saw is the start of the answer, once: nothing was sent twice.
      expect(LONG.startsWith(text)).toBe(true);
      expect(text.length).toBeLessThanOrEqual(12);
    },
  );
});

describe("transport failures, read from the client libraries' errors", () => {
  const socketError = (code: string, message: string) => Object.assign(new Error(message), { code });
  it.each([
    [
      new TypeError("fetch failed", { cause: socketError("UND_ERR_SOCKET", "other side closed") }),
      "dropped",
      true,
    ],
    [new TypeError("fetch failed", { cause: socketError("ECONNRESET", "read ECONNRESET") }), "dropped", true],
    [
      new TypeError("terminated", { cause: socketError("UND_ERR_SOCKET", "other side closed") }),
      "dropped",
      true,
    ],
    [
      new TypeError("fetch failed", { cause: socketError("ECONNREFUSED", "connect ECONNREFUSED") }),
      "unanswered",
      true,
    ],
    [
      new TypeError("fetch failed", { cause: socketError("ENOTFOUND", "getaddrinfo ENOTFOUND") }),
      "unanswered",
      false,
    ],
    [new Error("[GoogleGenerativeAI Error]: Error reading from the stream"), "dropped", true],
    [
      socketError("ERR_HTTP2_STREAM_ERROR", "Stream closed with error code NGHTTP2_REFUSED_STREAM"),
      "dropped",
      true,
    ],
  ] as [Error, string, boolean][])("%s → %s (retryable: %s)", (err, kind, retryable) => {
    expect(transportFailure(err)).toMatchObject({ kind, retryable });
  });

  it("an HTTP answer or an abort is never a transport failure", () => {
    expect(transportFailure(Object.assign(new Error("fetch failed"), { status: 503 }))).toBeUndefined();
    expect(transportFailure(Object.assign(new Error("aborted"), { name: "AbortError" }))).toBeUndefined();
  });

  it("the client library retries 429 and 5xx, never a transport failure or another 4xx", () => {
    const status = (s: number) => Object.assign(new Error(`HTTP ${s}`), { status: s });
    expect(() => libraryFailedAttempt(status(503))).not.toThrow();
    expect(() => libraryFailedAttempt(status(429))).not.toThrow();
    expect(() => libraryFailedAttempt(status(400))).toThrow();
    expect(() => libraryFailedAttempt(new TypeError("fetch failed"))).toThrow();
  });

  it("backoff is jittered below a growing cap", () => {
    expect(backoffMs(MODEL_TRANSPORT_RETRY, 1, () => 0)).toBe(0);
    expect(backoffMs(MODEL_TRANSPORT_RETRY, 1, () => 0.999)).toBeLessThan(MODEL_TRANSPORT_RETRY.baseDelayMs);
    expect(backoffMs(MODEL_TRANSPORT_RETRY, 9, () => 0.999)).toBeLessThan(MODEL_TRANSPORT_RETRY.maxDelayMs);
  });
});

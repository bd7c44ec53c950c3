/**
 * The two-turn conversation through the real ChatVertexAI (@langchain/google-vertexai) against the
 * loopback Vertex AI stand-in: HTTPS with a self-signed certificate, streamGenerateContent, function
 * calls, usage metadata — no Google credentials and no metadata server.
 */
import { MemorySaver } from "@langchain/langgraph";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAgentGraph } from "../../../functions/src/agent";
import { createChatModel } from "../../../functions/src/agent/model";
import { closeWarehouses } from "../../../functions/src/tools";
import { startVertexStandin, type VertexStandin } from "../../support/vertex-standin";
import { duckTools, runTurn, testConfig, tokenChunks, type Harness } from "./harness";

let standin: VertexStandin;
beforeAll(async () => {
  standin = await startVertexStandin({ trust: true });
});
afterAll(async () => {
  await standin?.stop();
  await closeWarehouses();
});

describe("ChatVertexAI against the stand-in", () => {
  it("holds a two-turn conversation with tool calls, streamed answers and usage", async () => {
    const cfg = testConfig({ VERTEX_AI_EMULATOR_HOST: standin.host, QUARRY_VERTEX_LOCATION: "europe-west4" });
    const model = await createChatModel(cfg.model, {
      credentialsFileExists: false,
      adcFileExists: false,
      onGoogleCloud: false,
    });
    expect(model.constructor.name).toBe("ChatVertexAI");
    const graph = await createAgentGraph({
      checkpointer: new MemorySaver(),
      model,
      tools: await duckTools(cfg),
      config: cfg,
    });
    const h = { graph } as unknown as Harness;

    const first = await runTurn(h, "t-vertex", "How many orders are there?");
    expect(first.error).toBeUndefined();
    const result = first.custom.find((e) => e.type === "result");
    expect(result).toMatchObject({ sql: "SELECT COUNT(*) AS orders FROM shop.orders", totalRows: 1 });
    const tokens = tokenChunks(first);
    expect(new Set(tokens.map((t) => t.node))).toEqual(new Set(["generator"]));
    expect(tokens.length).toBeGreaterThan(2);
    expect(tokens.map((t) => t.text).join("")).toMatch(/^Here is what I found \(1 rows\)/);

    const second = await runTurn(h, "t-vertex", "And how many customers?");
    expect(second.error).toBeUndefined();
    expect(second.custom.find((e) => e.type === "result")).toMatchObject({
      sql: "SELECT COUNT(*) AS customers FROM shop.customers",
    });

    // The wire: the library's URL shape, the system instruction, function declarations, the first
    // turn visible in the second turn's prompt.
    const reqs = standin.requests;
    expect(reqs.every((r) => r.project === "demo-quarry" && r.location === "europe-west4")).toBe(true);
    expect(
      reqs.filter((r) => r.request.role === "planner").every((r) => r.request.tools.includes("bq_query")),
    ).toBe(true);
    const lastPlanner = reqs.filter((r) => r.request.role === "planner").at(-1)!.request;
    expect(lastPlanner.turns[0]).toMatchObject({ role: "user", text: "How many orders are there?" });
    expect(lastPlanner.turns.some((t) => t.role === "tool" && t.toolName === "list_tables")).toBe(true);
    // Three model calls per question: planner (list_tables), planner (bq_query), generator.
    expect(reqs.map((r) => r.request.role)).toEqual([
      "planner",
      "planner",
      "generator",
      "planner",
      "planner",
      "generator",
    ]);
    expect(reqs.some((r) => r.method === "streamGenerateContent")).toBe(true);

    // Usage metadata from the wire accumulates across the thread.
    const usage = second.custom.filter((e) => e.type === "usage").at(-1);
    expect(usage?.type === "usage" && usage.thread.modelCalls).toBe(reqs.length);
    expect(usage?.type === "usage" && usage.thread.inputTokens).toBeGreaterThan(
      usage?.type === "usage" ? usage.turn.inputTokens : 0,
    );
  });

  it("surfaces a Vertex AI error response as a run error", async () => {
    standin.setScript(() => ({ error: { status: 400, message: "Request contains an invalid argument." } }));
    const cfg = testConfig({ VERTEX_AI_EMULATOR_HOST: standin.host });
    const model = await createChatModel(cfg.model, {
      credentialsFileExists: false,
      adcFileExists: false,
      onGoogleCloud: false,
    });
    const graph = await createAgentGraph({
      checkpointer: new MemorySaver(),
      model,
      tools: await duckTools(cfg),
      config: cfg,
    });
    const out = await runTurn({ graph } as unknown as Harness, "t-vertex-err", "How many orders?");
    expect(String(out.error)).toMatch(/400.*invalid argument/);
    const state = await graph.getState({ configurable: { thread_id: "t-vertex-err" } });
    expect((state.values.messages as { content: unknown }[]).map((m) => m.content)).toEqual([
      "How many orders?",
    ]);
  });
});

describe("the stand-in's certificate", () => {
  it("is trusted by another process through NODE_EXTRA_CA_CERTS (how the functions emulator reaches it)", async () => {
    const { execFile } = await import("node:child_process");
    const code = `fetch("https://${standin.host}/v1/nothing", { method: "POST" }).then(async (r) => console.log(r.status, await r.text()), (e) => { console.log("ERR", e.cause?.code ?? e.message); })`;
    const run = (env: NodeJS.ProcessEnv) =>
      new Promise<string>((resolve, reject) =>
        execFile(process.execPath, ["-e", code], { env }, (err, stdout) =>
          err ? reject(err) : resolve(stdout.trim()),
        ),
      );
    const { NODE_EXTRA_CA_CERTS: _drop, ...base } = process.env;
    expect(await run({ ...base, NODE_EXTRA_CA_CERTS: standin.certFile })).toMatch(/^404 .*No such Vertex AI/);
    expect(await run(base)).toMatch(/^ERR /);
  });
});

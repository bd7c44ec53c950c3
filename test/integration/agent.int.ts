/**
 * The agent as production wires it, minus Google: the real ChatVertexAI against the loopback
 * Vertex AI stand-in, the real tools on DuckDB, and the FirestoreCheckpointer on the Firestore
 * emulator. Each turn uses a fresh graph and checkpointer, as a different function instance would.
 */
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import type { Firestore } from "@google-cloud/firestore";
import { HumanMessage, type BaseMessage } from "@langchain/core/messages";
import { createAgentGraph, type QuarryEvent } from "../../functions/src/agent";
import { createChatModel } from "../../functions/src/agent/model";
import { readConfig } from "../../functions/src/config";
import { closeWarehouses, createWarehouseTools, getWarehouse } from "../../functions/src/tools";
import { startVertexStandin, type VertexStandin } from "../support/vertex-standin";
import { emulatorFirestore, freshCheckpointer, freshRoot } from "./checkpointer/firestore";
import { personConfig } from "../support/person";

let firestore: Firestore;
let standin: VertexStandin;

beforeAll(async () => {
  firestore = emulatorFirestore();
  standin = await startVertexStandin({ trust: true });
});
afterAll(async () => {
  await standin?.stop();
  await firestore?.terminate();
  await closeWarehouses();
});

async function instance(root: string) {
  const cfg = readConfig({ GOOGLE_CLOUD_PROJECT: "demo-quarry", VERTEX_AI_EMULATOR_HOST: standin.host });
  const model = await createChatModel(cfg.model, {
    credentialsFileExists: false,
    adcFileExists: false,
    onGoogleCloud: false,
  });
  const tools = createWarehouseTools(await getWarehouse(cfg.warehouse));
  return createAgentGraph({ checkpointer: freshCheckpointer(firestore, root), model, tools, config: cfg });
}

async function turn(root: string, thread: string, text: string) {
  const graph = await instance(root);
  const custom: QuarryEvent[] = [];
  let error: unknown;
  try {
    const stream = await graph.stream(
      { messages: [new HumanMessage(text)] },
      {
        configurable: { thread_id: thread, user_id: "u1", run_id: "r1", ...personConfig("u1") },
        streamMode: ["custom", "messages"],
      },
    );
    for await (const [mode, chunk] of stream as AsyncIterable<[string, unknown]>) {
      if (mode === "custom") custom.push(chunk as QuarryEvent);
    }
  } catch (err) {
    error = err;
  }
  const state = await (await instance(root)).getState({ configurable: { thread_id: thread } });
  return { custom, error, state, messages: state.values.messages as BaseMessage[] };
}

describe("agent on ChatVertexAI + FirestoreCheckpointer", () => {
  it("holds a two-turn conversation across instances", async () => {
    const root = freshRoot("agent");
    standin.setScript((await import("../support/scripted-model-script")).smartScript());
    const first = await turn(root, "conv", "How many orders are there?");
    expect(first.error).toBeUndefined();
    expect(first.custom.find((e) => e.type === "result")).toMatchObject({ totalRows: 1 });

    const second = await turn(root, "conv", "And how many customers?");
    expect(second.error).toBeUndefined();
    const humans = second.messages.filter((m) => m.getType() === "human").map((m) => m.content);
    expect(humans).toEqual(["How many orders are there?", "And how many customers?"]);
    expect(String(second.state.values.finalAnswer)).toContain("shop.customers");
    // The second turn's planner saw the first turn's answer, loaded from Firestore.
    const planner = standin.requests.filter((r) => r.request.role === "planner").at(-1)!.request;
    expect(planner.turns[1].text).toContain("shop.orders");
    const usage = second.custom.filter((e) => e.type === "usage").at(-1);
    expect(usage?.type === "usage" && usage.thread.modelCalls).toBe(6);
  });

  it("keeps the user's message in Firestore when the model fails", async () => {
    const root = freshRoot("agent");
    standin.setScript(() => ({ error: { status: 400, message: "Request contains an invalid argument." } }));
    const out = await turn(root, "broken", "Revenue by month?");
    expect(String(out.error)).toMatch(/invalid argument/);
    expect(out.messages.map((m) => [m.getType(), m.content])).toEqual([["human", "Revenue by month?"]]);
  });
});

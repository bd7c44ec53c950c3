/**
 * Clarifying questions on the real graph: the planner's `ask_user` stops the run with LangGraph's
 * interrupt, a `Command({ resume })` carries the answer back, and the turn goes on with it. At most
 * one question per turn; never offered when switched off.
 */
import { Command } from "@langchain/langgraph";
import { afterAll, describe, expect, it } from "vitest";
import { routeAfterPlanner } from "../../../functions/src/agent/routers";
import { answerOf, clarificationOf } from "../../../functions/src/agent/nodes/clarify";
import { closeWarehouses } from "../../../functions/src/tools";
import { AIMessage } from "@langchain/core/messages";
import {
  CLARIFYING_CHOICES,
  CLARIFYING_QUESTION,
  byRole,
  smartScript,
} from "../../support/scripted-model-script";
import { harness, runTurn, type Harness } from "./harness";
import { personConfig } from "../../support/person";

afterAll(() => closeWarehouses());

const cfg = (thread: string) => ({
  configurable: { thread_id: thread, user_id: "user-1", run_id: "run-resume", ...personConfig() },
  streamMode: ["values", "updates", "custom"] as ("values" | "updates" | "custom")[],
});

async function resume(h: Harness, thread: string, answer: unknown) {
  const chunks: [string, unknown][] = [];
  const stream = await h.graph.stream(new Command({ resume: answer }), cfg(thread));
  for await (const c of stream as AsyncIterable<[string, unknown]>) chunks.push(c);
  return chunks;
}

describe("a question the context cannot settle", () => {
  it("asks once, stops with the question as an interrupt, and answers with the user's choice", async () => {
    const h = await harness(smartScript());
    const out = await runTurn(h, "t-ask", "How are we doing?");
    expect(out.error).toBeUndefined();
    // The stream's last values carry the interrupt, as the SDK's useStream expects.
    const interrupt = out.values.at(-1)?.__interrupt__ as { value: unknown }[];
    expect(interrupt?.[0]?.value).toEqual({
      kind: "clarification",
      question: CLARIFYING_QUESTION,
      choices: CLARIFYING_CHOICES,
      toolCallId: expect.any(String),
    });
    expect(out.updates.some((u) => "__interrupt__" in u)).toBe(true);
    let state = await h.graph.getState({ configurable: { thread_id: "t-ask" } });
    expect(state.next).toEqual(["clarify"]);
    expect(state.tasks[0].interrupts[0].value).toMatchObject({ question: CLARIFYING_QUESTION });
    expect(h.model.callsBy("generator")).toHaveLength(0);

    const after = await resume(h, "t-ask", "Number of customers");
    const result = after.find(([m, c]) => m === "custom" && (c as { type: string }).type === "result");
    expect((result?.[1] as { sql: string }).sql).toContain("FROM shop.customers");
    state = await h.graph.getState({ configurable: { thread_id: "t-ask" } });
    expect(state.next).toEqual([]);
    expect(state.values.clarified).toBe(true);
    expect(String(state.values.finalAnswer)).toMatch(/Here is what I found \(1 rows\)/);
    // The answer writer knows what was asked and answered.
    const system = h.model.callsBy("generator")[0].request.system;
    expect(system).toContain(`You asked the user: ${CLARIFYING_QUESTION}`);
    expect(system).toContain("The user answered: Number of customers");
    // planner (ask) + planner (list) + planner (query) + generator: the question itself costs one call.
    expect(h.model.calls.map((c) => c.request.role)).toEqual(["planner", "planner", "planner", "generator"]);
  });

  it("does not ask twice in one turn: a second ask_user is answered by the graph", async () => {
    const ask = {
      toolCalls: [{ name: "ask_user", args: { question: "Orders or customers?", choices: ["Orders"] } }],
    };
    const h = await harness(
      byRole({
        planner: [ask, ask, { text: "Enough." }],
        generator: [{ text: "Going with orders." }],
      }),
    );
    await runTurn(h, "t-twice", "How are we doing?");
    const after = await resume(h, "t-twice", { answer: "Orders" });
    expect(after.some(([m, c]) => m === "updates" && "__interrupt__" in (c as object))).toBe(false);
    const third = h.model.callsBy("planner")[2].request;
    expect(third.turns.at(-1)?.text).toMatch(/already asked the user once in this turn/);
    const state = await h.graph.getState({ configurable: { thread_id: "t-twice" } });
    expect(state.values.finalAnswer).toBe("Going with orders.");
  });

  it("a new question instead of an answer drops the pending one and starts a fresh turn", async () => {
    const h = await harness(smartScript());
    await runTurn(h, "t-new", "How are we doing?");
    const out = await runTurn(h, "t-new", "How many orders are there?");
    expect(out.error).toBeUndefined();
    const state = await h.graph.getState({ configurable: { thread_id: "t-new" } });
    expect(state.next).toEqual([]);
    expect(String(state.values.finalAnswer)).toContain("FROM shop.orders");
  });

  it("is not offered when QUARRY_CLARIFY=false", async () => {
    const h = await harness(smartScript(), { env: { QUARRY_CLARIFY: "false" } });
    const out = await runTurn(h, "t-off", "How are we doing?");
    expect(out.values.some((v) => "__interrupt__" in v)).toBe(false);
    expect(h.model.calls[0].request.tools).not.toContain("ask_user");
    expect(h.model.calls[0].request.system).not.toContain("ask_user");
    const state = await h.graph.getState({ configurable: { thread_id: "t-off" } });
    expect(String(state.values.finalAnswer)).toContain("Here is what I found");
  });
});

describe("clarify's pure parts", () => {
  it("routes ask_user to clarify, other calls to the executor", () => {
    const msg = (names: string[]) =>
      new AIMessage({ content: "", tool_calls: names.map((name, i) => ({ name, args: {}, id: `c${i}` })) });
    expect(routeAfterPlanner({ messages: [msg(["ask_user"])], verdict: null })).toBe("clarify");
    expect(routeAfterPlanner({ messages: [msg(["bq_query", "ask_user"])], verdict: null })).toBe("clarify");
    expect(routeAfterPlanner({ messages: [msg(["bq_query"])], verdict: null })).toBe("executor");
    expect(routeAfterPlanner({ messages: [msg([])], verdict: null })).toBe("generator");
  });

  it("cleans the model's arguments and reads the client's answer", () => {
    const c = clarificationOf({
      name: "ask_user",
      id: "x",
      args: { question: "  Which? ", choices: ["a", "a", " ", 3, "b", "c", "d", "e"] },
    });
    expect(c).toEqual({
      kind: "clarification",
      question: "Which?",
      choices: ["a", "b", "c", "d"],
      toolCallId: "x",
    });
    expect(clarificationOf({ name: "ask_user", args: {} }).question).toMatch(/say a little more/);
    expect(answerOf(" Net revenue ")).toBe("Net revenue");
    expect(answerOf({ answer: "Orders" })).toBe("Orders");
    expect(answerOf(null)).toBe("");
  });
});

/**
 * The run lifecycle's pure steps: graph chunks → protocol events (RunTranscript), and how a run
 * ended from why it stopped (outcomeOf), with the protocol's status mappings.
 */
import { describe, it, expect } from "vitest";
import { AIMessageChunk, HumanMessage } from "@langchain/core/messages";
import {
  runObject,
  runStatusOf,
  threadStatusAfter,
  type StreamMode,
} from "../../functions/src/contract/protocol";
import { outcomeOf } from "../../functions/src/runs/executor";
import { GENERATOR_CALL, RunTranscript, type Chunk, type Step } from "../../functions/src/runs/transcript";

const token = (text: string, name = GENERATOR_CALL): Chunk => [
  "messages",
  [new AIMessageChunk({ id: "ai-1", content: text }), { name, langgraph_node: "generator" }],
];
const phase = (p: string): Chunk => ["custom", { type: "phase", phase: p }];

function steps(t: RunTranscript, chunks: Chunk[]): Step[] {
  return chunks.flatMap((c) => [...t.steps(c)]);
}
const sent = (s: Step[]) => s.filter((x): x is Extract<Step, { send: string }> => "send" in x);

describe("RunTranscript", () => {
  const all: StreamMode[] = ["values", "updates", "messages-tuple", "custom"];

  it("sends values with the output channels only, and nothing for a step that changed none of them", () => {
    const t = new RunTranscript(["values"]);
    const messages = [new HumanMessage({ id: "h", content: "q" })];
    const usage = { modelCalls: 1 };
    const state = (extra: Record<string, unknown>) => ["values", { messages, usage, ...extra }] as Chunk;
    const out = sent(
      steps(t, [
        state({ systemContext: { tables: ["a very long schema"] }, phase: "planning" }),
        state({ systemContext: { tables: ["a very long schema"] }, phase: "verifying" }),
        ["values", { messages: [...messages], usage, phase: "answering" }],
        ["values", { __interrupt__: [{ value: { question: "which?" } }] }],
      ]),
    );
    expect(out.map((e) => Object.keys(e.data as object))).toEqual([
      ["messages", "usage"],
      ["messages", "usage"],
      ["__interrupt__"],
    ]);
    expect((out[0].data as { messages: unknown[] }).messages).toEqual([
      { id: "h", content: "q", type: "human" },
    ]);
  });

  it("sends message chunks as lean dicts with the metadata clients read", () => {
    const t = new RunTranscript(["messages-tuple"]);
    const call = { id: "c1", name: "bq_query", args: { sql: "SELECT 1" }, type: "tool_call" as const };
    const planner = new AIMessageChunk({
      id: "ai-0",
      content: "",
      tool_call_chunks: [
        { id: "c1", name: "bq_query", args: '{"sql":"SELECT 1"}', index: 0, type: "tool_call_chunk" },
      ],
      additional_kwargs: {
        tool_calls: [{ id: "c1", type: "function", function: { name: "bq_query", arguments: "{}" } }],
        signatures: [""],
      },
      response_metadata: {},
    });
    const meta = {
      name: "planner",
      langgraph_node: "planner",
      langgraph_step: 1,
      langgraph_checkpoint_ns: "planner:x",
      checkpoint_ns: "planner:x",
      langgraph_path: ["__pregel_pull", "planner"],
      langgraph_triggers: ["branch:to:planner"],
      ls_integration: "langgraph",
      user_id: "uid-1",
      run_id: "r1",
      thread_id: "t1",
      tags: ["graph:step:1"],
    };
    const [ev] = sent(steps(t, [["messages", [planner, meta]]]));
    const [msg, m] = ev.data as [Record<string, unknown>, Record<string, unknown>];
    expect(msg).toMatchObject({ type: "ai", id: "ai-0", content: "", tool_calls: [call] });
    expect(msg.tool_call_chunks).toHaveLength(1); // a streamed chunk keeps what clients concatenate
    expect(msg).not.toHaveProperty("additional_kwargs"); // no provider-format copy, no empty signatures
    expect(msg).not.toHaveProperty("response_metadata");
    expect(Object.keys(msg).some((k) => k.startsWith("lc_"))).toBe(false);
    expect(m).toEqual({
      name: "planner",
      langgraph_node: "planner",
      langgraph_step: 1,
      langgraph_checkpoint_ns: "planner:x",
      run_id: "r1",
      thread_id: "t1",
      tags: ["graph:step:1"],
    });
  });

  it("sends only the modes asked for, with messages as plain dicts", () => {
    const t = new RunTranscript(["messages-tuple"]);
    const out = steps(t, [
      phase("planning"),
      ["values", { messages: [new HumanMessage("q")] }],
      ["updates", { planner: {} }],
      token("Hi"),
    ]);
    expect(sent(out).map((s) => s.send)).toEqual(["messages"]);
    const [msg] = sent(out)[0].data as [Record<string, unknown>];
    expect(msg).toMatchObject({ type: "ai", content: "Hi", id: "ai-1" });
    expect(msg).not.toHaveProperty("lc_serializable");
  });

  it("keeps the answer so far from the generator's tokens, not from other models' tokens", () => {
    const t = new RunTranscript(all);
    steps(t, [token("plan", "quarry_planner")]);
    expect(t.answerSoFar).toBeUndefined();
    steps(t, [token("Rev"), token("enue")]);
    expect(t.answerSoFar).toEqual({ id: "ai-1", text: "Revenue" });
    // Once the answer is in the state, a stop has nothing partial to keep.
    steps(t, [["updates", { generator: { finalAnswer: "Revenue" } }]]);
    expect(t.answerSoFar).toBeUndefined();
  });

  it("marks a phase boundary after the phase event, and a question to the user as asking", () => {
    const t = new RunTranscript(all);
    const out = steps(t, [phase("querying")]);
    expect(out.map((s) => Object.keys(s)[0])).toEqual(["send", "boundary"]);
    // Neither `ingress` (nothing done yet that the question's checkpoint does not hold) nor `done`
    // (the run's end writes its events and its last checkpoint a moment later) is a boundary.
    expect(steps(t, [phase("ingress")]).map((s) => Object.keys(s)[0])).toEqual(["send"]);
    expect(steps(t, [phase("done")]).map((s) => Object.keys(s)[0])).toEqual(["send"]);
    const asked = steps(t, [["updates", { __interrupt__: [{ id: "i", value: { question: "Which?" } }] }]]);
    expect(t.asking).toBe(true);
    expect(sent(asked).map((s) => s.send)).toEqual(["updates"]);
  });

  it("keeps the turn's usage from the last usage event", () => {
    const t = new RunTranscript(["values"]);
    const usage = {
      inputTokens: 10,
      outputTokens: 5,
      totalTokens: 15,
      bytesBilled: 0,
      modelCalls: 2,
      toolCalls: 1,
    };
    const out = steps(t, [["custom", { type: "usage", turn: usage, thread: usage }]]);
    expect(sent(out)).toEqual([]); // custom not asked for
    expect(t.usage).toEqual({ ...usage, runs: 1 });
  });
});

describe("outcomeOf and the protocol's statuses", () => {
  it("a stop by the person is cancelled whatever else happened; else error, then asking", () => {
    expect(outcomeOf("cancelled", true, true)).toBe("cancelled");
    expect(outcomeOf("disconnected", false, false)).toBe("cancelled");
    expect(outcomeOf("lease-lost", true, false)).toBe("error");
    expect(outcomeOf(undefined, false, true)).toBe("interrupted");
    expect(outcomeOf(undefined, false, false)).toBe("success");
  });

  it("maps outcomes to run and thread statuses as the Agent Server reports them", () => {
    expect(runStatusOf("cancelled")).toBe("interrupted");
    expect(runStatusOf("success")).toBe("success");
    expect(threadStatusAfter("cancelled")).toBe("idle");
    expect(threadStatusAfter("interrupted")).toBe("interrupted");
    expect(threadStatusAfter("error")).toBe("error");
    const run = runObject("t", "r", "pending", { strategy: "rollback", at: new Date(0) });
    expect(run).toMatchObject({ multitask_strategy: "rollback", created_at: "1970-01-01T00:00:00.000Z" });
    expect(runObject("t", "r", "success").multitask_strategy).toBeNull();
  });
});

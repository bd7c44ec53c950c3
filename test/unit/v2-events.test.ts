/**
 * The v2 view of a run's event log (functions/src/http/v2/events.ts): the same log gives the same
 * events and seq on every instance, seq increases along a thread's runs, streamed tokens become one
 * message (start, deltas, finish) closed before the state that holds it, a message without text
 * waits for that state, a values event carries a message whole once in the run and then refers to
 * it, the run's last values is its whole state, Quarry's events (its stages too) go on named custom
 * channels, lifecycle is the root's alone, and an interrupt is asked once.
 */
import { describe, it, expect } from "vitest";
import { inferChannel } from "@langchain/langgraph/stream";
import { ProtocolView, runNoOfSeq, runSeqBase, type V2Event } from "../../functions/src/http/v2/events";
import type { LoggedEvent } from "../../functions/src/runs/event-log";

// As the v1 stream sends a streamed piece of the answer (toPlain: type "ai", like a whole message).
const chunk = (id: string, content: string) => [
  { type: "ai", id, content },
  { langgraph_node: "generator", name: "quarry_generator" },
];

/** A one-question run's log, as the executor writes it. */
const LOG: LoggedEvent[] = [
  { id: 1, event: "metadata", data: { run_id: "r1", attempt: 1 } },
  { id: 2, event: "custom", data: { type: "phase", phase: "planning" } },
  // The planner's finished message: tool calls, no text.
  {
    id: 21,
    event: "messages",
    data: [
      { type: "ai", id: "p1", content: "", tool_calls: [{ id: "t1", name: "bq_query", args: {} }] },
      { langgraph_node: "planner" },
    ],
  },
  {
    id: 3,
    event: "custom",
    data: { type: "sql", toolCallId: "t1", sql: "SELECT 1", estimatedBytes: 10, attempt: 1 },
  },
  { id: 4, event: "custom", data: { type: "phase", phase: "answering" } },
  { id: 5, event: "messages", data: chunk("m1", "Here is ") },
  { id: 6, event: "messages", data: chunk("m1", "what I found.") },
  // The model's last piece is empty.
  { id: 7, event: "messages", data: chunk("m1", "") },
  {
    id: 8,
    event: "values",
    data: {
      messages: [
        { type: "human", id: "q1", content: "How many?", additional_kwargs: { x: 1 } },
        { type: "ai", id: "m1", content: "Here is what I found.", usage_metadata: { input_tokens: 3 } },
      ],
    },
  },
];

/** The view's events for `log`, read as `followRunLog` delivers it: each event its own stored document. */
function convert(runNo: number, log = LOG): V2Event[] {
  const view = new ProtocolView(runNo);
  return [
    ...log.flatMap((e) => [...view.convert(e), ...view.flush()]),
    ...view.close(log.at(-1)!.id, "success"),
  ];
}

const strip = (evs: V2Event[]) =>
  evs.map(({ params: { timestamp: _t, ...p }, ...e }) => ({ ...e, params: p }));

describe("the v2 view of a run's log", () => {
  it("is the same on every instance, with ids that are the seq, increasing within the run", () => {
    const a = convert(3);
    expect(strip(convert(3))).toEqual(strip(a));
    const seqs = a.map((e) => e.seq);
    expect([...new Set(seqs)].sort((x, y) => x - y)).toEqual(seqs);
    expect(a.every((e) => e.event_id === String(e.seq) && runNoOfSeq(e.seq) === 3)).toBe(true);
    expect(Math.min(...seqs)).toBeGreaterThan(runSeqBase(3));
  });

  it("numbers a later run's events above every event of the earlier run", () => {
    const first = convert(1);
    const second = convert(2);
    expect(Math.min(...second.map((e) => e.seq))).toBeGreaterThan(Math.max(...first.map((e) => e.seq)));
  });

  it("opens with running and closes with completed, at the root alone: the stages are custom:phase events", () => {
    const evs = convert(1);
    const life = evs
      .filter((e) => e.method === "lifecycle")
      .map((e) => [e.params.namespace.join("/"), (e.params.data as { event: string }).event]);
    expect(life).toEqual([
      ["", "running"],
      ["", "completed"],
    ]);
    const phases = evs
      .filter((e) => inferChannel(e as never) === "custom:phase")
      .map((e) => (e.params.data as { payload: { phase: string } }).payload.phase);
    expect(phases).toEqual(["planning", "answering"]);
  });

  it("streams tokens as one message, finished before the values that hold it", () => {
    const evs = convert(1);
    const m = evs.filter((e) => e.method === "messages").map((e) => e.params.data as Record<string, unknown>);
    expect(m.map((d) => d.event)).toEqual([
      "message-start",
      "content-block-start",
      "content-block-delta",
      "content-block-delta",
      "content-block-finish",
      "message-finish",
    ]);
    // As LangGraph's own emitter: an AI message's start names no role (the client's default).
    expect(m[0]).toEqual({ event: "message-start", id: "m1" });
    expect(m[4]).toMatchObject({ content: { type: "text", text: "Here is what I found." } });
    const finish = evs.findIndex((e) => (e.params.data as { event?: string }).event === "message-finish");
    const values = evs.findIndex((e) => e.method === "values");
    expect(finish).toBeLessThan(values);
    expect(evs.filter((e) => e.method === "messages").every((e) => e.params.node === "generator")).toBe(true);
  });

  it("sends the tokens one stored document of the log holds as one delta, in the place of the first", () => {
    const view = new ProtocolView(1);
    // Documents: [1 … 4], [5, 6], [7, 8] — the answer's two pieces written together, then its empty end.
    const docs = [LOG.slice(0, 5), LOG.slice(5, 7), LOG.slice(7)];
    const evs = [...docs.flatMap((doc) => [...doc.flatMap((e) => view.convert(e)), ...view.flush()])];
    const deltas = evs.filter((e) => (e.params.data as { event?: string }).event === "content-block-delta");
    expect(deltas.map((e) => e.params.data)).toEqual([
      {
        event: "content-block-delta",
        index: 0,
        delta: { type: "text-delta", text: "Here is what I found." },
      },
    ]);
    const seqs = evs.map((e) => e.seq);
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
    expect(deltas[0].seq).toBe(runSeqBase(1) + 5 * 16 + 2); // after the start events of log event 5
    // The same log read document by document from another instance: the same events.
    const again = new ProtocolView(1);
    const twice = docs.flatMap((doc) => [...doc.flatMap((e) => again.convert(e)), ...again.flush()]);
    expect(strip(twice)).toEqual(strip(evs));
  });

  it("sends a message without text (the planner's tool calls) in the values alone, not as an empty message", () => {
    const starts = convert(1).filter(
      (e) => e.method === "messages" && (e.params.data as { event: string }).event === "message-start",
    );
    expect(starts.map((e) => (e.params.data as { id: string }).id)).toEqual(["m1"]);
  });

  it("sends values lean: a message's type, content and id, not provider fields", () => {
    const values = convert(1).find((e) => e.method === "values")!.params.data as { messages: object[] };
    expect(values.messages).toEqual([
      { type: "human", id: "q1", content: "How many?" },
      { type: "ai", id: "m1", content: "Here is what I found." },
    ]);
  });

  it("carries each message whole once per run, then refers to it; the run's last values is its whole state", () => {
    const q = { type: "human", id: "q1", content: "How many?" };
    const call = {
      type: "ai",
      id: "p1",
      content: "",
      tool_calls: [{ id: "t1", name: "bq_query", args: {} }],
    };
    const result = { type: "tool", id: "r1", content: "1 row", tool_call_id: "t1", artifact: { rows: [1] } };
    const answer = { type: "ai", id: "m1", content: "One." };
    const states = [[q], [q, call], [q, call, result], [q, call, result, answer]];
    const log: LoggedEvent[] = states.map((messages, i) => ({
      id: i + 1,
      event: "values",
      data: { messages, usage: { modelCalls: i } },
    }));
    const values = convert(1, log)
      .filter((e) => e.method === "values")
      .map((e) => e.params.data as { messages: Record<string, unknown>[]; usage: unknown });
    const ref = (m: Record<string, unknown>) => ({
      type: m.type,
      content: "",
      id: m.id,
      ...(m.type === "tool" ? { tool_call_id: m.tool_call_id } : {}),
    });
    expect(values).toEqual([
      { messages: [q], usage: { modelCalls: 0 } },
      { messages: [ref(q), call], usage: { modelCalls: 1 } },
      { messages: [ref(q), ref(call), result], usage: { modelCalls: 2 } },
      // The answer ends the turn: the whole state, no second values at the run's end.
      { messages: [q, call, result, answer], usage: { modelCalls: 3 } },
    ]);

    // A run that ends before its turn does (an error, Stop, an interrupt) ends with its whole state.
    const cut = convert(1, log.slice(0, 3)).filter((e) => e.method === "values");
    expect(cut.map((e) => e.params.data)).toEqual([
      { messages: [q], usage: { modelCalls: 0 } },
      { messages: [ref(q), call], usage: { modelCalls: 1 } },
      { messages: [ref(q), ref(call), result], usage: { modelCalls: 2 } },
      { messages: [q, call, result], usage: { modelCalls: 2 } },
    ]);
    const all = convert(1, log.slice(0, 3));
    expect(all.at(-2)!.method).toBe("values");
    expect(all.at(-1)).toMatchObject({ method: "lifecycle", params: { data: { event: "completed" } } });
  });

  it("puts Quarry's events on named custom channels", () => {
    const channels = convert(1)
      .filter((e) => e.method === "custom")
      .map((e) => inferChannel(e as never));
    expect(channels).toEqual(["custom:phase", "custom:sql", "custom:phase"]);
  });

  it("asks an interrupt once on the input channel, and ends interrupted", () => {
    const asked = { __interrupt__: [{ id: "i1", value: { question: "Which year?" } }] };
    const log: LoggedEvent[] = [
      { id: 1, event: "metadata", data: {} },
      { id: 2, event: "updates", data: asked },
      { id: 3, event: "values", data: { messages: [], ...asked } },
    ];
    const view = new ProtocolView(1);
    const evs = [...log.flatMap((e) => view.convert(e)), ...view.close(3, "interrupted")];
    const input = evs.filter((e) => e.method === "input.requested");
    expect(input.map((e) => e.params.data)).toEqual([
      { interrupt_id: "i1", payload: { question: "Which year?" } },
    ]);
    expect(evs.find((e) => e.method === "values")!.params.data).toEqual({ messages: [] });
    expect(evs.at(-1)).toMatchObject({
      method: "lifecycle",
      params: { namespace: [], data: { event: "interrupted" } },
    });
  });

  it("an error ends the run failed with its message (and the error itself on custom:error); a lost run says so", () => {
    const view = new ProtocolView(1);
    const evs = [
      ...view.convert({ id: 1, event: "metadata", data: {} }),
      ...view.convert({
        id: 2,
        event: "error",
        data: { error: "quota:bytes", message: "Over today's bytes." },
      }),
      ...view.close(2, "error"),
    ];
    const ends = evs.filter((e) => e.method === "lifecycle" && e.params.namespace.length === 0);
    expect(ends.map((e) => e.params.data)).toEqual([
      { event: "running", graph_name: "agent" },
      { event: "failed", graph_name: "agent", error: "Over today's bytes." },
    ]);
    const lost = new ProtocolView(1);
    const gone = [...lost.convert({ id: 1, event: "metadata", data: {} }), ...lost.close(1, "lost")];
    expect(gone.at(-1)!.params.data).toMatchObject({
      event: "failed",
      error: expect.stringMatching(/went away/),
    });
  });
});

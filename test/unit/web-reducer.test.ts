import { describe, expect, it } from "vitest";
import type { QuarryEvent } from "../../functions/src/agent/events";
import type { ToolArtifact } from "../../functions/src/tools/types";
import { chatReducer, EMPTY_CHAT, type ChatAction, type ChatState } from "../../web/src/chat/reducer";
import { turnsFromMessages, type MessageDict } from "../../web/src/chat/model";

const run = (actions: ChatAction[], start: ChatState = EMPTY_CHAT) => actions.reduce(chatReducer, start);
const custom = (data: QuarryEvent): ChatAction => ({ type: "stream", event: "custom", data });
const chunk = (id: string, content: string, meta: object = { langgraph_node: "generator" }): ChatAction => ({
  type: "stream",
  event: "messages",
  data: [{ type: "AIMessageChunk", id, content }, meta],
});

const SQL = "SELECT region, SUM(amount) AS total FROM shop.orders GROUP BY region";
const result = {
  sql: SQL,
  columns: [
    { name: "region", type: "VARCHAR" },
    { name: "total", type: "DOUBLE" },
  ],
  rows: [
    { region: "EU", total: 10 },
    { region: "US", total: 20 },
  ],
  totalRows: 2,
  truncated: false,
  bytesProcessed: 2048,
  bytesBilled: 10485760,
  cacheHit: false,
  durationMs: 12,
};

/** The messages a one-query turn checkpoints, as the API's plain dicts. */
const turnMessages = (question: string, answer: string): MessageDict[] => [
  { type: "human", id: `h-${question}`, content: question },
  { type: "ai", id: "a1", content: "", tool_calls: [{ id: "call-1", name: "bq_query", args: { sql: SQL } }] },
  {
    type: "tool",
    id: "t1",
    tool_call_id: "call-1",
    name: "bq_query",
    content: "region,total\nEU,10\nUS,20",
    artifact: {
      kind: "query",
      result: { ...result, preview: "", previewRows: 2, estimatedBytes: 2048 },
    } satisfies ToolArtifact,
  },
  { type: "ai", id: "a2", content: [{ type: "text", text: answer }] },
];

describe("chatReducer: a live run", () => {
  const live = run([
    { type: "submitted", key: "k1", question: "Sales by region?" },
    { type: "stream", event: "metadata", data: { run_id: "run-1", attempt: 1 } },
    custom({ type: "phase", phase: "planning" }),
    custom({ type: "sql", toolCallId: "call-1", sql: SQL, estimatedBytes: 2048, attempt: 1 }),
    custom({ type: "phase", phase: "querying" }),
  ]);

  it("shows the question at once, then the run id, phase and the SQL with its estimate", () => {
    const t = live.turns[0];
    expect(t).toMatchObject({
      question: "Sales by region?",
      status: "streaming",
      runId: "run-1",
      phase: "querying",
    });
    expect(t.queries).toEqual([
      { id: "call-1", tool: "bq_query", sql: SQL, estimatedBytes: 2048, attempt: 1, status: "running" },
    ]);
  });

  it("attaches the result, streams answer tokens, and finishes", () => {
    const s = run(
      [
        custom({ type: "result", ref: "call-1", ...result }),
        custom({ type: "phase", phase: "answering" }),
        chunk("a2", "EU sold "),
        chunk("a2", "10, US 20."),
        custom({
          type: "usage",
          turn: {
            inputTokens: 10,
            outputTokens: 5,
            totalTokens: 15,
            bytesBilled: 10485760,
            modelCalls: 3,
            toolCalls: 1,
          },
          thread: {
            inputTokens: 10,
            outputTokens: 5,
            totalTokens: 15,
            bytesBilled: 10485760,
            modelCalls: 3,
            toolCalls: 1,
          },
        }),
        { type: "finished" },
      ],
      live,
    );
    const t = s.turns[0];
    expect(t.answer).toBe("EU sold 10, US 20.");
    expect(t.status).toBe("done");
    expect(t.queries[0]).toMatchObject({
      status: "done",
      estimatedBytes: 2048,
      result: { bytesBilled: 10485760, totalRows: 2 },
    });
    expect(t.queries[0].result?.rows).toHaveLength(2);
    expect(t.usage?.modelCalls).toBe(3);
  });

  it("appends deltas serialized as type ai, and a repeated whole message does not double the text", () => {
    const ai = (content: string): ChatAction => ({
      type: "stream",
      event: "messages",
      data: [{ type: "ai", id: "m1", content }, { langgraph_node: "generator" }],
    });
    const s = run([ai("Revenue "), ai("grew "), ai("4%."), ai("Revenue grew 4%.")], live);
    expect(s.turns[0].answer).toBe("Revenue grew 4%.");
  });

  it("keeps the planner's tool-call messages and tool-call chunks out of the answer, before and after it", () => {
    // Internal calls' tokens never reach the stream (the server tags them langsmith:nostream), but
    // nodes' finished messages do: the planner's, with text beside its tool calls.
    const planner: ChatAction = {
      type: "stream",
      event: "messages",
      data: [
        {
          type: "ai",
          id: "p1",
          content: "Let me look at the orders table.",
          tool_calls: [{ id: "call-2", name: "bq_query", args: { sql: SQL } }],
        },
        { langgraph_node: "planner" },
      ],
    };
    const toolCallChunk: ChatAction = {
      type: "stream",
      event: "messages",
      data: [
        {
          type: "AIMessageChunk",
          id: "p2",
          content: "calling bq_query",
          tool_call_chunks: [{ name: "bq_query" }],
        },
        { langgraph_node: "planner" },
      ],
    };
    // The answer after each event: a filtered chunk arriving after the answer's text must not replace it.
    const steps: [ChatAction, string][] = [
      [planner, ""],
      [toolCallChunk, ""],
      [chunk("a2", "Answer."), "Answer."],
      [planner, "Answer."],
      [toolCallChunk, "Answer."],
    ];
    let s = live;
    for (const [action, answer] of steps) {
      s = chatReducer(s, action);
      expect(s.turns[0].answer).toBe(answer);
    }
  });

  it("records tool errors and retries with their reasons", () => {
    const s = run(
      [
        custom({
          type: "tool_error",
          toolCallId: "call-1",
          tool: "bq_query",
          category: "invalid_query",
          message: "Unrecognized name: regon; Did you mean region?",
          sql: SQL,
        }),
        custom({ type: "retry", attempt: 1, maxRetries: 2, reason: "Fix the column name: regon → region" }),
        custom({ type: "sql", toolCallId: "call-2", sql: SQL, estimatedBytes: 2048, attempt: 2 }),
      ],
      live,
    );
    const t = s.turns[0];
    expect(t.queries.map((q) => [q.id, q.status])).toEqual([
      ["call-1", "failed"],
      ["call-2", "running"],
    ]);
    expect(t.queries[0].error?.message).toMatch(/Did you mean region/);
    expect(t.retries).toEqual([{ attempt: 1, maxRetries: 2, reason: "Fix the column name: regon → region" }]);
  });

  it("a values event fills in what custom events missed, keeping the live estimate", () => {
    const s = run(
      [{ type: "stream", event: "values", data: { messages: turnMessages("Sales by region?", "Done.") } }],
      live,
    );
    const t = s.turns[0];
    expect(t.answer).toBe("Done.");
    expect(t.queries).toHaveLength(1);
    expect(t.queries[0]).toMatchObject({ status: "done", estimatedBytes: 2048, result: { totalRows: 2 } });
  });

  it("an in-band error event becomes words, and the run ending does not hide it", () => {
    const s = run(
      [
        { type: "stream", event: "error", data: { error: "internal", message: "Internal error." } },
        { type: "finished" },
      ],
      live,
    );
    expect(s.turns[0].status).toBe("error");
    expect(s.turns[0].error).toMatch(/Try again/);
  });

  it("an answer cut mid-stream keeps the text that arrived, once, and says it is incomplete", () => {
    const message =
      "The connection to Vertex AI was cut in the middle of the answer (ECONNRESET), so the answer above is " +
      "incomplete. Quarry does not retry an answer that has started (you would see its text twice).";
    const s = run(
      [
        chunk("m1", "Revenue grew "),
        chunk("m1", "in every "),
        { type: "stream", event: "error", data: { error: "model:interrupted", message } },
        { type: "finished" },
      ],
      live,
    );
    expect(s.turns[0]).toMatchObject({ status: "error", answer: "Revenue grew in every ", error: message });
  });

  it("stop marks the turn stopped and its unfinished query as not finished", () => {
    const s = run([{ type: "stopped" }], live);
    expect(s.turns[0].status).toBe("stopped");
    expect(s.turns[0].queries[0]).toMatchObject({ status: "failed", error: { category: "cancelled" } });
  });

  it("a refused POST (busy thread) becomes advice", () => {
    const err = Object.assign(new Error('HTTP 409: {"error":"conflict:run","message":"busy"}'), {
      status: 409,
    });
    const s = run([{ type: "failed", error: err }], live);
    expect(s.turns[0]).toMatchObject({ status: "error" });
    expect(s.turns[0].error).toMatch(/still answering/);
  });
});

describe("after a reload: turns from checkpointed messages", () => {
  it("rebuilds every turn with its SQL, rows and answer", () => {
    const s = chatReducer(EMPTY_CHAT, {
      type: "loaded",
      values: { messages: [...turnMessages("Q1", "A1"), ...turnMessages("Q2", "A2")], summary: "" },
    });
    expect(s.turns.map((t) => [t.question, t.answer, t.status])).toEqual([
      ["Q1", "A1", "done"],
      ["Q2", "A2", "done"],
    ]);
    expect(s.turns[1].queries[0]).toMatchObject({ sql: SQL, status: "done", estimatedBytes: 2048 });
    expect(s.turns[1].queries[0].result?.columns.map((c) => c.name)).toEqual(["region", "total"]);
    expect(s.summarized).toBe(false);
  });

  it("a failed query keeps its error; an unfinished run shows as stopped", () => {
    const msgs: MessageDict[] = [
      { type: "human", id: "h", content: "Q" },
      {
        type: "ai",
        id: "a",
        content: "",
        tool_calls: [{ id: "c1", name: "bq_query", args: { sql: "SELECT x" } }],
      },
      {
        type: "tool",
        tool_call_id: "c1",
        content: "error",
        artifact: { kind: "error", category: "not_found", message: "Table shop.x not found", details: {} },
      },
      {
        type: "ai",
        id: "b",
        content: "",
        tool_calls: [{ id: "c2", name: "bq_query", args: { sql: "SELECT y" } }],
      },
    ];
    const [t] = turnsFromMessages(msgs);
    expect(t.status).toBe("stopped");
    expect(t.queries.map((q) => [q.sql, q.status, q.error?.category])).toEqual([
      ["SELECT x", "failed", "not_found"],
      ["SELECT y", "failed", "cancelled"],
    ]);
  });

  it("hides successful schema look-ups and ignores messages before the first question", () => {
    const msgs: MessageDict[] = [
      { type: "system", content: "summary" },
      { type: "human", id: "h", content: [{ type: "text", text: "Which tables?" }] },
      { type: "ai", id: "a", content: "", tool_calls: [{ id: "c1", name: "list_tables", args: {} }] },
      { type: "tool", tool_call_id: "c1", content: "shop.orders", artifact: { kind: "tables", tables: [] } },
      { type: "ai", id: "b", content: "There is shop.orders." },
    ];
    const turns = turnsFromMessages(msgs);
    expect(turns).toHaveLength(1);
    expect(turns[0]).toMatchObject({
      question: "Which tables?",
      answer: "There is shop.orders.",
      queries: [],
    });
  });

  it("notes when older turns were summarized", () => {
    expect(
      chatReducer(EMPTY_CHAT, { type: "loaded", values: { messages: [], summary: "earlier..." } }).summarized,
    ).toBe(true);
  });
});

describe("a clarifying question", () => {
  const asked = { question: "Which measure do you mean?", choices: ["Orders", "Customers"] };
  const askMessages: MessageDict[] = [
    { type: "human", id: "h-1", content: "How are we doing?" },
    { type: "ai", id: "a1", content: "", tool_calls: [{ id: "ask-1", name: "ask_user", args: asked }] },
  ];
  const interrupt: ChatAction = {
    type: "stream",
    event: "values",
    data: { __interrupt__: [{ id: "i1", value: { kind: "clarification", ...asked, toolCallId: "ask-1" } }] },
  };

  it("a run that stops at a question leaves the turn asking, with its choices, not done", () => {
    const s = run([
      { type: "submitted", key: "k", question: "How are we doing?" },
      { type: "stream", event: "values", data: { messages: askMessages } },
      interrupt,
      { type: "finished" },
    ]);
    const t = s.turns[0];
    expect(t.status).toBe("asking");
    expect(t.clarification).toEqual(asked);
    expect(t.queries).toEqual([]); // the question is not a query
  });

  it("answering continues the same turn and keeps the answer given", () => {
    const s = run([
      { type: "submitted", key: "k", question: "How are we doing?" },
      interrupt,
      { type: "finished" },
      { type: "answered", answer: "Customers" },
      {
        type: "stream",
        event: "values",
        data: {
          messages: [
            ...askMessages,
            {
              type: "tool",
              id: "t1",
              tool_call_id: "ask-1",
              name: "ask_user",
              content: "The user answered: Customers",
            },
          ],
        },
      },
      chunk("ans", "There are 200 customers."),
      { type: "finished" },
    ]);
    expect(s.turns).toHaveLength(1);
    expect(s.turns[0]).toMatchObject({
      status: "done",
      answer: "There are 200 customers.",
      clarification: { ...asked, answer: "Customers" },
    });
  });

  it("after a reload: a waiting question is asking; an answered one shows the answer; an abandoned one is not", () => {
    expect(turnsFromMessages(askMessages)[0]).toMatchObject({ status: "asking", clarification: asked });
    const answered = turnsFromMessages([
      ...askMessages,
      {
        type: "tool",
        id: "t1",
        tool_call_id: "ask-1",
        name: "ask_user",
        content: "The user answered: Orders",
      },
      { type: "ai", id: "a2", content: "There were 1,000 orders." },
    ]);
    expect(answered[0]).toMatchObject({ status: "done", clarification: { ...asked, answer: "Orders" } });
    const abandoned = turnsFromMessages([...askMessages, { type: "human", id: "h-2", content: "Orders?" }]);
    expect(abandoned[0].status).toBe("stopped");
    expect(abandoned[1].status).toBe("stopped");
  });
});

describe("rejoining an answer", () => {
  it("a reload mid-answer replays the run into the same turn, once", () => {
    const loaded = run([
      { type: "loaded", values: { messages: [{ type: "human", id: "h-1", content: "Revenue?" }] } },
    ]);
    expect(loaded.turns[0].status).toBe("stopped");
    const s = run(
      [
        { type: "resumed" },
        { type: "stream", event: "metadata", data: { run_id: "r1" } },
        chunk("ans", "Revenue is "),
        chunk("ans", "up."),
        { type: "finished" },
      ],
      loaded,
    );
    expect(s.turns).toHaveLength(1);
    expect(s.turns[0]).toMatchObject({ status: "done", answer: "Revenue is up.", runId: "r1" });
  });

  it("a dropped connection is shown until the next event arrives", () => {
    const s = run([
      { type: "submitted", key: "k", question: "Revenue?" },
      chunk("ans", "Revenue "),
      { type: "reconnecting" },
    ]);
    expect(s.turns[0].reconnecting).toBe(true);
    const after = run([chunk("ans", "is up.")], s);
    expect(after.turns[0]).toMatchObject({ reconnecting: false, answer: "Revenue is up." });
  });
});

describe("a stopped answer after a reload", () => {
  it("shows what was streamed before Stop, as stopped", () => {
    const turns = turnsFromMessages([
      { type: "human", id: "h-1", content: "Tell me everything" },
      { type: "ai", id: "a-1", content: "Sales grew in", response_metadata: { quarry_stopped: true } },
    ]);
    expect(turns[0]).toMatchObject({ status: "stopped", answer: "Sales grew in" });
  });
});

describe("asking a turn again", () => {
  it("replaces that turn and drops the ones after it", () => {
    const s = run([
      { type: "loaded", values: { messages: [...turnMessages("Q1", "A1"), ...turnMessages("Q2", "A2")] } },
      { type: "forked", key: "h-Q1", question: "Q1, edited" },
    ]);
    expect(s.turns.map((t) => [t.key, t.question, t.status])).toEqual([["h-Q1", "Q1, edited", "streaming"]]);
  });
});

/**
 * LangChain's current React hook, `useStream` of @langchain/react 1.1.0 (Agent Streaming Protocol
 * v2: `POST /threads/:id/commands` and `POST /threads/:id/stream/events`), rendered headless (React
 * DOM on a jsdom document) through the functions emulator, the way a page would use it: a question
 * and its streamed answer with Quarry's events on `custom:*` channels (`useExtension`,
 * `useChannel`), a follow-up, a clarifying question answered with `respond`, regenerate and edit as
 * forks from checkpoints the thread's history names, Stop, a dropped event stream the hook rejoins
 * by itself, a reload that rejoins a running answer, and a thread's history after a reload.
 */
import { describe, it, expect, beforeAll, afterEach } from "vitest";
import { JSDOM } from "jsdom";
import { signUp, type TestUser } from "../../support/auth-emulator";
import { HOLD_URL_ENV, holdClient, type Holds } from "../../support/hold-control";
import { CLARIFYING_CHOICES, CLARIFYING_QUESTION } from "../../support/scripted-model-script";
import { stackEnv } from "../../support/stack-env";

// A document for React DOM (the hook runs in a browser); Node's own fetch and AbortController stay.
const dom = new JSDOM("<!doctype html><html><body></body></html>", { url: "http://127.0.0.1/" });
Object.assign(globalThis, {
  window: dom.window,
  document: dom.window.document,
  sessionStorage: dom.window.sessionStorage,
});
// Testing Library wraps its own renders in act(); the hook's updates from the network are React's
// ordinary scheduled updates, waited on with waitFor.
const { renderHook, waitFor, cleanup } = await import("@testing-library/react");
const { useMemo } = await import("react");
const { useStream, useExtension, useChannel } = await import("@langchain/react");

/** What a test reads of a message (the hook's are @langchain/core class instances). */
type Msg = {
  id?: string;
  type?: string;
  text?: string;
  content?: unknown;
  getType?: () => string;
  tool_calls?: { id?: string; name: string }[];
  tool_call_id?: string;
  artifact?: unknown;
};
type Interrupt = { id?: string; value?: unknown };
/** What a test reads of the hook. */
interface Stream {
  messages: Msg[];
  values: Record<string, unknown>;
  isLoading: boolean;
  isThreadLoading: boolean;
  error: unknown;
  threadId: string | null;
  interrupt?: Interrupt;
  interrupts: Interrupt[];
  submit(input: unknown, options?: Record<string, unknown>): Promise<void>;
  respond(response: unknown, options?: { interruptId?: string }): Promise<void>;
  stop(): Promise<void>;
  client: {
    threads: {
      get(id: string): Promise<{ status: string }>;
      getState(id: string): Promise<{ values: { messages: Msg[] }; next: string[] }>;
      getHistory(id: string, o?: object): Promise<HistoryState[]>;
    };
    runs: { list(id: string): Promise<{ run_id: string; status: string }[]> };
  };
}
type HistoryState = {
  values: { messages?: Msg[] };
  next: string[];
  checkpoint: { checkpoint_id: string };
  parent_checkpoint: { checkpoint_id: string } | null;
};
type ProtocolEvent = { seq: number; params: { data: { name: string; payload: Record<string, unknown> } } };
type ResultEvent = { ref: string; sql: string; type: "result" };
type SqlEvent = { toolCallId: string; sql: string; type: "sql" };

const typeOf = (m: Msg) => m.getType?.() ?? m.type;
/** A message's text as a page renders it (`msg.text`: streamed copies hold content blocks). */
const textOf = (m: Msg | undefined) =>
  typeof m?.text === "string" ? m.text : typeof m?.content === "string" ? m.content : "";
const humans = (s: { messages: Msg[] }) => s.messages.filter((m) => typeOf(m) === "human");
/** The written answers: AI messages with text and no tool call. */
const answers = (s: { messages: Msg[] }) =>
  s.messages.filter((m) => typeOf(m) === "ai" && !m.tool_calls?.length && textOf(m).trim() !== "");
const ids = (ms: Msg[]) => ms.map((m) => m.id);
/** What a page shows of a message: its kind, text, tool calls, and a tool message's call and result. */
const essence = (m: Msg) => ({
  type: typeOf(m),
  id: m.id,
  text: textOf(m),
  calls: (m.tool_calls ?? []).map((c) => [c.id, c.name]),
  call: m.tool_call_id,
  artifact: m.artifact,
});

let api: string;
let alice: TestUser;
let holds: Holds;

beforeAll(async () => {
  const stack = stackEnv();
  api = stack.urls.api!;
  alice = await signUp(stack.urls.auth!);
  holds = holdClient(stack.env[HOLD_URL_ENV]);
});

afterEach(() => {
  cleanup();
});

/** What the hook sent: its commands and the event streams it opened. */
interface Wire {
  commands: { method: string; params: Record<string, unknown> }[];
  streams: { channels: string[]; since?: number }[];
}

/**
 * The fetch the hook's protocol transport uses (its `fetch` option): the global fetch, recording
 * commands and event-stream requests; `cut` may replace an event stream's response body.
 */
function wireFetch(
  wire: Wire,
  cut?: (body: { channels: string[] }, res: Response) => Response,
): typeof fetch {
  return async (input, init) => {
    const url = String(input instanceof Request ? input.url : input);
    const body =
      typeof init?.body === "string" ? (JSON.parse(init.body) as Record<string, unknown>) : undefined;
    const res = await fetch(input, init);
    if (url.endsWith("/commands") && body) {
      wire.commands.push({
        method: String(body.method),
        params: (body.params ?? {}) as Record<string, unknown>,
      });
    }
    if (url.includes("/stream/events") && body) {
      wire.streams.push(body as unknown as Wire["streams"][number]);
      if (cut) return cut(body as unknown as { channels: string[] }, res);
    }
    return res;
  };
}

interface Mounted {
  current: () => Rendered;
  wire: Wire;
  thread: () => string;
  created: string[];
  /** Every isLoading value the page rendered, in order, repeats collapsed. */
  loading: boolean[];
  unmount: () => void;
}
interface Rendered {
  stream: Stream;
  result: ResultEvent | undefined;
  results: ProtocolEvent[];
  sqls: ProtocolEvent[];
}

/**
 * Mounts the hook as a page would: the ID token as a memoised `authorization` header, the thread
 * id (a reload's) or none (the first submit mints one, reported by `onThreadId`), Quarry's `result`
 * event as an extension and its `result` and `sql` events as channels.
 */
function mount(
  opts: {
    threadId?: string;
    cut?: Parameters<typeof wireFetch>[1];
    /** The hook alone, with its defaults: no extension or channel of Quarry's events. */
    bare?: boolean;
  } = {},
): Mounted {
  const wire: Wire = { commands: [], streams: [] };
  const fetchImpl = wireFetch(wire, opts.cut);
  let threadId = opts.threadId;
  const created: string[] = [];
  const loading: boolean[] = [];
  const view = renderHook(() => {
    const headers = useMemo(() => ({ authorization: `Bearer ${alice.idToken}` }), []);
    const stream = useStream({
      apiUrl: api,
      assistantId: "quarry",
      defaultHeaders: headers,
      threadId: opts.threadId,
      fetch: fetchImpl,
      onThreadId: (id: string) => {
        threadId = id;
      },
      onCreated: ({ runId }: { runId: string }) => {
        created.push(runId);
      },
    } as never) as unknown as Stream;
    if (loading.at(-1) !== stream.isLoading) loading.push(stream.isLoading);
    // The same every render of a mount (hooks keep their order).
    if (opts.bare) return { stream, result: undefined, results: [], sqls: [] };
    const result = useExtension(stream as never, "result") as ResultEvent | undefined;
    const results = useChannel(stream as never, ["custom:result"]) as unknown as ProtocolEvent[];
    const sqls = useChannel(stream as never, ["custom:sql"]) as unknown as ProtocolEvent[];
    return { stream, result, results, sqls };
  });
  return {
    current: () => view.result.current,
    wire,
    thread: () => threadId!,
    created,
    loading,
    unmount: () => view.unmount(),
  };
}

const LONG = { timeout: 45_000 };

/** A protocol event as it came over the wire. */
type WireEvent = {
  seq: number;
  event_id: string;
  method: string;
  params: { namespace: string[]; data: Record<string, unknown> & { event?: string; id?: string } };
};
/** One event stream the hook opened: its request and the events its response carried, in order. */
type Received = {
  filter: { channels: string[]; namespaces?: string[][]; depth?: number };
  events: WireEvent[];
};

/** A `cut` for mount that keeps every event stream's response as it passes to the hook, into `into`. */
function recording(into: Received[]): NonNullable<Parameters<typeof wireFetch>[1]> {
  return (filter, res) => {
    const got: Received = { filter, events: [] };
    into.push(got);
    const decoder = new TextDecoder();
    let buf = "";
    const tee = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        buf += decoder.decode(chunk, { stream: true });
        for (let i = buf.indexOf("\n\n"); i >= 0; i = buf.indexOf("\n\n")) {
          const data = buf
            .slice(0, i)
            .split("\n")
            .find((l) => l.startsWith("data: "));
          buf = buf.slice(i + 2);
          if (data) got.events.push(JSON.parse(data.slice(6)) as WireEvent);
        }
        controller.enqueue(chunk);
      },
    });
    return new Response(res.body!.pipeThrough(tee), {
      status: res.status,
      statusText: res.statusText,
      headers: res.headers,
    });
  };
}

const isRootEnd = (e: WireEvent) =>
  e.method === "lifecycle" &&
  e.params.namespace.length === 0 &&
  ["completed", "failed", "interrupted"].includes(String(e.params.data.event));

/**
 * Submits and waits for the run to end, with no error, and for the page to show what the thread
 * holds. isLoading may turn false a moment before the last messages arrive: the hook ends a submit
 * on the first root terminal event of either of its streams, and on a thread whose content stream
 * opens with the run (a new thread, or an idle one after a reload) the lifecycle stream can be
 * ahead of it.
 */
async function ask(h: Mounted, question: string) {
  const before = h.created.length;
  await h.current().stream.submit({ messages: [{ type: "human", content: question }] });
  await waitFor(() => expect(h.current().stream.isLoading).toBe(false), LONG);
  expect(h.current().stream.error ?? null).toBeNull();
  await showsStored(h);
  // onCreated follows run.start's answer, which may come after the run's last event.
  await waitFor(() => expect(h.created.length).toBe(before + 1));
}

/** Waits until the page shows the thread's stored messages: each once, in order, nothing else. */
async function showsStored(h: Mounted) {
  const { client } = h.current().stream;
  const stored = ids((await client.threads.getState(h.thread())).values.messages);
  await waitFor(() => expect(ids(h.current().stream.messages)).toEqual(stored), LONG);
}

/** The turn a message belongs to: the messages from its question up to the next question. */
function turnOf(messages: Msg[], question: Msg): Msg[] {
  const start = messages.findIndex((m) => m.id === question.id);
  const end = messages.findIndex((m, i) => i > start && typeOf(m) === "human");
  return messages.slice(start, end < 0 ? undefined : end);
}

/** Checks a `result` event belongs to this question's turn: its query was called in the turn. */
function expectResultOfTurn(messages: Msg[], question: Msg, result: ResultEvent, table: string) {
  const turn = turnOf(messages, question);
  const call = turn.flatMap((m) => m.tool_calls ?? []).find((c) => c.id === result.ref);
  expect(call?.name, `result ${result.ref} is one of this turn's queries`).toBe("bq_query");
  expect(turn.some((m) => typeOf(m) === "tool" && m.tool_call_id === result.ref)).toBe(true);
  expect(result.sql).toContain(`FROM ${table}`);
}

describe("@langchain/react 1.1.0 useStream over the v2 protocol", () => {
  it("asks: the answer streams, the question shows once with its client id, Quarry's events arrive for it", async () => {
    const h = mount();
    const key = holds.newKey("ask");
    const question = `How many orders were placed in total? [pause-answer:${key}]`;
    const submitted = h.current().stream.submit({ messages: [{ type: "human", content: question }] });
    try {
      // The answer's first chunks are on screen while the model still holds the rest.
      await waitFor(() => expect(textOf(answers(h.current().stream)[0])).not.toBe(""), LONG);
      const partial = textOf(answers(h.current().stream)[0]);
      expect(h.current().stream.isLoading).toBe(true);
      await holds.release(key);
      await submitted;
      await waitFor(() => expect(h.current().stream.isLoading).toBe(false), LONG);
      await showsStored(h);
      const done = textOf(answers(h.current().stream)[0]);
      expect(done.length).toBeGreaterThan(partial.length);
      expect(done.startsWith(partial)).toBe(true);
    } finally {
      await holds.release(key);
    }
    const { stream } = h.current();
    expect(stream.error ?? null).toBeNull();
    expect(h.loading).toEqual([false, true, false]);
    expect(stream.threadId).toBe(h.thread());

    // The question once, under the id the hook sent with run.start; the server kept that id.
    const sent = h.wire.commands.find((c) => c.method === "run.start")!;
    const sentMessages = (sent.params.input as { messages: Msg[] }).messages;
    expect(sentMessages).toHaveLength(1);
    expect(humans(stream).map(textOf)).toEqual([question]);
    expect(humans(stream)[0].id).toBe(sentMessages[0].id);
    const state = await stream.client.threads.getState(h.thread());
    expect(state.values.messages[0]).toMatchObject({ type: "human", id: sentMessages[0].id });
    // The streamed answer is the stored one, once: same id, same text.
    const stored = state.values.messages.at(-1)!;
    expect(ids(answers(stream))).toEqual([stored.id]);
    expect(textOf(answers(stream)[0])).toBe(textOf(stored));
    expect(new Set(ids(stream.messages)).size).toBe(stream.messages.length);

    // Quarry's events on custom:<name> channels, for this question's query.
    await waitFor(() => {
      expect(h.current().result).toBeDefined();
      expect(h.current().results).toHaveLength(1);
      expect(h.current().sqls).toHaveLength(1);
    });
    const { result, results, sqls } = h.current();
    expectResultOfTurn(stream.messages, humans(stream)[0], result!, "shop.orders");
    expect(results.map((e) => e.params.data.payload.ref)).toEqual([result!.ref]);
    expect(results[0].params.data.name).toBe("result");
    expect(sqls.map((e) => (e.params.data.payload as unknown as SqlEvent).toolCallId)).toEqual([result!.ref]);
  });

  it("its two streams carry each event once, lifecycle at the root alone, and the hook still shows everything the thread holds", async () => {
    const received: Received[] = [];
    const h = mount({ cut: recording(received), bare: true });
    await ask(h, "How many orders were placed in total?");
    // The hook's defaults open two streams, the lifecycle watcher and the content stream; both
    // reached the run's end.
    await waitFor(() => {
      expect(received.map((r) => r.filter.channels.join())).toEqual(
        expect.arrayContaining(["lifecycle,input", "values,checkpoints,lifecycle,input,messages,tools"]),
      );
      expect(received.every((r) => r.events.some(isRootEnd))).toBe(true);
    }, LONG);
    expect(received).toHaveLength(2);
    const events = received.flatMap((r) => r.events);
    // Lifecycle is the root's alone (Quarry's graph has no subgraphs; its stages are custom:phase
    // events, which no subscription of the hook asked for) ...
    const life = events.filter((e) => e.method === "lifecycle");
    expect(life.every((e) => e.params.namespace.length === 0)).toBe(true);
    expect(events.some((e) => e.method === "custom" && e.params.data.name === "phase")).toBe(false);
    // ... and the only events on both streams are the root's running and completed, which each
    // stream's filter asks for: no stage lifecycle twice.
    const byId = new Map<string, WireEvent[]>();
    for (const e of events) byId.set(e.event_id, [...(byId.get(e.event_id) ?? []), e]);
    const twice = [...byId.values()].filter((es) => es.length > 1);
    expect(
      twice.map((es) => [es.length, es[0].method, es[0].params.namespace.length, es[0].params.data.event]),
    ).toEqual([
      [2, "lifecycle", 0, "running"],
      [2, "lifecycle", 0, "completed"],
    ]);

    // The messages channel starts a message only with text: the answer, not the planner's tool-call turns.
    const { stream } = h.current();
    const state = await stream.client.threads.getState(h.thread());
    const stored = state.values.messages;
    const started = events
      .filter((e) => e.method === "messages" && e.params.data.event === "message-start")
      .map((e) => e.params.data.id);
    expect(started).toEqual([stored.at(-1)!.id]);
    // The answer's deltas make its stored text.
    const deltas = events.filter(
      (e) => e.method === "messages" && e.params.data.event === "content-block-delta",
    );
    expect(deltas.map((e) => (e.params.data.delta as { text: string }).text).join("")).toBe(
      textOf(stored.at(-1)),
    );
    // Every values event lists the state's messages in order; each message goes whole in the first
    // values that holds it and, until the last values, as a reference (type, id, a tool message's
    // call id, no content) after that; the last values is the whole state.
    const values = events
      .filter((e) => e.method === "values")
      .map((e) => e.params.data as { messages: Msg[] });
    const last = values.at(-1)!;
    expect(last.messages.map(essence)).toEqual(stored.map(essence));
    const carried = new Set<string>();
    for (const v of values.slice(0, -1)) {
      expect(ids(v.messages)).toEqual(ids(stored).slice(0, v.messages.length));
      for (const m of v.messages) {
        const whole = stored.find((x) => x.id === m.id)!;
        if (carried.has(m.id!)) {
          const ref = { type: m.type, content: "", id: m.id };
          expect(m).toEqual(m.type === "tool" ? { ...ref, tool_call_id: whole.tool_call_id } : ref);
        } else expect(essence(m)).toEqual(essence(whole));
        carried.add(m.id!);
      }
    }
    expect(values.slice(0, -1).some((v) => v.messages.some((m) => m.content === "" && m.type !== "ai"))).toBe(
      true,
    );

    // Nothing the hook shows is lost: each stored message, with its text, tool calls and result.
    expect(ids(stream.messages)).toEqual(ids(stored));
    stored.forEach((m, i) => {
      const shown = stream.messages[i];
      expect(typeOf(shown)).toBe(m.type);
      expect(textOf(shown)).toBe(textOf(m));
      expect((shown.tool_calls ?? []).map((c) => [c.id, c.name])).toEqual(
        (m.tool_calls ?? []).map((c) => [c.id, c.name]),
      );
      if (m.type === "tool") expect(shown.artifact).toEqual(m.artifact);
    });
    expect(stream.messages.some((m) => m.tool_calls?.some((c) => c.name === "bq_query"))).toBe(true);
    expect(answers(stream).map(textOf)).toEqual([expect.stringContaining("FROM shop.orders")]);
    // The hook's values are the last values: the state's keys, its usage, every message.
    expect(Object.keys(stream.values).sort()).toEqual(Object.keys(last).sort());
    expect(stream.values.usage).toEqual((last as unknown as { usage: unknown }).usage);
    expect(ids(stream.values.messages as Msg[])).toEqual(ids(stored));
  });

  it("a follow-up on the same thread: the answer uses the first turn, both turns show once", async () => {
    const h = mount();
    const [m1, m2] = [holds.newKey("first"), holds.newKey("second")];
    const q1 = `How many orders were placed in total? (${m1})`;
    const q2 = `And how many customers are there? (${m2})`;
    await ask(h, q1);
    await ask(h, q2);
    const { stream } = h.current();
    expect(humans(stream).map(textOf)).toEqual([q1, q2]);
    expect(answers(stream).map(textOf)).toEqual([
      expect.stringContaining("FROM shop.orders"),
      expect.stringContaining("FROM shop.customers"),
    ]);
    expect(new Set(ids(stream.messages)).size).toBe(stream.messages.length);
    const stored = await stream.client.threads.getState(h.thread());
    expect(ids(stream.messages)).toEqual(ids(stored.values.messages));

    // The hook sent the follow-up alone; the server gave the model the first turn with it.
    const starts = h.wire.commands.filter((c) => c.method === "run.start");
    expect(starts.map((c) => (c.params.input as { messages: Msg[] }).messages.map((m) => m.content))).toEqual(
      [[q1], [q2]],
    );
    const prompts = await holds.prompts(m2);
    expect(prompts.length).toBeGreaterThan(0);
    expect(prompts.every((p) => p.includes(m1))).toBe(true);

    // Each turn's result event, in order, each for its own turn's query; the extension holds the latest.
    await waitFor(() => {
      expect(h.current().results).toHaveLength(2);
      expect(h.current().result?.ref).toBe(h.current().results[1].params.data.payload.ref);
    });
    const { result, results } = h.current();
    const [r1, r2] = results.map((e) => e.params.data.payload as unknown as ResultEvent);
    const [h1, h2] = humans(stream);
    expectResultOfTurn(stream.messages, h1, r1, "shop.orders");
    expectResultOfTurn(stream.messages, h2, r2, "shop.customers");
    expect(result).toEqual(r2);
    const runNo = (e: ProtocolEvent) => Math.floor(e.seq / 2 ** 36);
    expect(runNo(results[1])).toBe(runNo(results[0]) + 1);
  });

  it("a question with an image: the hook sends it as a standard block, the model sees it, the hook shows it once", async () => {
    const h = mount();
    const marker = holds.newKey("hook-image");
    const png = Buffer.concat([Buffer.from("89504e470d0a1a0a", "hex"), Buffer.alloc(40, 5)]).toString(
      "base64",
    );
    const image = { type: "image", mimeType: "image/png", data: png, metadata: { name: "q2.png" } };
    await h.current().stream.submit({
      messages: [
        {
          type: "human",
          content: [{ type: "text", text: `How many orders were placed? (${marker})` }, image],
        },
      ],
    });
    await waitFor(() => expect(h.current().stream.isLoading).toBe(false), LONG);
    expect(h.current().stream.error ?? null).toBeNull();
    await showsStored(h);
    const prompts = await holds.prompts(marker);
    expect(prompts.some((p) => p.includes(`"inlineData":{"mimeType":"image/png","data":"${png}"}`))).toBe(
      true,
    );
    const [question] = humans(h.current().stream);
    expect(question.content).toEqual([
      { type: "text", text: `How many orders were placed? (${marker})` },
      image,
    ]);
  });

  it("a clarifying question: stream.interrupt from the input channel, respond resumes the turn", async () => {
    const h = mount();
    await ask(h, "How are we doing?");
    const asked = h.current().stream;
    expect(asked.interrupts).toHaveLength(1);
    expect(asked.interrupt?.value).toMatchObject({
      kind: "clarification",
      question: CLARIFYING_QUESTION,
      choices: CLARIFYING_CHOICES,
    });
    expect(answers(asked)).toEqual([]);
    expect(h.current().result).toBeUndefined();
    // The stop at the question leaves the state whole (a values event replaces the hook's values).
    expect(Object.keys(asked.values).sort()).toEqual(["messages", "usage"]);
    // The interrupt is the one the thread waits on.
    const waiting = (await asked.client.threads.getState(h.thread())) as unknown as {
      tasks: { interrupts: { id: string }[] }[];
    };
    expect(waiting.tasks.flatMap((t) => t.interrupts.map((i) => i.id))).toEqual([asked.interrupt?.id]);
    expect((await asked.client.threads.get(h.thread())).status).toBe("interrupted");

    await asked.respond("Number of customers", { interruptId: asked.interrupt!.id });
    await waitFor(
      () => expect(textOf(answers(h.current().stream)[0])).toContain("FROM shop.customers"),
      LONG,
    );
    await waitFor(() => expect(h.current().stream.isLoading).toBe(false), LONG);
    await showsStored(h);
    const { stream, result } = h.current();
    expect(stream.error ?? null).toBeNull();
    expect(stream.interrupt).toBeUndefined();
    const respond = h.wire.commands.find((c) => c.method === "input.respond");
    expect(respond?.params).toMatchObject({
      interrupt_id: asked.interrupt!.id,
      response: "Number of customers",
    });
    // One turn: the question once, the ask and its answer, the query, the written answer.
    expect(humans(stream).map(textOf)).toEqual(["How are we doing?"]);
    expect(
      stream.messages.find((m) => typeOf(m) === "tool" && textOf(m).startsWith("The user answered")),
    ).toBeDefined();
    expect(answers(stream)).toHaveLength(1);
    await waitFor(() => expect(h.current().result).toBeDefined());
    expectResultOfTurn(stream.messages, humans(stream)[0], result ?? h.current().result!, "shop.customers");
    expect((await stream.client.threads.get(h.thread())).status).toBe("idle");
  });

  it("a clarifying question across a reload: the new hook shows it from the state and answers it", async () => {
    const first = mount();
    await ask(first, "How are we doing?");
    const id = first.current().stream.interrupt?.id;
    expect(id).toBeTruthy();
    first.unmount();

    const h = mount({ threadId: first.thread() });
    // Hydrated from the state's tasks; the replayed run (it ended at the question) settles.
    await waitFor(() => {
      expect(h.current().stream.isThreadLoading).toBe(false);
      expect(h.current().stream.interrupts.map((i) => i.id)).toEqual([id]);
      expect(h.current().stream.isLoading).toBe(false);
    }, LONG);
    expect(h.current().stream.interrupt?.value).toMatchObject({ question: CLARIFYING_QUESTION });
    // By its id: respond() without one picks from the interrupts the event stream has replayed so
    // far (ThreadStream.interrupts), not from the hydrated ones, and may find none yet.
    await h.current().stream.respond("Number of orders", { interruptId: id! });
    expect(h.wire.commands.map((c) => [c.method, c.params.interrupt_id])).toEqual([["input.respond", id]]);
    await waitFor(() => expect(textOf(answers(h.current().stream)[0])).toContain("FROM shop.orders"), LONG);
    await waitFor(() => expect(h.current().stream.isLoading).toBe(false), LONG);
    await showsStored(h);
    const { stream } = h.current();
    expect(stream.error ?? null).toBeNull();
    expect(stream.interrupts).toEqual([]);
    expect(humans(stream).map(textOf)).toEqual(["How are we doing?"]);
    expect(answers(stream)).toHaveLength(1);
  });

  it("regenerate and edit: forks from checkpoints the thread's history names; the abandoned branch leaves the screen", async () => {
    const h = mount();
    const question = "How many orders were placed in total?";
    await ask(h, question);

    /**
     * The checkpoint before a message, as a page finds it in the thread's history: the parent of
     * the first checkpoint that holds the message; with the ids of the messages kept there.
     */
    const before = async (messageId: string) => {
      const history = await h.current().stream.client.threads.getHistory(h.thread(), { limit: 100 });
      const holding = history.filter((st) => st.values.messages?.some((m) => m.id === messageId));
      const id = holding.at(-1)?.parent_checkpoint?.checkpoint_id;
      expect(id, `a checkpoint before ${messageId}`).toBeTruthy();
      const at = history.find((st) => st.checkpoint.checkpoint_id === id)!;
      return { id: id!, kept: ids(at.values.messages ?? []) };
    };
    /** Forks and checks the page shows the new branch only: nothing after the fork point survives. */
    const fork = async (input: unknown, from: { id: string; kept: (string | undefined)[] }) => {
      const shown = ids(h.current().stream.messages);
      await h.current().stream.submit(input, { forkFrom: from.id });
      await waitFor(() => expect(h.current().stream.isLoading).toBe(false), LONG);
      expect(h.current().stream.error ?? null).toBeNull();
      await showsStored(h);
      const sent = h.wire.commands.filter((c) => c.method === "run.start").at(-1)!;
      expect(sent.params.config).toMatchObject({ configurable: { checkpoint_id: from.id } });
      const abandoned = shown.filter((id) => !from.kept.includes(id));
      expect(abandoned.length).toBeGreaterThan(0);
      const now = ids(h.current().stream.messages);
      expect(abandoned.filter((id) => now.includes(id))).toEqual([]);
      return h.current().stream;
    };

    // Regenerate: no input, from the checkpoint before the answer.
    const oldAnswer = answers(h.current().stream)[0];
    let s = await fork(null, await before(oldAnswer.id!));
    expect(h.wire.commands.at(-1)?.params.input ?? null).toBeNull();
    expect(humans(s).map(textOf)).toEqual([question]);
    expect(answers(s)).toHaveLength(1);
    expect(answers(s)[0].id).not.toBe(oldAnswer.id);
    expect(textOf(answers(s)[0])).toContain("FROM shop.orders");

    // Edit the question: new input, from the checkpoint before the question (the empty start).
    const edited = "How many customers are there?";
    s = await fork({ messages: [{ type: "human", content: edited }] }, await before(humans(s)[0].id!));
    expect(humans(s).map(textOf)).toEqual([edited]);
    expect(answers(s).map(textOf)).toEqual([expect.stringContaining("FROM shop.customers")]);
    await waitFor(() => expect(h.current().result?.sql).toContain("FROM shop.customers"));
  });

  it("Stop cancels the running answer: the model request is closed, the thread idle, isLoading false", async () => {
    const h = mount();
    const key = holds.newKey("stop");
    const question = `${holds.planner(key)} How many orders were placed in total?`;
    const submitted = h.current().stream.submit({ messages: [{ type: "human", content: question }] });
    try {
      // The planner's model call waits at the hold; the run holds the thread and the hook knows its id.
      await holds.waitHeld(key);
      await waitFor(() => expect(h.created).toHaveLength(1), LONG);
      expect(h.current().stream.isLoading).toBe(true);
      await h.current().stream.stop();
      await submitted;
      await waitFor(() => expect(h.current().stream.isLoading).toBe(false));
      // The cancel reached the model: the stand-in saw the held request closed by the function.
      await expect.poll(async () => (await holds.calls(key)).at(-1), LONG).toBe("aborted");
      const { client } = h.current().stream;
      await expect.poll(async () => (await client.threads.get(h.thread())).status, LONG).toBe("idle");
      expect((await client.runs.list(h.thread())).map((r) => [r.run_id, r.status])).toEqual([
        [h.created[0], "interrupted"],
      ]);
    } finally {
      await holds.release(key);
    }
    const { stream } = h.current();
    expect(stream.isLoading).toBe(false);
    expect(humans(stream).map(textOf)).toEqual([question]);
    expect(answers(stream)).toEqual([]);
  });

  it("a dropped event stream: the hook reconnects by itself and the answer shows once", async () => {
    const key = holds.newKey("drop");
    const decoder = new TextDecoder();
    let cutAt: number | undefined;
    let cutFilter: object | undefined;
    const h = mount({
      // Cuts the content stream (the one with the messages channel) once, after the answer's first
      // text has gone through it: the body errors as a lost connection does.
      cut: (body, res) => {
        if (cutAt !== undefined || !body.channels.includes("messages") || !res.body) return res;
        const reader = res.body.getReader();
        let seen = "";
        let cutNext = false;
        const cutBody = new ReadableStream<Uint8Array>({
          async pull(controller) {
            if (cutNext) {
              controller.error(new TypeError("network error (the test cut the connection)"));
              void reader.cancel().catch(() => {});
              return;
            }
            const { value, done } = await reader.read();
            if (done) return controller.close();
            controller.enqueue(value);
            seen += decoder.decode(value, { stream: true });
            if (cutAt === undefined && seen.includes('"content-block-delta"')) {
              cutAt = h.wire.streams.length;
              cutFilter = body;
              cutNext = true;
            }
          },
          cancel: (reason) => reader.cancel(reason),
        });
        return new Response(cutBody, { status: res.status, headers: res.headers });
      },
    });
    const question = `How many orders were placed in total? [pause-answer:${key}]`;
    const submitted = h.current().stream.submit({ messages: [{ type: "human", content: question }] });
    try {
      await holds.waitHeld(key);
      await waitFor(() => expect(cutAt).toBeDefined(), LONG);
      // The transport opens the content stream again by itself (the same filter, no since).
      await waitFor(() => expect(h.wire.streams.length).toBeGreaterThan(cutAt!), LONG);
      expect(h.wire.streams[cutAt!]).toEqual(cutFilter);
      expect(h.current().stream.isLoading).toBe(true);
      await holds.release(key);
      await submitted;
      await waitFor(() => expect(h.current().stream.isLoading).toBe(false), LONG);
    } finally {
      await holds.release(key);
    }
    expect(h.current().stream.error ?? null).toBeNull();
    await showsStored(h);
    const { stream } = h.current();
    const stored = await stream.client.threads.getState(h.thread());
    expect(humans(stream).map(textOf)).toEqual([question]);
    expect(answers(stream)).toHaveLength(1);
    expect(textOf(answers(stream)[0])).toBe(textOf(stored.values.messages.at(-1)));
    await waitFor(() => expect(h.current().results).toHaveLength(1));
  });

  it("a reload rejoins the running answer: hydrated from the state, streamed to its end once", async () => {
    const key = holds.newKey("reload");
    const question = `How many orders were placed in total? [pause-answer:${key}]`;
    const first = mount();
    const submitted = first.current().stream.submit({ messages: [{ type: "human", content: question }] });
    let second: Mounted | undefined;
    try {
      // The answer has started (its first chunks on screen) and waits at the hold.
      await waitFor(() => expect(textOf(answers(first.current().stream)[0])).not.toBe(""), LONG);
      const threadId = first.thread();
      first.unmount(); // the page reloads
      await submitted;

      second = mount({ threadId });
      await waitFor(() => expect(second!.current().stream.isLoading).toBe(true), LONG);
      expect(second.current().stream.isThreadLoading).toBe(false);
      expect(humans(second.current().stream).map(textOf)).toEqual([question]);
      await holds.release(key);
      await waitFor(() => expect(second!.current().stream.isLoading).toBe(false), LONG);
    } finally {
      await holds.release(key);
    }
    expect(second.current().stream.error ?? null).toBeNull();
    await showsStored(second);
    const { stream } = second.current();
    expect(second.loading).toEqual([false, true, false]);
    // No new run: the reload only read the state and the event stream.
    expect(second.wire.commands).toEqual([]);
    const stored = await stream.client.threads.getState(second.thread());
    expect(humans(stream).map(textOf)).toEqual([question]);
    expect(answers(stream)).toHaveLength(1);
    expect(textOf(answers(stream)[0])).toBe(textOf(stored.values.messages.at(-1)));
    await waitFor(() => expect(second!.current().result?.sql).toContain("FROM shop.orders"));
  });

  it("a thread's history across reloads: both turns once, and the conversation goes on", async () => {
    const first = mount();
    const [q1, q2, q3] = [
      "How many orders were placed in total?",
      "And how many customers are there?",
      "How many products are there?",
    ];
    await ask(first, q1);
    await ask(first, q2);
    const shown = ids(first.current().stream.messages);
    first.unmount();

    const second = mount({ threadId: first.thread() });
    await waitFor(() => expect(second.current().stream.isThreadLoading).toBe(false), LONG);
    await waitFor(() => expect(ids(second.current().stream.messages)).toEqual(shown), LONG);
    let s = second.current().stream;
    expect(s.isLoading).toBe(false);
    expect(humans(s).map(textOf)).toEqual([q1, q2]);
    expect(answers(s).map(textOf)).toEqual([
      expect.stringContaining("FROM shop.orders"),
      expect.stringContaining("FROM shop.customers"),
    ]);
    expect(second.wire.commands).toEqual([]);
    // Quarry's events come again for the latest run only (the stream replays the thread's latest
    // run); earlier turns' results are on their tool messages in the state.
    await waitFor(() => {
      expect(second.current().results).toHaveLength(1);
      expect(second.current().result).toBeDefined();
    });
    expectResultOfTurn(s.messages, humans(s)[1], second.current().result!, "shop.customers");

    await ask(second, q3);
    s = second.current().stream;
    expect(humans(s).map(textOf)).toEqual([q1, q2, q3]);
    expect(answers(s)).toHaveLength(3);
    await waitFor(() => expect(second.current().result?.sql).toContain("FROM shop.products"));
  });
});

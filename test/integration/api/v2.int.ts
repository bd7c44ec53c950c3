/**
 * The Agent Streaming Protocol v2 through the functions emulator, driven by the SDK's own v2 client
 * (`client.threads.stream`: the ThreadStream that @langchain/react's hook runs on): a question and
 * its answer on the protocol's channels, Quarry's events on named custom channels, a follow-up,
 * bad commands answered with the protocol's errors, and `since` replay read from another
 * connection with no gap and no duplicate.
 */
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { Client } from "@langchain/langgraph-sdk";
import { signUp, type TestUser } from "../../support/auth-emulator";
import { call } from "../../support/api-client";
import { stackEnv } from "../../support/stack-env";
import { HOLD_URL_ENV, holdClient, type Holds } from "../../support/hold-control";
import { startInProcessApp, type InProcessApp } from "../../support/in-process-app";

let api: string;
let user: TestUser;
let client: Client;
let holds: Holds;
/** The same function's app served from this process: another instance on the same Firestore. */
let otherApp: InProcessApp;

beforeAll(async () => {
  const stack = stackEnv();
  api = stack.urls.api!;
  holds = holdClient(stack.env[HOLD_URL_ENV]);
  otherApp = await startInProcessApp();
  user = await signUp(stack.urls.auth!);
  client = new Client({
    apiUrl: api,
    defaultHeaders: { authorization: `Bearer ${user.idToken}` },
    callerOptions: { maxRetries: 0 },
  });
});

afterAll(async () => {
  await otherApp?.close();
});

type Ev = {
  type: string;
  seq: number;
  event_id: string;
  method: string;
  params: { namespace: string[]; data: Record<string, unknown> & { event?: string } };
};

/** Reads a v2 event stream's SSE frames until `until` holds (or the stream ends). */
async function readEvents(
  threadId: string,
  body: object,
  until: (evs: Ev[]) => boolean,
  base = api,
): Promise<Ev[]> {
  const ac = new AbortController();
  const res = await fetch(`${base}/threads/${threadId}/stream/events`, {
    method: "POST",
    headers: { authorization: `Bearer ${user.idToken}`, "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: ac.signal,
  });
  expect(res.status).toBe(200);
  const out: Ev[] = [];
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += value;
      let i: number;
      while ((i = buf.indexOf("\n\n")) >= 0) {
        const frame = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const data = frame.split("\n").find((l) => l.startsWith("data: "));
        const id = frame.split("\n").find((l) => l.startsWith("id: "));
        if (!data) continue;
        const ev = JSON.parse(data.slice(6)) as Ev;
        expect(id).toBe(`id: ${ev.seq}`);
        out.push(ev);
      }
      if (until(out)) break;
    }
  } finally {
    ac.abort();
  }
  return out;
}

const ended = (evs: Ev[]) =>
  evs.some(
    (e) =>
      e.method === "lifecycle" &&
      e.params.namespace.length === 0 &&
      ["completed", "failed", "interrupted"].includes(String(e.params.data.event)),
  );

describe("Agent Streaming Protocol v2", () => {
  it("the SDK's ThreadStream asks and gets the answer, with Quarry's events on custom channels", async () => {
    const thread = client.threads.stream({ assistantId: "quarry" });
    const results: unknown[] = [];
    const custom = (async () => {
      for await (const ev of (await thread.subscribe({ channels: ["custom:result"] })) as AsyncIterable<Ev>) {
        results.push(ev.params.data);
        break;
      }
    })();
    await thread.run.start({
      input: { messages: [{ type: "human", content: "How many orders were placed?", id: "q-1" }] },
    });
    const values = (await thread.values) as { messages: { type: string; id?: string; content: string }[] };
    expect(values.messages[0]).toMatchObject({
      type: "human",
      id: "q-1",
      content: "How many orders were placed?",
    });
    expect(values.messages.at(-1)?.content).toMatch(/^Here is what I found/);
    await custom;
    expect(results[0]).toMatchObject({ name: "result", payload: { type: "result" } });
    await thread.close();
  });

  it("since replays exactly what a connection missed", async () => {
    const thread = client.threads.stream({ assistantId: "quarry" });
    await thread.run.start({
      input: { messages: [{ type: "human", content: "How many orders were placed?" }] },
    });
    await thread.values;
    const all = await readEvents(
      thread.threadId,
      { channels: ["values", "messages", "lifecycle", "custom"] },
      ended,
    );
    expect(all.length).toBeGreaterThan(5);
    const seqs = all.map((e) => e.seq);
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
    expect(new Set(seqs).size).toBe(seqs.length);
    // The answer streamed on the messages channel: one message, whose deltas make the answer in the state.
    const answer = (await thread.values) as { messages: { type: string; id: string; content: string }[] };
    const last = answer.messages.at(-1)!;
    const messages = all.filter((e) => e.method === "messages").map((e) => e.params.data);
    const from = messages.findIndex((d) => d.event === "message-start" && d.id === last.id);
    expect(from).toBeGreaterThanOrEqual(0);
    expect(messages.filter((d) => d.event === "message-start" && d.id === last.id)).toHaveLength(1);
    const to = messages.findIndex((d, i) => i > from && d.event === "message-finish");
    const text = messages
      .slice(from, to)
      .filter((d) => d.event === "content-block-delta")
      .map((d) => (d.delta as { text: string }).text)
      .join("");
    expect(text).toBe(last.content);
    const cut = all[Math.floor(all.length / 2)].seq;
    const rest = await readEvents(
      thread.threadId,
      { channels: ["values", "messages", "lifecycle", "custom"], since: cut },
      ended,
    );
    expect(rest.map((e) => e.seq)).toEqual(seqs.filter((s) => s > cut));
    await thread.close();
  });

  it("a stream dropped mid-run and reopened on another instance with since gets exactly the rest", async () => {
    const thread = client.threads.stream({ assistantId: "quarry" });
    const key = holds.newKey("v2-since");
    await thread.run.start({
      input: { messages: [{ type: "human", content: `How many orders were placed? ${holds.planner(key)}` }] },
    });
    await holds.waitHeld(key);
    const channels = ["values", "messages", "lifecycle", "custom", "input"];
    // Dropped once the planner's stage has started (the run waits at the hold meanwhile).
    const first = await readEvents(thread.threadId, { channels }, (evs) =>
      evs.some(
        (e) =>
          e.method === "custom" &&
          e.params.data.name === "phase" &&
          (e.params.data.payload as { phase?: string }).phase === "planning",
      ),
    );
    const last = first.at(-1)!.seq;
    const rest: Ev[] = [];
    const following = readEvents(
      thread.threadId,
      { channels, since: last },
      (evs) => (rest.splice(0, rest.length, ...evs), ended(evs)),
      otherApp.url,
    );
    await holds.release(key);
    await following;
    // The whole run, read afterwards from the start: the two pieces are exactly it.
    const whole = await readEvents(thread.threadId, { channels }, ended);
    expect([...first, ...rest].map((e) => e.event_id)).toEqual(whole.map((e) => e.event_id));
    expect(rest.at(-1)?.params.data).toMatchObject({ event: "completed" });
    await thread.close();
  });

  it("run.start answers once the run holds the thread, with applied_through_seq below every event of the run", async () => {
    const threadId = crypto.randomUUID();
    const start = await call(api, `/threads/${threadId}/commands`, {
      method: "POST",
      token: user.idToken,
      body: {
        id: 3,
        method: "run.start",
        params: {
          assistant_id: "quarry",
          input: { messages: [{ type: "human", content: "How many orders were placed?" }] },
        },
      },
    });
    const body = start.json as {
      type: string;
      id: number;
      result: { run_id: string };
      meta: { applied_through_seq: number };
    };
    expect(body).toMatchObject({ type: "success", id: 3, meta: { thread_id: threadId } });
    const runs = await client.runs.list(threadId);
    expect(runs.map((r) => r.run_id)).toContain(body.result.run_id);
    const evs = await readEvents(threadId, { channels: ["lifecycle", "values"] }, ended);
    expect(evs.length).toBeGreaterThan(0);
    expect(evs.every((e) => e.seq > body.meta.applied_through_seq)).toBe(true);
  });

  it("bad commands get the protocol's error response and start nothing", async () => {
    const threadId = crypto.randomUUID();
    const unknown = await call(api, `/threads/${threadId}/commands`, {
      method: "POST",
      token: user.idToken,
      body: { id: 1, method: "run.explode", params: {} },
    });
    expect(unknown.status).toBe(200);
    expect(unknown.json).toMatchObject({ type: "error", id: 1, error: "unknown_command" });
    const malformed = await call(api, `/threads/${threadId}/commands`, {
      method: "POST",
      token: user.idToken,
      body: { method: "run.start" },
    });
    expect(malformed.status).toBe(400);
    expect(malformed.json).toMatchObject({ type: "error", error: "invalid_argument" });
    const respond = await call(api, `/threads/${threadId}/commands`, {
      method: "POST",
      token: user.idToken,
      body: { id: 2, method: "input.respond", params: { interrupt_id: "x", response: "y" } },
    });
    expect(respond.json).toMatchObject({ type: "error", id: 2 });
    const fork = await call(api, `/threads/${threadId}/commands`, {
      method: "POST",
      token: user.idToken,
      body: { id: 5, method: "state.fork", params: { checkpoint_id: "c1", input: "not a question" } },
    });
    expect(fork.json).toMatchObject({
      type: "error",
      id: 5,
      error: "invalid_argument",
      message: expect.stringMatching(/question/),
    });
    const two = await call(api, `/threads/${threadId}/commands`, {
      method: "POST",
      token: user.idToken,
      body: {
        id: 6,
        method: "input.respond",
        params: {
          responses: [
            { interrupt_id: "a", response: "x" },
            { interrupt_id: "b", response: "y" },
          ],
        },
      },
    });
    expect(two.json).toMatchObject({
      type: "error",
      id: 6,
      error: "invalid_argument",
      message: expect.stringMatching(/one response/),
    });
    // No run was started by any of them: the thread does not exist.
    expect((await call(api, `/threads/${threadId}/state`, { token: user.idToken })).status).toBe(404);
    const stream = await call(api, `/threads/${threadId}/stream/events`, {
      method: "POST",
      token: user.idToken,
      body: { channels: ["nonsense"] },
    });
    expect(stream.status).toBe(400);
    expect(stream.json).toMatchObject({ type: "error", error: "invalid_argument" });
  });

  it("another person's thread is refused on both routes, a since beyond the thread's events is refused", async () => {
    const thread = client.threads.stream({ assistantId: "quarry" });
    await thread.run.start({
      input: { messages: [{ type: "human", content: "How many orders were placed?" }] },
    });
    await thread.values;
    const bob = await signUp(stackEnv().urls.auth!);
    const stream = await call(api, `/threads/${thread.threadId}/stream/events`, {
      method: "POST",
      token: bob.idToken,
      body: { channels: ["values"] },
    });
    expect(stream.status).toBe(404);
    expect(stream.json).toMatchObject({ type: "error", message: expect.stringMatching(/not found/i) });
    const start = await call(api, `/threads/${thread.threadId}/commands`, {
      method: "POST",
      token: bob.idToken,
      body: {
        id: 7,
        method: "run.start",
        params: { assistant_id: "quarry", input: { messages: [{ type: "human", content: "Mine now?" }] } },
      },
    });
    expect(start.json).toMatchObject({ type: "error", id: 7 });
    const state = await call(api, `/threads/${thread.threadId}/state`, { token: user.idToken });
    const said = (state.json as { values: { messages: { content: string }[] } }).values.messages.map(
      (m) => m.content,
    );
    expect(said).not.toContain("Mine now?");
    const beyond = await call(api, `/threads/${thread.threadId}/stream/events`, {
      method: "POST",
      token: user.idToken,
      body: { channels: ["values"], since: 2 ** 52 },
    });
    expect(beyond.status).toBe(400);
    expect(beyond.json).toMatchObject({
      error: "invalid_argument",
      message: expect.stringMatching(/beyond/),
    });
    await thread.close();
  });
});

/**
 * Resumable streams through the functions emulator and the official SDK client: every event has an
 * id, the run's stream can be rejoined after a dropped connection with `Last-Event-ID` (from the
 * run's event log, then live), from this instance or another one, any number of times, and what a
 * client receives in pieces is exactly the run's whole stream — nothing lost, nothing repeated.
 * Runs are stopped at known points with the stand-in's holds, never by timing.
 */
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import type { Client } from "@langchain/langgraph-sdk";
import { signUp, type TestUser } from "../../support/auth-emulator";
import { call, sdkClient } from "../../support/api-client";
import { startFaultProxy, type FaultProxy } from "../../support/fault-proxy";
import { HOLD_URL_ENV, holdClient, type Holds } from "../../support/hold-control";
import { MIDWAY } from "../../support/api-script";
import { stackEnv } from "../../support/stack-env";
import { startInProcessApp, type InProcessApp } from "../../support/in-process-app";

type Ev = { id?: string; event: string; data: unknown };
const MODES = ["values", "updates", "messages-tuple", "custom"] as const;
const ask = (content: string) => ({ messages: [{ type: "human", content }] });

let api: string;
let alice: TestUser;
let client: Client;
/** The same function's app served from this process: another instance on the same Firestore. */
let other: Client;
let otherApp: InProcessApp;
let holds: Holds;
let proxy: FaultProxy;
/** The emulator's API reached through a proxy that can cut every open connection. */
let viaProxy: Client;

beforeAll(async () => {
  const stack = stackEnv();
  api = stack.urls.api!;
  alice = await signUp(stack.urls.auth!);
  client = sdkClient(api, alice);
  holds = holdClient(stack.env[HOLD_URL_ENV]);
  otherApp = await startInProcessApp();
  other = sdkClient(otherApp.url, alice);
  const target = new URL(api);
  proxy = await startFaultProxy(target.hostname, Number(target.port));
  viaProxy = sdkClient(`http://${proxy.address}${target.pathname}`, alice);
});

afterAll(async () => {
  await otherApp?.close();
  await proxy?.close();
});

/** Streams a new run until `stopAfter(events)` says so, then drops the connection. */
async function startAndDrop(
  threadId: string,
  question: string,
  stopAfter: (received: Ev[]) => boolean,
): Promise<{ runId: string; received: Ev[] }> {
  const ac = new AbortController();
  const received: Ev[] = [];
  let runId = "";
  try {
    for await (const ev of client.runs.stream(threadId, "quarry", {
      input: ask(question),
      streamMode: [...MODES],
      streamResumable: true,
      signal: ac.signal,
      onRunCreated: (m) => (runId = m.run_id),
    }) as AsyncIterable<Ev>) {
      received.push(ev);
      if (stopAfter(received)) ac.abort();
    }
  } catch {
    /* the aborted fetch */
  }
  return { runId, received };
}

/** Joins a run after `lastEventId` (from another instance if asked), until `stopAfter` or the end. */
async function rejoin(
  via: Client,
  threadId: string,
  runId: string,
  lastEventId: string | undefined,
  stopAfter: (received: Ev[]) => boolean = () => false,
): Promise<Ev[]> {
  const ac = new AbortController();
  const received: Ev[] = [];
  try {
    for await (const ev of via.runs.joinStream(threadId, runId, {
      ...(lastEventId ? { lastEventId } : {}),
      streamMode: [...MODES],
      signal: ac.signal,
    }) as AsyncIterable<Ev>) {
      received.push(ev);
      if (stopAfter(received)) ac.abort();
    }
  } catch (err) {
    if (!ac.signal.aborted) throw err;
  }
  return received;
}

const ids = (evs: Ev[]) => evs.map((e) => Number(e.id));
const names = (evs: Ev[]) => evs.map((e) => e.event);
const isToken = (e: Ev) =>
  e.event === "messages" &&
  (e.data as [unknown, { langgraph_node?: string }])[1]?.langgraph_node === "generator";
const isPhase = (phase: string) => (e: Ev) =>
  e.event === "custom" &&
  (e.data as { type?: string; phase?: string }).type === "phase" &&
  (e.data as { phase: string }).phase === phase;

/** Every event once, in order: ids 1, 2, 3 … without gaps. */
function expectWhole(evs: Ev[]) {
  expect(ids(evs)).toEqual(evs.map((_, i) => i + 1));
}

describe("rejoining a run's stream", () => {
  it("every event carries an id and the response names the run to rejoin (Location)", async () => {
    const thread = await client.threads.create();
    const res = await fetch(`${api}/threads/${thread.thread_id}/runs/stream`, {
      method: "POST",
      headers: { authorization: `Bearer ${alice.idToken}`, "content-type": "application/json" },
      body: JSON.stringify({
        assistant_id: "quarry",
        input: ask("How many orders were placed?"),
        stream_mode: ["custom"],
      }),
    });
    const text = await res.text();
    const runPath = res.headers.get("content-location")!;
    expect(runPath).toMatch(new RegExp(`^/threads/${thread.thread_id}/runs/[0-9a-f-]{36}$`));
    expect(res.headers.get("location")).toBe(`${runPath}/stream`);
    const blocks = text.split("\n\n").filter((b) => b.includes("event: "));
    expect(blocks.length).toBeGreaterThan(3);
    blocks.forEach((b, i) => expect(b.startsWith(`id: ${i + 1}\nevent: `)).toBe(true));
  });

  it.each([1, 5, 9])(
    "drops after %i events, rejoins with the last id: the pieces are the whole stream, once",
    async (n) => {
      const thread = await client.threads.create();
      const key = holds.newKey(`drop${n}`);
      // The answer waits at the hold, so the run is still going when the client comes back.
      const { runId, received } = await startAndDrop(
        thread.thread_id,
        `How many orders were placed? ${holds.answer(key)}`,
        (r) => r.length === n,
      );
      expect(received).toHaveLength(n);
      const rest = rejoin(client, thread.thread_id, runId, received.at(-1)!.id);
      await holds.release(key);
      const pieces = [...received, ...(await rest)];
      expectWhole(pieces);
      // After the end, a join with no id replays the whole run, the same events with the same ids.
      const whole = await rejoin(client, thread.thread_id, runId, undefined);
      expect(pieces).toEqual(whole);
      expect(pieces.some(isToken)).toBe(true);
      // …and the same events as a run nobody interrupted.
      const plain = await client.threads.create();
      const uninterrupted: Ev[] = [];
      for await (const ev of client.runs.stream(plain.thread_id, "quarry", {
        input: ask(`How many orders were placed? ${holds.answer(key)}`),
        streamMode: [...MODES],
      }) as AsyncIterable<Ev>)
        uninterrupted.push(ev);
      expect(names(pieces)).toEqual(names(uninterrupted));
    },
  );

  it("three reconnects in one answer, two of them through another instance", async () => {
    const thread = await client.threads.create();
    const [plan, answer] = [holds.newKey("plan"), holds.newKey("answer")];
    const question = `How many orders were placed? ${holds.planner(plan)} [pause-answer:${answer}]`;
    // 1: dropped early, while the planner's model call waits.
    const first = await startAndDrop(thread.thread_id, question, (r) => r.length === 2);
    const runId = first.runId;
    // 2: rejoined on another instance; dropped once the log has caught up with the planner phase.
    const second = await rejoin(other, thread.thread_id, runId, first.received.at(-1)!.id, (r) =>
      r.some(isPhase("planning")),
    );
    await holds.release(plan);
    // 3: rejoined here; dropped in the middle of the answer (it pauses after 3 chunks).
    const third = await rejoin(client, thread.thread_id, runId, second.at(-1)!.id, (r) => r.some(isToken));
    await holds.release(answer);
    // 4: rejoined on the other instance until the end.
    const fourth = await rejoin(other, thread.thread_id, runId, third.at(-1)!.id);
    const pieces = [...first.received, ...second, ...third, ...fourth];
    expectWhole(pieces);
    expect(pieces).toEqual(await rejoin(other, thread.thread_id, runId, undefined));
    const answerText = pieces
      .filter(isToken)
      .map((e) => String((e.data as [{ content: string }])[0].content))
      .join("");
    const state = await client.threads.getState(thread.thread_id);
    const last = (state.values as { messages: { type: string; content: string }[] }).messages.at(-1)!;
    expect(answerText).toBe(last.content);
  });

  it("the SDK rejoins by itself when the connection breaks (Location + Last-Event-ID)", async () => {
    const thread = await client.threads.create();
    const key = holds.newKey("cut");
    const received: Ev[] = [];
    let runId = "";
    for await (const ev of viaProxy.runs.stream(thread.thread_id, "quarry", {
      input: ask(`How many orders were placed? [pause-answer:${key}]`),
      streamMode: [...MODES],
      streamResumable: true,
      onRunCreated: (m) => (runId = m.run_id),
    }) as AsyncIterable<Ev>) {
      received.push(ev);
      // Mid-answer, with the answer paused: the network fails, then comes back.
      if (isToken(ev) && received.filter(isToken).length === 1) {
        await fetch(`${proxy.controlUrl}/fail?ms=0`, { method: "POST" });
        await holds.release(key);
      }
    }
    // The connection was cut mid-answer and the SDK opened a new one, which carried the rest.
    const status = (await (await fetch(`${proxy.controlUrl}/status`)).json()) as {
      connections: number;
      cut: number;
    };
    expect(status.cut).toBeGreaterThanOrEqual(1);
    expect(status.connections).toBeGreaterThan(status.cut);
    expectWhole(received);
    expect(received).toEqual(await rejoin(client, thread.thread_id, runId, undefined));
  });

  it("a cancel sent to another instance stops the run's model call midway", async () => {
    const thread = await client.threads.create();
    let runId = "";
    const events: Ev[] = [];
    // [midway]: the answer streams a few chunks, then holds until the run drops the model call —
    // so this stream ends only if the cancel, sent to the other instance, reaches it.
    for await (const ev of client.runs.stream(thread.thread_id, "quarry", {
      input: ask(`${MIDWAY} How many orders were placed?`),
      streamMode: ["messages-tuple"],
      onRunCreated: (m) => (runId = m.run_id),
    }) as AsyncIterable<Ev>) {
      events.push(ev);
      if (isToken(ev) && events.filter(isToken).length === 1)
        await other.runs.cancel(thread.thread_id, runId);
    }
    expect(events.some((e) => e.event === "error")).toBe(false);
    expect((await client.runs.get(thread.thread_id, runId)).status).not.toBe("running");
    const whole = await rejoin(client, thread.thread_id, runId, undefined);
    expect(whole.map((e) => e.event)).toEqual(events.map((e) => e.event));
  });

  it("a joined stream with cancel_on_disconnect cancels the run when it drops", async () => {
    const thread = await client.threads.create();
    const key = holds.newKey("cod");
    // Started resumable, so dropping the first stream does not cancel it…
    const { runId } = await startAndDrop(
      thread.thread_id,
      `How many orders were placed? ${holds.answer(key)}`,
      (r) => r.length === 1,
    );
    // …but a join asking for cancel_on_disconnect (served in this process, which sees the drop) does.
    const ac = new AbortController();
    try {
      for await (const ev of other.runs.joinStream(thread.thread_id, runId, {
        cancelOnDisconnect: true,
        signal: ac.signal,
      }) as AsyncIterable<Ev>) {
        if (ev.event === "metadata") ac.abort();
      }
    } catch {
      /* the aborted fetch */
    }
    await expect
      .poll(async () => (await client.runs.get(thread.thread_id, runId)).status, { timeout: 30_000 })
      .toBe("interrupted");
    await holds.release(key);
  });

  it("Last-Event-ID -1 (what the SDK's React hook sends to replay a run) replays the whole run", async () => {
    const thread = await client.threads.create();
    const { runId } = await startAndDrop(thread.thread_id, "How many orders were placed?", () => false);
    const whole = await rejoin(client, thread.thread_id, runId, undefined);
    const fromMinusOne = await rejoin(client, thread.thread_id, runId, "-1");
    expect(whole.length).toBeGreaterThan(3);
    expect(ids(fromMinusOne)).toEqual(ids(whole));
    expect(names(fromMinusOne)).toEqual(names(whole));
    // The hook's rejoin after a reload also names the thread head it knows (checkpoint_id).
    const head = (await client.threads.getState(thread.thread_id)).checkpoint;
    const withHead: { event: string }[] = [];
    for await (const ev of client.runs.joinStream(thread.thread_id, runId, {
      lastEventId: "-1",
      checkpointId: head.checkpoint_id ?? undefined,
    } as never) as AsyncIterable<{ event: string }>)
      withHead.push(ev);
    expect(withHead.map((e) => e.event)).toEqual(names(whole));
  });

  it("refuses what it cannot join, saying why", async () => {
    const thread = await client.threads.create();
    const { runId } = await startAndDrop(thread.thread_id, "How many orders were placed?", () => false);
    const get = (path: string, headers: Record<string, string> = {}, token = alice.idToken) =>
      call(api, path, { token, headers });
    const bad = await get(`/threads/${thread.thread_id}/runs/${runId}/stream`, { "last-event-id": "abc" });
    expect(bad.status).toBe(400);
    expect(String(bad.json.message)).toMatch(/Last-Event-ID "abc" is not an event id/);
    const unknown = await get(
      `/threads/${thread.thread_id}/runs/00000000-0000-4000-8000-000000000000/stream`,
    );
    expect(unknown.status).toBe(404);
    const bob = await signUp(stackEnv().urls.auth!);
    const foreign = await get(`/threads/${thread.thread_id}/runs/${runId}/stream`, {}, bob.idToken);
    expect(foreign.status).toBe(404);
    const mode = await get(`/threads/${thread.thread_id}/runs/${runId}/stream?stream_mode=tokens`);
    expect(mode.status).toBe(400);
    expect(String(mode.json.message)).toMatch(/unknown stream mode/);
    // A thread with no run going: its stream ends at once, empty.
    const idle = await get(`/threads/${thread.thread_id}/stream`);
    expect(idle.status).toBe(200);
    expect(idle.text.includes("event:")).toBe(false);
  });
});

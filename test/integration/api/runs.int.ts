import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { initializeApp, deleteApp, type App } from "firebase-admin/app";
import { getFirestore, Timestamp, type Firestore } from "firebase-admin/firestore";
import { Client } from "@langchain/langgraph-sdk";
import { signUp, type TestUser } from "../../support/auth-emulator";
import { call, sdkClient } from "../../support/api-client";
import { MIDWAY } from "../../support/api-script";
import { stackEnv } from "../../support/stack-env";
import { HOLD_URL_ENV, holdClient, type Holds } from "../../support/hold-control";

let api: string;
let alice: TestUser;
let client: Client;
let admin: App;
let db: Firestore;
let holds: Holds;

beforeAll(async () => {
  const stack = stackEnv();
  api = stack.urls.api!;
  alice = await signUp(stack.urls.auth!);
  client = sdkClient(api, alice);
  admin = initializeApp({ projectId: stack.env.GCLOUD_PROJECT }, `runs-${Date.now()}`);
  db = getFirestore(admin);
  holds = holdClient(stack.env[HOLD_URL_ENV]);
});

afterAll(async () => {
  await deleteApp(admin);
});

type Ev = { event: string; data: unknown };

async function collect(stream: AsyncIterable<Ev>): Promise<Ev[]> {
  const out: Ev[] = [];
  for await (const ev of stream) out.push(ev);
  return out;
}

const ask = (content: string) => ({ messages: [{ type: "human", content }] });
const MODES = ["values", "updates", "messages-tuple", "custom"] as const;

/** The first of `calls` to be answered, within a deadline that says what was awaited. */
async function firstAnswered<T>(calls: Promise<T>[], what: string, timeoutMs = 45_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([...calls, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** A token of the answer (the generator's stream), as opposed to a node's finished message. */
const isAnswerToken = (ev: Ev) =>
  ev.event === "messages" &&
  (ev.data as [unknown, { langgraph_node?: string }])[1]?.langgraph_node === "generator";

const leaseOf = async (threadId: string) => (await db.collection("threads").doc(threadId).get()).get("run");

function lastValues(events: Ev[]) {
  const values = events.filter((e) => e.event === "values").at(-1)?.data as {
    messages: Array<Record<string, unknown>>;
  };
  return values;
}

describe("a conversation through the official SDK client", () => {
  it("ends a stream with how its run ended, so the SDK asks nothing more; a rejoin ends the same way", async () => {
    // The SDK itself, recording every request it makes: after a stream that carries a Location and
    // ends without an end event, it asks for the run (isRunActive) before it gives up the stream.
    const sent: string[] = [];
    const watched = new Client({
      apiUrl: api,
      defaultHeaders: { authorization: `Bearer ${alice.idToken}` },
      callerOptions: { maxRetries: 0 },
      onRequest: (url, init) => (
        sent.push(`${init.method ?? "GET"} ${url.toString().slice(api.length)}`),
        init
      ),
    });
    const thread = await watched.threads.create();
    sent.length = 0;
    let runId: string | undefined;
    const events = await collect(
      watched.runs.stream(thread.thread_id, "quarry", {
        input: ask("How many orders were placed in total?"),
        streamMode: ["values", "messages-tuple", "custom"],
        onRunCreated: (m) => (runId = m.run_id),
      }) as AsyncIterable<Ev>,
    );
    expect(events.at(-1)).toMatchObject({ event: "end", data: { run_id: runId, status: "success" } });
    // In the run's log like every event: the next id.
    const idOf = (e: Ev | undefined) => Number((e as { id?: string } | undefined)?.id);
    expect(idOf(events.at(-1))).toBe(idOf(events.at(-2)) + 1);
    expect(events.filter((e) => e.event === "end")).toHaveLength(1);
    expect(sent).toEqual([`POST /threads/${thread.thread_id}/runs/stream`]);

    // Rejoined from the log after the run ended: the same last event.
    const rejoined = await collect(watched.runs.joinStream(thread.thread_id, runId!) as AsyncIterable<Ev>);
    expect(rejoined.at(-1)).toMatchObject({ event: "end", data: { run_id: runId, status: "success" } });
    expect(sent.map((r) => r.split("?")[0])).toEqual([
      `POST /threads/${thread.thread_id}/runs/stream`,
      `GET /threads/${thread.thread_id}/runs/${runId}/stream`,
    ]);
  });

  it("streams two turns with all four stream modes, then reads state and history", async () => {
    const thread = await client.threads.create();
    let created: { run_id: string; thread_id?: string } | undefined;
    const first = await collect(
      client.runs.stream(thread.thread_id, "quarry", {
        input: ask("How many orders were placed in total?"),
        streamMode: [...MODES],
        onRunCreated: (m) => (created = m),
      }) as AsyncIterable<Ev>,
    );
    expect(first[0].event).toBe("metadata");
    expect((first[0].data as { run_id: string }).run_id).toBe(created?.run_id);
    expect(created?.thread_id).toBe(thread.thread_id);
    const kinds = new Set(first.map((e) => e.event));
    for (const k of ["values", "updates", "messages", "custom"]) expect(kinds, k).toContain(k);
    expect(kinds).not.toContain("error");
    // messages-tuple: [message dict, metadata dict], plain JSON with a type and an id.
    const tuple = first.find((e) => e.event === "messages")!.data as [
      Record<string, unknown>,
      Record<string, unknown>,
    ];
    expect(typeof tuple[0].type).toBe("string");
    expect(typeof tuple[0].id).toBe("string");
    expect(tuple[1]).toEqual(expect.any(Object));
    // Custom events carry the phases and the SQL with its estimate.
    const custom = first.filter((e) => e.event === "custom").map((e) => e.data as { type: string });
    expect(custom.some((c) => c.type === "phase")).toBe(true);
    expect(custom.some((c) => c.type === "sql")).toBe(true);
    expect(custom.some((c) => c.type === "result")).toBe(true);
    const v1 = lastValues(first);
    expect(v1.messages[0]).toMatchObject({ type: "human", content: "How many orders were placed in total?" });
    expect(v1.messages.at(-1)?.type).toBe("ai");

    const second = await collect(
      client.runs.stream(thread.thread_id, "quarry", {
        input: ask("And how many customers?"),
        streamMode: [...MODES],
      }) as AsyncIterable<Ev>,
    );
    expect(second.some((e) => e.event === "error")).toBe(false);
    const v2 = lastValues(second);
    // The second turn sees the first: the history holds both questions.
    const humans = v2.messages.filter((m) => m.type === "human").map((m) => m.content);
    expect(humans).toEqual(["How many orders were placed in total?", "And how many customers?"]);

    const state = await client.threads.getState(thread.thread_id);
    expect((state.values as { messages: unknown[] }).messages.length).toBe(v2.messages.length);
    expect(state.checkpoint.checkpoint_id).toEqual(expect.any(String));
    const history = await client.threads.getHistory(thread.thread_id, { limit: 50 });
    expect(history.length).toBeGreaterThan(2);
    expect(history[0].checkpoint.checkpoint_id).toBe(state.checkpoint.checkpoint_id);
    // Each entry names its parent: the next older entry (one branch, newest first).
    for (let i = 0; i + 1 < history.length; i++) {
      expect(history[i].parent_checkpoint?.checkpoint_id).toBe(history[i + 1].checkpoint.checkpoint_id);
    }

    const meta = await client.threads.get(thread.thread_id);
    expect(meta.status).toBe("idle");
    expect((meta.metadata as Record<string, unknown>).title).toBe("How many orders were placed in total?");
    const doc = (await db.collection("threads").doc(thread.thread_id).get()).data()!;
    expect(doc.run).toBeNull();
    expect(doc.usage.runs).toBe(2);
    expect(doc.usage.modelCalls).toBeGreaterThan(0);
  });

  it("cancels a run through the cancel endpoint; the lease is released", async () => {
    const thread = await client.threads.create();
    let runId: string | undefined;
    let cancelled = false;
    const events: Ev[] = [];
    const stream = client.runs.stream(thread.thread_id, "quarry", {
      input: ask(`${MIDWAY} Tell me about the products table`),
      streamMode: ["messages-tuple", "custom"],
      onRunCreated: (m) => (runId = m.run_id),
    }) as AsyncIterable<Ev>;
    for await (const ev of stream) {
      events.push(ev);
      if (isAnswerToken(ev) && !cancelled) {
        // The answer has started and stops midway until the run drops its model call: the run is
        // certainly still running when the cancel lands.
        await client.runs.cancel(thread.thread_id, runId!);
        cancelled = true;
      }
    }
    expect(cancelled).toBe(true);
    // The stream ended by itself (the server stopped the run; the client never let go), without an
    // error; the lease is released before the stream ends.
    expect(events.map((e) => e.event)).not.toContain("error");
    expect(await leaseOf(thread.thread_id)).toBeNull();
    // What was streamed of the answer before the run stopped is kept in the thread, marked stopped.
    const shown = events
      .filter(isAnswerToken)
      .map((e) => String((e.data as [{ content: string }])[0].content))
      .join("");
    const stopped = (await client.threads.getState(thread.thread_id)).values as {
      messages: { type: string; content: string; response_metadata?: Record<string, unknown> }[];
    };
    expect(stopped.messages.at(-1)).toMatchObject({
      type: "ai",
      content: shown,
      response_metadata: { quarry_stopped: true },
    });
    // How it ended is on the thread's document, so GET of the run answers from it alone.
    const threadDoc = (await db.collection("threads").doc(thread.thread_id).get()).data()!;
    expect(threadDoc.lastRunEnd).toEqual({ runId, outcome: "cancelled", strategy: "reject" });
    expect((await client.runs.get(thread.thread_id, runId!)).status).toBe("interrupted");
    // A new run on the same thread is accepted now, and the stopped run's unfinished answer is not
    // resumed by it: the turn runs from ingress, with one answer.
    let nextRunId: string | undefined;
    const again = await collect(
      client.runs.stream(thread.thread_id, "quarry", {
        input: ask("hello"),
        streamMode: ["values", "updates"],
        onRunCreated: (m) => (nextRunId = m.run_id),
      }) as AsyncIterable<Ev>,
    );
    expect((await client.runs.get(thread.thread_id, nextRunId!)).status).toBe("success");
    // The earlier run is no longer the last: its event log still says how it ended.
    expect((await client.runs.get(thread.thread_id, runId!)).status).toBe("interrupted");
    expect((await client.runs.list(thread.thread_id)).map((r) => [r.run_id, r.status])).toEqual([
      [nextRunId, "success"],
    ]);
    expect(again.some((e) => e.event === "error")).toBe(false);
    const nodes = again
      .filter((e) => e.event === "updates")
      .flatMap((e) => Object.keys(e.data as Record<string, unknown>));
    expect(nodes[0]).toBe("ingress");
    expect(nodes.filter((n) => n === "generator")).toHaveLength(1);
    const messages = lastValues(again).messages;
    const lastHuman = messages.map((m) => m.type).lastIndexOf("human");
    const afterHello = messages.slice(lastHuman + 1);
    expect(afterHello.map((m) => m.type)).toEqual(["ai"]);
    expect(String(afterHello[0].content)).not.toMatch(/stops midway/);
  });

  // A client disconnecting mid-stream: disconnect.int.ts (the emulator never tells a function that
  // its client left, so that test serves the function's app from its own process).

  it("deletes the thread, its checkpoints and its metadata", async () => {
    const thread = await client.threads.create();
    await collect(
      client.runs.stream(thread.thread_id, "quarry", { input: ask("hello") }) as AsyncIterable<Ev>,
    );
    // The checkpointer keeps each thread under checkpoints/{threadId}/(checkpoints|blobs).
    const root = db.collection("checkpoints").doc(thread.thread_id);
    const before = await root.listCollections();
    expect(before.map((c) => c.id).sort()).toEqual(["blobs", "checkpoints"]);
    await client.threads.delete(thread.thread_id);
    const res = await call(api, `/threads/${thread.thread_id}`, { token: alice.idToken });
    expect(res.status).toBe(404);
    expect((await db.collection("threads").doc(thread.thread_id).get()).exists).toBe(false);
    expect(await root.listCollections()).toEqual([]);
  });
  it("deleting a thread mid-run stops the run and leaves none of its checkpoints behind", async () => {
    const thread = await client.threads.create();
    const root = db.collection("checkpoints").doc(thread.thread_id);
    const key = holds.newKey("delete");
    let deleted: number | undefined;
    const events: string[] = [];
    try {
      for await (const ev of client.runs.stream(thread.thread_id, "quarry", {
        input: ask(`${holds.answer(key)} How many orders were placed in total?`),
        streamMode: ["messages-tuple"],
      }) as AsyncIterable<Ev>) {
        events.push(ev.event);
        if (ev.event === "metadata" && deleted === undefined) {
          // Held inside its generator: the planner's, executor's and verifier's steps are held back
          // in memory, unwritten. The delete must outlast them.
          await holds.waitHeld(key);
          deleted = (
            await call(api, `/threads/${thread.thread_id}`, { method: "DELETE", token: alice.idToken })
          ).status;
        }
      }
    } finally {
      await holds.release(key);
    }
    expect(deleted).toBe(204);
    expect(events).not.toContain("error");
    // No grace period needed: the stream ends only after the run has written its held-back steps
    // and released its lease (a write it could not finish would be an error event), and the delete
    // answered only after that release. Nothing of the run is left to land.
    expect(await root.listCollections()).toEqual([]);
    expect((await db.collection("threads").doc(thread.thread_id).get()).exists).toBe(false);
    const again = await call(api, `/threads/${thread.thread_id}/runs/stream`, {
      method: "POST",
      token: alice.idToken,
      body: { assistant_id: "quarry", input: ask("hello") },
    });
    expect(again.status).toBe(404);
  });
});

describe("run control", () => {
  it("two runs on one thread at once: exactly one runs, the other gets 409", async () => {
    const thread = await client.threads.create();
    const key = holds.newKey("busy");
    const body = { assistant_id: "quarry", input: ask("hello"), stream_mode: ["values"] };
    let second: Awaited<ReturnType<typeof call>> | undefined;
    const firstEvents: string[] = [];
    try {
      for await (const ev of client.runs.stream(thread.thread_id, "quarry", {
        input: ask(`${holds.planner(key)} How many orders?`),
        streamMode: ["messages-tuple"],
      }) as AsyncIterable<Ev>) {
        firstEvents.push(ev.event);
        if (ev.event === "metadata" && !second) {
          // While the first run is running (held at its planner's model call, its lease taken), a
          // second one on the same thread is refused; then the first one goes on.
          await holds.waitHeld(key);
          second = await call(api, `/threads/${thread.thread_id}/runs/stream`, {
            method: "POST",
            token: alice.idToken,
            body,
          });
          await holds.release(key);
        }
      }
    } finally {
      await holds.release(key);
    }
    expect(firstEvents.length).toBeGreaterThan(1);
    expect(firstEvents).toContain("messages");
    expect(firstEvents).not.toContain("error");
    expect(second?.status).toBe(409);
    expect(second?.json.error).toBe("conflict:run");
    expect(second?.json.message).toMatch(/already has a run in progress/);
  });

  it("two runs sent at the same instant on each of 4 threads: exactly one of each pair runs", async () => {
    const threads = await Promise.all(Array.from({ length: 4 }, () => client.threads.create()));
    const send = (threadId: string, q: string) =>
      call(api, `/threads/${threadId}/runs/stream`, {
        method: "POST",
        token: alice.idToken,
        body: { assistant_id: "quarry", input: ask(q), stream_mode: ["values"] },
      });
    // Both runs of a pair carry the same hold: whichever takes the lease first is held at its
    // planner's model call, lease taken, until the other one has been answered. However the two
    // requests are scheduled, the other one can only meet a taken lease: no timing involved.
    const pairs = await Promise.all(
      threads.map(async (t, i) => {
        const key = holds.newKey(`pair${i}`);
        const A = `${holds.planner(key)} hello from A`;
        const B = `${holds.planner(key)} hello from B`;
        const [a, b] = [send(t.thread_id, A), send(t.thread_id, B)];
        for (const r of [a, b]) r.catch(() => {}); // awaited below; a failure there is reported
        try {
          await holds.waitHeld(key);
          const first = await firstAnswered([a, b], `thread ${i}: the run not holding the lease`);
          expect(first.status, first.text).toBe(409);
          // Only the winner has reached the model (its first planner call, still held).
          expect((await holds.status(key)).arrived).toBe(1);
        } finally {
          await holds.release(key);
        }
        return { A, B, a: await a, b: await b };
      }),
    );
    for (const [i, { A, B, a, b }] of pairs.entries()) {
      expect([a.status, b.status].sort()).toEqual([200, 409]);
      const [winner, loser] = a.status === 200 ? [a, b] : [b, a];
      expect(loser.json.error).toBe("conflict:run");
      expect(winner.text).toContain("event: values");
      expect(winner.text).not.toContain("event: error");
      // The loser left nothing behind: the thread holds the winner's question only.
      const state = await client.threads.getState(threads[i].thread_id);
      const humans = (state.values as { messages: Array<{ type: string; content: unknown }> }).messages
        .filter((m) => m.type === "human")
        .map((m) => m.content);
      expect(humans).toEqual([a.status === 200 ? A : B]);
    }
    // Eight cold emulator workers on a loaded machine can take a while; the waits above are bounded
    // (45 s each, with messages), so give them room to report before the test's own timeout.
  }, 150_000);

  it("the question is stored, with the lease, before the model has answered", async () => {
    const thread = await client.threads.create();
    const key = holds.newKey("stored");
    const question = `${holds.planner(key)} How many orders were placed in total?`;
    const events: string[] = [];
    let storedThen: Array<{ type: string; content: unknown }> | undefined;
    let leaseThen: unknown;
    let sourceThen: string | undefined;
    try {
      for await (const ev of client.runs.stream(thread.thread_id, "quarry", {
        input: ask(question),
        streamMode: ["messages-tuple", "custom"],
      }) as AsyncIterable<Ev>) {
        events.push(ev.event);
        if (ev.event === "metadata") {
          // The planner's model call is held until released: look at what is stored meanwhile.
          await holds.waitHeld(key);
          const state = await client.threads.getState(thread.thread_id);
          storedThen = (state.values as { messages: typeof storedThen }).messages;
          // Only the run's first checkpoint is stored yet (later steps are held back until the answer).
          sourceThen = (state.metadata as { source?: string } | undefined)?.source;
          leaseThen = (await db.collection("threads").doc(thread.thread_id).get()).get("run.runId");
          await holds.release(key);
        }
      }
    } finally {
      await holds.release(key);
    }
    expect(events[0]).toBe("metadata");
    expect(storedThen).toEqual([expect.objectContaining({ type: "human", content: question })]);
    expect(leaseThen).toEqual(expect.any(String));
    expect(sourceThen).toBe("input");
    expect(events).not.toContain("error");
  });

  it("threads.search labels a new thread by its question while the first answer runs", async () => {
    const thread = await client.threads.create();
    const key = holds.newKey("label");
    const question = `${holds.planner(key)} How many customers are there?`;
    const id = `question-${key}`;
    let listed: { messages?: Array<{ type: string; id?: string; content: unknown }> } | null | undefined;
    let statusThen: string | undefined;
    try {
      for await (const ev of client.runs.stream(thread.thread_id, "quarry", {
        input: { messages: [{ type: "human", content: question, id }] },
        streamMode: ["messages-tuple"],
      }) as AsyncIterable<Ev>) {
        if (ev.event === "metadata") {
          // The first answer is held before its model call: the list is what agent-chat-ui shows now.
          await holds.waitHeld(key);
          const found = (await client.threads.search({ limit: 50 })).find(
            (t) => t.thread_id === thread.thread_id,
          );
          listed = found?.values as typeof listed;
          statusThen = found?.status;
          await holds.release(key);
        }
      }
    } finally {
      await holds.release(key);
    }
    expect(statusThen).toBe("busy");
    expect(listed?.messages?.[0]).toEqual({ type: "human", id, content: question });
    // At release the values are the conversation's, as before: the question, then the answer.
    const after = await client.threads.get(thread.thread_id);
    const messages = (after.values as { messages: Array<{ type: string; id?: string }> }).messages;
    expect(messages[0]).toMatchObject({ type: "human", id });
    expect(messages.at(-1)?.type).toBe("ai");
  });

  it("a run given an earlier checkpoint continues from there, not from the latest", async () => {
    const thread = await client.threads.create();
    const turn = (q: string, checkpointId?: string) =>
      collect(
        client.runs.stream(thread.thread_id, "quarry", {
          input: ask(q),
          streamMode: ["values"],
          ...(checkpointId ? { checkpointId } : {}),
        }) as AsyncIterable<Ev>,
      );
    await turn("How many orders were placed in total?");
    const afterFirst = (await client.threads.getState(thread.thread_id)).checkpoint.checkpoint_id!;
    await turn("And how many customers?");
    const forked = await turn("hello", afterFirst);
    expect(forked.some((e) => e.event === "error")).toBe(false);
    const humans = lastValues(forked)
      .messages.filter((m) => m.type === "human")
      .map((m) => m.content);
    expect(humans).toEqual(["How many orders were placed in total?", "hello"]);
  });

  it("20 different threads at once all succeed", async () => {
    const threads = await Promise.all(Array.from({ length: 20 }, () => client.threads.create()));
    const results = await Promise.all(
      threads.map((t) =>
        collect(
          client.runs.stream(t.thread_id, "quarry", {
            input: ask("hello"),
            streamMode: ["values"],
          }) as AsyncIterable<Ev>,
        ),
      ),
    );
    for (const events of results) {
      expect(events.some((e) => e.event === "error")).toBe(false);
      expect(lastValues(events).messages.at(-1)?.type).toBe("ai");
    }
  });

  it("a lease left by a killed run blocks until it expires, then the thread recovers", async () => {
    const thread = await client.threads.create();
    const doc = db.collection("threads").doc(thread.thread_id);
    // What a crashed instance leaves behind: a lease nobody renews. It expires long after this test,
    // so the request below meets it unexpired however slowly it is served.
    await doc.update({
      status: "busy",
      run: {
        runId: "00000000-0000-4000-8000-000000000000",
        expiresAt: Timestamp.fromMillis(Date.now() + 10 * 60_000),
        cancel: false,
      },
    });
    const body = { assistant_id: "quarry", input: ask("hello"), stream_mode: ["values"] };
    const blocked = await call(api, `/threads/${thread.thread_id}/runs/stream`, {
      method: "POST",
      token: alice.idToken,
      body,
    });
    expect(blocked.status).toBe(409);
    expect(blocked.json.error).toBe("conflict:run");
    // Time passes and the lease runs out: the server compares its expiry with the clock, so moving
    // the expiry into the past is what waiting for it does, without the wait. Nothing else changes.
    await doc.update({ "run.expiresAt": Timestamp.fromMillis(Date.now() - 1) });
    const ok = await call(api, `/threads/${thread.thread_id}/runs/stream`, {
      method: "POST",
      token: alice.idToken,
      body,
    });
    expect(ok.status).toBe(200);
    expect(ok.text).toContain("event: values");
    expect((await client.threads.get(thread.thread_id)).status).toBe("idle");
  });

  it("runs.join and a joined stream answer only once the run has released the thread, so the next run is accepted", async () => {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "quarry", { input: ask("hello") });
    await client.runs.join(thread.thread_id, run.run_id);
    // What a run looks like between its log's end marker and its release: the end marker is
    // written, the thread still held by it. The hold runs out in 4 s and nothing renews it.
    const doc = db.collection("threads").doc(thread.thread_id);
    const held = async () =>
      doc.update({
        status: "busy",
        run: { runId: run.run_id, expiresAt: Timestamp.fromMillis(Date.now() + 4_000), cancel: false },
      });
    const body = { assistant_id: "quarry", input: ask("hello again"), stream_mode: ["values"] };
    const next = () =>
      call(api, `/threads/${thread.thread_id}/runs/stream`, { method: "POST", token: alice.idToken, body });
    await held();
    // Answered before the thread is free, the next run would meet the hold (409).
    await client.runs.join(thread.thread_id, run.run_id);
    expect((await next()).status).toBe(200);
    // The same for the run's joined stream (the SDK's joinStream), held again.
    await held();
    await collect(client.runs.joinStream(thread.thread_id, run.run_id) as AsyncIterable<Ev>);
    expect((await next()).status).toBe(200);
  });

  it("a run ends in one commit: its log's end marker, the thread's release and the charge of what it spent", async () => {
    const thread = await client.threads.create();
    const events = await collect(
      client.runs.stream(thread.thread_id, "quarry", {
        input: ask("How many orders were placed in total?"),
        streamMode: [...MODES],
      }) as AsyncIterable<Ev>,
    );
    expect(events.map((e) => e.event)).not.toContain("error");
    const runId = (events.find((e) => e.event === "metadata")?.data as { run_id: string }).run_id;
    const threadSnap = await db.collection("threads").doc(thread.thread_id).get();
    expect(threadSnap.get("run")).toBeNull();
    expect(threadSnap.get("lastRunEnd")).toMatchObject({ runId, outcome: "success" });
    const tokens = threadSnap.get("usage.totalTokens") as number;
    expect(tokens).toBeGreaterThan(0);
    const log = await db.collection(`threads/${thread.thread_id}/runs/${runId}/log`).get();
    const end = log.docs.find((d) => d.get("end"));
    expect(end?.get("end")).toEqual({ status: "success" });
    const day = new Date(threadSnap.updateTime!.toMillis()).toISOString().slice(0, 10);
    const usage = await db.collection("usage").doc(`${alice.uid}_${day}`).get();
    expect(usage.get("tokens")).toBeGreaterThanOrEqual(tokens);
    const mark = await db.doc(`threads/${thread.thread_id}/runs/${runId}/ended/a0`).get();
    expect(mark.exists).toBe(true); // the release recorded: no later commit writes it again
    // One commit: Firestore gives every write of a commit the commit's time.
    expect(end!.updateTime.isEqual(threadSnap.updateTime!)).toBe(true);
    expect(usage.updateTime!.isEqual(threadSnap.updateTime!)).toBe(true);
    expect(mark.updateTime!.isEqual(threadSnap.updateTime!)).toBe(true);
  });

  it("a model error becomes an error event; the message is kept and the next turn works", async () => {
    const thread = await client.threads.create();
    const events = await collect(
      client.runs.stream(thread.thread_id, "quarry", {
        input: ask("[model-error] hi"),
        streamMode: ["values"],
      }) as AsyncIterable<Ev>,
    );
    const err = events.find((e) => e.event === "error");
    expect(err).toBeDefined();
    expect(err!.data).toMatchObject({ error: expect.any(String), message: expect.any(String) });
    expect((await client.threads.get(thread.thread_id)).status).toBe("error");
    const state = await client.threads.getState(thread.thread_id);
    expect((state.values as { messages: Array<{ content: unknown }> }).messages[0].content).toBe(
      "[model-error] hi",
    );
    const next = await collect(
      client.runs.stream(thread.thread_id, "quarry", {
        input: ask("hello again"),
        streamMode: ["values"],
      }) as AsyncIterable<Ev>,
    );
    expect(next.some((e) => e.event === "error")).toBe(false);
  });
});

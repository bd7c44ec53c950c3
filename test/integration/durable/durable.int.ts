/**
 * Durable runs (docs/runs.md, "What survives what"), through firebase-tools' functions and tasks
 * emulators with the SDK client: the function process serving a run is stopped (SIGKILL by PID)
 * while the run is held at a known point, and the run is continued by its watchdog task on another
 * process from its last stored step — the stand-ins show what was done again and what was not.
 */
import { readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@langchain/langgraph-sdk";
import { signUp, type TestUser } from "../../support/auth-emulator";
import { trustCertificate } from "../../support/vertex-standin-cert";
import {
  BILLED,
  answerLogged,
  loggedEvents,
  killRunHolder,
  startDurableStack,
  waitFor,
  type DurableStack,
} from "../../support/durable-stack";

let stack: DurableStack;
let ann: TestUser;
let client: Client;

type Ev = { event: string; data: unknown; id?: string };
const ask = (content: string) => ({ messages: [{ type: "human", content }] });
const messagesOf = (values: unknown) =>
  ((values as { messages?: { type: string; content: unknown }[] }).messages ?? []).map((m) => ({
    type: m.type,
    content: typeof m.content === "string" ? m.content : JSON.stringify(m.content),
  }));

beforeAll(async () => {
  stack = await startDurableStack();
  ann = await signUp(stack.authUrl);
  client = new Client({ apiUrl: stack.api, defaultHeaders: { Authorization: `Bearer ${ann.idToken}` } });
}, 180_000);

afterAll(async () => {
  await stack?.stop();
});

/** Starts a background run (nobody streams it) and returns its ids. */
async function background(question: string) {
  const thread = await client.threads.create();
  const run = await client.runs.create(thread.thread_id, "quarry", { input: ask(question) });
  return { threadId: thread.thread_id, runId: run.run_id };
}

/** The run's lease as the thread document holds it. */
const leaseOf = async (threadId: string) =>
  (await stack.db.collection("threads").doc(threadId).get()).get("run") as
    { attempt?: number; runId: string } | null | undefined;

/** The id of the thread's last run. */
const leaseRunId = async (threadId: string) =>
  (await stack.db.collection("threads").doc(threadId).get()).get("lastRunId") as string | undefined;

/** Joins the run from its start and returns every event (the SDK's join, as a rejoining client). */
async function joinAll(threadId: string, runId: string): Promise<Ev[]> {
  const out: Ev[] = [];
  for await (const ev of client.runs.joinStream(threadId, runId, { lastEventId: "0" }) as AsyncIterable<Ev>)
    out.push(ev);
  return out;
}

describe("a run whose function process stops is finished by another, once", { timeout: 150_000 }, () => {
  it("cut in the planner's second model call: the planner is asked again, the steps before it are not", async () => {
    const key = stack.holds.newKey("replan");
    const marker = `durable-plan-${key}`;
    const { threadId, runId } = await background(
      `How many orders? [sql:bad-column] [hold-replan:${key}] ${marker}`,
    );
    await stack.holds.waitHeld(key);
    const killed = await killRunHolder(stack, threadId, "backgroundRun");
    expect(killed.attempt).toBe(0);
    // The watchdog takes the run over on a runWatchdog process and asks the planner again.
    await stack.holds.waitHeld(key, { count: 2, timeoutMs: 60_000 });
    expect((await leaseOf(threadId))?.attempt).toBe(1);
    await stack.holds.release(key);
    const events = await joinAll(threadId, runId);
    expect(events.at(-1)?.event, JSON.stringify(events.map((e) => e.event))).not.toBe("error");
    const state = await client.threads.getState(threadId);
    const said = messagesOf(state.values);
    expect(said.filter((m) => m.type === "human")).toHaveLength(1);
    expect(
      said.filter((m) => m.type === "ai" && m.content.trim() && !m.content.startsWith("[")),
    ).not.toHaveLength(0);
    // The model calls of this question: planner (bad query), planner again (cut), planner again
    // (continued), the answer — the first planner call and the failed query were not redone.
    const calls = await stack.holds.calls(marker);
    expect(calls, JSON.stringify(calls)).toHaveLength(4);
    const dryRuns = stack.bq.requests.filter(
      (r) =>
        r.method === "POST" &&
        JSON.stringify(r.body ?? "").includes("nme") &&
        JSON.stringify(r.body).includes("dryRun"),
    );
    expect(dryRuns).toHaveLength(1);
    expect(await leaseOf(threadId)).toBeNull();
    const thread = (await stack.db.collection("threads").doc(threadId).get()).data()!;
    expect(thread.status).toBe("idle");
    expect(thread.lastRunEnd).toMatchObject({ runId, outcome: "success" });
  });

  it("cut while BigQuery runs the query: the continuation attaches to the same job, billed and audited once", async () => {
    const marker = `durable-job-${Date.now()}`;
    const inserts = () =>
      stack.bq
        .inserts()
        .filter(
          (b) => !b.configuration?.dryRun && String(b.configuration?.query?.query).includes("held job"),
        );
    const before = inserts().length;
    const { threadId, runId } = await background(`How many orders? [sql:held-job] ${marker}`);
    await waitFor(() => inserts().length === before + 1, "the query job to be inserted");
    // Stopped once the step that runs it has started in the log (its plan is then stored as the
    // run's progress, which rides with the same log write): the job runs meanwhile.
    await waitFor(
      async () =>
        (await loggedEvents(stack, threadId, runId)).some(
          (e) => e.event === "custom" && (e.data as { type?: string }).type === "sql",
        ),
      "the query's sql event in the log",
    );
    await killRunHolder(stack, threadId, "backgroundRun");
    // The continuation inserts the same job id, is told it exists, and takes that job.
    await waitFor(() => inserts().length === before + 2, "the continuation to insert the job again", 60_000);
    const [first, second] = inserts().slice(before);
    expect(second.jobReference.jobId).toBe(first.jobReference.jobId);
    expect(first.jobReference.jobId).toContain(runId.replace(/[^A-Za-z0-9_-]/g, "_"));
    stack.releaseJob();
    const events = await joinAll(threadId, runId);
    expect(events.at(-1)?.event, JSON.stringify(events.map((e) => e.event))).not.toBe("error");
    const thread = (await stack.db.collection("threads").doc(threadId).get()).data()!;
    expect(thread.lastRunEnd).toMatchObject({ runId, outcome: "success" });
    expect(thread.usage.bytesBilled).toBe(BILLED);
    const audited = await stack.db.collection("audit").where("runId", "==", runId).get();
    expect(audited.docs.map((d) => d.get("sql"))).toEqual([expect.stringContaining("held job")]);
    expect(audited.docs[0].id).toBe(first.jobReference.jobId);
    const usage = await stack.db.collection("usage").where("uid", "==", ann.uid).get();
    expect(usage.docs.reduce((n, d) => n + Number(d.get("bytes") ?? 0), 0)).toBe(BILLED);
  });

  it("cut in the generator mid-stream: the SDK's v1 stream rejoins by itself and shows the whole answer once", async () => {
    const key = stack.holds.newKey("pause-v1");
    const marker = `durable-v1-${key}`;
    const thread = await client.threads.create();
    const events: Ev[] = [];
    let killedAt = -1;
    // Through the front, which closes the stopped instance's connections as Google's does.
    const viaFront = new Client({
      apiUrl: stack.front,
      defaultHeaders: { Authorization: `Bearer ${ann.idToken}` },
    });
    for await (const ev of viaFront.runs.stream(thread.thread_id, "quarry", {
      input: ask(`How many orders? [pause-answer:${key}] ${marker}`),
      streamMode: ["messages-tuple", "values", "custom"],
      streamResumable: true,
    }) as AsyncIterable<Ev>) {
      events.push(ev);
      if (killedAt < 0 && ev.event === "messages") {
        const [, meta] = ev.data as [unknown, { langgraph_node?: string }];
        if (meta?.langgraph_node !== "generator") continue;
        await stack.holds.waitHeld(key);
        const runId = (await leaseOf(thread.thread_id))!.runId;
        await waitFor(
          async () => answerLogged(await loggedEvents(stack, thread.thread_id, runId)),
          "the answer's first tokens in the log",
        );
        killedAt = events.length;
        await killRunHolder(stack, thread.thread_id, "api");
        await stack.cutClients();
        void stack.holds.waitHeld(key, { count: 2, timeoutMs: 60_000 }).then(() => stack.holds.release(key));
      }
    }
    expect(killedAt).toBeGreaterThan(0);
    const ids = events.filter((e) => e.id !== undefined).map((e) => Number(e.id));
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    expect(events.at(-1)?.event).not.toBe("error");
    // After the hand-over: the continuation's metadata (attempt 2), then the state as stored.
    const after = events.slice(killedAt);
    expect(after.find((e) => e.event === "metadata")?.data).toMatchObject({ attempt: 2 });
    const state = await client.threads.getState(thread.thread_id);
    const said = messagesOf(state.values);
    const answer = said.at(-1)!;
    expect(answer.type).toBe("ai");
    expect(said.filter((m) => m.type === "ai" && m.content === answer.content)).toHaveLength(1);
    // The last values the client saw are the thread's: the answer once, no half-written one.
    const lastValues = events.filter((e) => e.event === "values").at(-1)!.data;
    expect(messagesOf(lastValues)).toEqual(said);
    // Every event the log holds reached the client once, in order; the client's other events are
    // the ones the stopped process sent after its last log write (never stored, never repeated).
    const rejoined = (await joinAll(thread.thread_id, String(await leaseRunId(thread.thread_id)))).map((e) =>
      Number(e.id),
    );
    expect(ids.filter((id) => rejoined.includes(id))).toEqual(rejoined);
    const unstored = ids.filter((id) => !rejoined.includes(id));
    const lastStored = Math.max(...rejoined.filter((id) => id < 2 ** 24));
    expect(unstored.every((id) => id > lastStored && id < 2 ** 24)).toBe(true);
  });

  it("cut in the generator mid-stream: the SDK's v2 ThreadStream ends with the whole answer once", async () => {
    const key = stack.holds.newKey("pause-v2");
    const thread = client.threads.stream({ assistantId: "quarry" });
    const finished: string[] = [];
    const cut: string[] = [];
    const watching = (async () => {
      for await (const ev of (await thread.subscribe({ channels: ["messages"] })) as AsyncIterable<{
        params: { data: { event?: string; id?: string; content?: { text?: string } } };
      }>) {
        const d = ev.params.data;
        if (d.event === "content-block-finish" && d.content?.text) finished.push(d.content.text);
        if (d.event === "error") cut.push("error");
      }
    })();
    await thread.run.start({ input: ask(`How many orders? [pause-answer:${key}]`) });
    await stack.holds.waitHeld(key);
    const runId = (await leaseOf(thread.threadId))!.runId;
    await waitFor(
      async () => answerLogged(await loggedEvents(stack, thread.threadId, runId)),
      "the answer's first tokens in the log",
    );
    await killRunHolder(stack, thread.threadId, ["api", "backgroundRun"]);
    await stack.holds.waitHeld(key, { count: 2, timeoutMs: 60_000 });
    await stack.holds.release(key);
    const values = (await thread.values) as { messages: { type: string; content: string }[] };
    const answer = values.messages.at(-1)!;
    expect(answer.type).toBe("ai");
    await thread.close();
    await watching.catch(() => {});
    expect(finished.filter((t) => t === answer.content)).toHaveLength(1);
    expect(cut).toHaveLength(1);
  });

  it("a streamed run whose client left for good is finished: the answer is in the thread's state", async () => {
    const key = stack.holds.newKey("gone");
    const thread = await client.threads.create();
    const ac = new AbortController();
    const stream = client.runs.stream(thread.thread_id, "quarry", {
      input: ask(`How many orders? ${stack.holds.planner(key)}`),
      streamMode: ["values"],
      streamResumable: true,
      signal: ac.signal,
    }) as AsyncIterable<Ev>;
    for await (const _ of stream) break; // the first event, then the client is gone
    ac.abort();
    await stack.holds.waitHeld(key);
    await killRunHolder(stack, thread.thread_id, "api");
    await stack.holds.release(key);
    await waitFor(async () => (await leaseOf(thread.thread_id)) === null, "the run to be finished", 90_000);
    const said = messagesOf((await client.threads.getState(thread.thread_id)).values);
    expect(said.filter((m) => m.type === "human")).toHaveLength(1);
    expect(said.at(-1)?.type).toBe("ai");
    expect(said.at(-1)?.content).toMatch(/orders/i);
  });

  it("a run stopped more often than the limit ends with the worded error, the thread as at its last checkpoint", async () => {
    const key = stack.holds.newKey("limit");
    const question = `How many orders? ${stack.holds.planner(key)}`;
    const { threadId, runId } = await background(question);
    // Stopped at the planner's call as started, then in each of its two continuations.
    for (const [n, target] of [
      [1, "backgroundRun"],
      [2, "runWatchdog"],
      [3, "runWatchdog"],
    ] as const) {
      await stack.holds.waitHeld(key, { count: n, timeoutMs: 60_000 });
      const killed = await killRunHolder(stack, threadId, target);
      expect(killed.attempt).toBe(n - 1);
    }
    const events = await joinAll(threadId, runId);
    const error = events.find((e) => e.event === "error");
    expect(error?.data).toMatchObject({
      error: "unavailable:run",
      message: expect.stringMatching(/could not be finished.*stopped 3 times.*ask it again/s),
    });
    await stack.holds.release(key);
    const thread = (await stack.db.collection("threads").doc(threadId).get()).data()!;
    expect(thread.status).toBe("error");
    expect(thread.run).toBeNull();
    expect(messagesOf((await client.threads.getState(threadId)).values)).toEqual([
      { type: "human", content: question },
    ]);
    const progress = await stack.db
      .collectionGroup("checkpoints")
      .where("checkpoint_ns", "==", "quarry~progress")
      .get();
    expect(progress.docs.filter((d) => d.get("thread_id") === threadId)).toHaveLength(0);
    expect((await client.runs.get(threadId, runId)).status).toBe("error");
  });

  it("a streamed run whose client leaves is handed to a task at its next boundary: nothing is done twice", async () => {
    // The function's app served in this process (it sees the client leave; the functions
    // emulator never tells a function so), on this stack's Firestore, Auth and task queue.
    Object.assign(process.env, stack.env);
    trustCertificate(readFileSync(stack.env.NODE_EXTRA_CA_CERTS, "utf8"));
    const { createApp } = await import("../../../functions/src/app");
    const server = http.createServer(createApp());
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const here = new Client({ apiUrl: url, defaultHeaders: { Authorization: `Bearer ${ann.idToken}` } });
      const key = stack.holds.newKey("handoff");
      const marker = `durable-handoff-${key}`;
      const thread = await here.threads.create();
      const ac = new AbortController();
      for await (const _ of here.runs.stream(thread.thread_id, "quarry", {
        input: ask(`How many orders? ${stack.holds.planner(key)} ${marker}`),
        streamMode: ["values"],
        onDisconnect: "continue",
        signal: ac.signal,
      }) as AsyncIterable<Ev>)
        break; // the first event, then the client leaves for good
      ac.abort();
      await stack.holds.waitHeld(key);
      const runId = (await leaseOf(thread.thread_id))!.runId;
      await stack.holds.release(key);
      // At its next boundary the run stores its progress and lets its lease go; a runWatchdog
      // task on the emulated function finishes it from there.
      await waitFor(async () => (await leaseOf(thread.thread_id)) === null, "the run to be finished", 90_000);
      const events = await loggedEvents(stack, thread.thread_id, runId);
      expect(events.filter((e) => e.event === "metadata").map((e) => e.data)).toEqual([
        { run_id: runId, attempt: 1 },
        { run_id: runId, attempt: 2 },
      ]);
      const said = messagesOf((await client.threads.getState(thread.thread_id)).values);
      expect(said.at(-1)?.type).toBe("ai");
      expect(said.at(-1)?.content).toMatch(/orders/i);
      // No model call was cut or made twice: every call finished, and no prompt was sent twice.
      const calls = await stack.holds.calls(marker);
      expect(
        calls.every((c) => c === "finished"),
        JSON.stringify(calls),
      ).toBe(true);
      const prompts = await stack.holds.prompts(marker);
      expect(prompts.length).toBeGreaterThanOrEqual(2);
      expect(new Set(prompts).size).toBe(prompts.length);
      const thread2 = (await stack.db.collection("threads").doc(thread.thread_id).get()).data()!;
      expect(thread2.lastRunEnd).toMatchObject({ runId, outcome: "success" });
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});

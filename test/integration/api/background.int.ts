/**
 * Runs nobody streams, through the functions emulator (with its Cloud Tasks emulator) and the
 * official SDK client: a background run is created, runs in the task-queue function, and is joined
 * (`runs.join`) and rejoined as a stream (`runs.joinStream`); `runs.wait` runs and answers; a run
 * whose client left with `on_disconnect: "continue"` finishes with its answer in the thread.
 */
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { deleteApp, initializeApp, type App } from "firebase-admin/app";
import { getFirestore } from "firebase-admin/firestore";
import type { Client } from "@langchain/langgraph-sdk";
import { signUp, type TestUser } from "../../support/auth-emulator";
import { startInProcessApp, type InProcessApp } from "../../support/in-process-app";
import { sdkClient } from "../../support/api-client";
import { HOLD_URL_ENV, holdClient, type Holds } from "../../support/hold-control";
import { stackEnv } from "../../support/stack-env";

let client: Client;
let holds: Holds;
let user: TestUser;
/** The function's code in this process (its task-queue body called directly), and Firestore as a test reads it. */
let inProcess: InProcessApp;
let admin: App;

beforeAll(async () => {
  const stack = stackEnv();
  user = await signUp(stack.urls.auth!);
  client = sdkClient(stack.urls.api!, user);
  holds = holdClient(stack.env[HOLD_URL_ENV]);
  inProcess = await startInProcessApp();
  admin = initializeApp({ projectId: stack.env.GCLOUD_PROJECT }, `background-${Date.now()}`);
});

afterAll(async () => {
  await inProcess?.close();
  if (admin) await deleteApp(admin);
});

type Msg = { type: string; content: unknown; tool_calls?: unknown[] };
type Ev = { id?: string; event: string; data: unknown };
const ask = (content: string) => ({ messages: [{ type: "human", content }] });
const answerOf = (values: unknown) =>
  ((values as { messages: Msg[] }).messages ?? [])
    .filter((m) => m.type === "ai" && !m.tool_calls?.length)
    .at(-1)?.content;

describe("runs nobody streams", () => {
  it("a background run is created, runs in the task queue, and is joined; its stream can be replayed", async () => {
    const thread = await client.threads.create();
    const key = holds.newKey("bg");
    const run = await client.runs.create(thread.thread_id, "quarry", {
      input: ask(`How many orders were placed? ${holds.planner(key)}`),
    });
    expect(run).toMatchObject({ thread_id: thread.thread_id, status: "pending" });
    // The task-queue function has picked it up: its planner waits at the hold.
    await holds.waitHeld(key);
    expect((await client.runs.get(thread.thread_id, run.run_id)).status).toBe("running");
    // A stream joined now follows it live to the end.
    const live: Ev[] = [];
    const following = (async () => {
      for await (const ev of client.runs.joinStream(thread.thread_id, run.run_id) as AsyncIterable<Ev>)
        live.push(ev);
    })();
    const joined = client.runs.join(thread.thread_id, run.run_id);
    await holds.release(key);
    const values = await joined;
    expect(String(answerOf(values))).toMatch(/^Here is what I found \(1 rows\)/);
    await following;
    expect(live.map((e) => Number(e.id))).toEqual(live.map((_, i) => i + 1));
    expect(live.some((e) => e.event === "custom" && (e.data as { type: string }).type === "result")).toBe(
      true,
    );
    expect((await client.runs.get(thread.thread_id, run.run_id)).status).toBe("success");
    expect((await client.runs.list(thread.thread_id)).map((r) => r.run_id)).toContain(run.run_id);
    expect((await client.threads.get(thread.thread_id)).status).toBe("idle");
  });

  it("a background run on a busy thread is refused with 409", async () => {
    const thread = await client.threads.create();
    const key = holds.newKey("busy");
    const first = await client.runs.create(thread.thread_id, "quarry", {
      input: ask(`How many orders? ${holds.planner(key)}`),
    });
    await holds.waitHeld(key);
    await expect(
      client.runs.create(thread.thread_id, "quarry", { input: ask("How many customers?") }),
    ).rejects.toMatchObject({ status: 409 });
    await holds.release(key);
    await client.runs.join(thread.thread_id, first.run_id);
  });

  it("runs.wait runs the turn and answers with the thread's values", async () => {
    const thread = await client.threads.create();
    const values = await client.runs.wait(thread.thread_id, "quarry", {
      input: ask("How many customers are there?"),
    });
    expect(String(answerOf(values))).toContain("FROM shop.customers");
  });

  it("a run whose client left with on_disconnect continue finishes, its answer in the thread", async () => {
    const thread = await client.threads.create();
    const key = holds.newKey("left");
    const ac = new AbortController();
    let runId = "";
    try {
      for await (const ev of client.runs.stream(thread.thread_id, "quarry", {
        input: ask(`How many orders were placed? ${holds.answer(key)}`),
        streamMode: ["values"],
        onDisconnect: "continue",
        signal: ac.signal,
        onRunCreated: (m) => (runId = m.run_id),
      }) as AsyncIterable<Ev>) {
        if (ev.event === "values") ac.abort(); // the client leaves before the answer
      }
    } catch {
      /* the aborted fetch */
    }
    await holds.release(key);
    const values = await client.runs.join(thread.thread_id, runId);
    expect(String(answerOf(values))).toMatch(/^Here is what I found/);
  });

  it("a queued run starts once: a second delivery of its task, or a run given up on before it started, does not run", async () => {
    const { runInBackground } = await import("../../../functions/src/runs/background");
    const thread = await client.threads.create();
    const body = { assistant_id: "quarry", input: ask("How many customers are there?") };
    const run = await client.runs.create(thread.thread_id, "quarry", { input: body.input });
    await client.runs.join(thread.thread_id, run.run_id);
    // Cloud Tasks delivers a task at least once: the same task again runs nothing.
    await runInBackground({ threadId: thread.thread_id, uid: user.uid, runId: run.run_id, body });
    const asked = async () =>
      ((await client.threads.getState(thread.thread_id)).values as { messages: Msg[] }).messages
        .filter((m) => m.type === "human")
        .map((m) => m.content);
    expect(await asked()).toEqual(["How many customers are there?"]);
    // A run its client gave up on (as a v2 command leaves it when the run did not start in time).
    const givenUp = crypto.randomUUID();
    await getFirestore(admin)
      .doc(`threads/${thread.thread_id}/runs/${givenUp}`)
      .set({ status: "error", uid: user.uid, error: { error: "unavailable:run", message: "given up" } });
    await runInBackground({
      threadId: thread.thread_id,
      uid: user.uid,
      runId: givenUp,
      body: { assistant_id: "quarry", input: ask("How many orders were placed?") },
    });
    expect(await asked()).toEqual(["How many customers are there?"]);
    expect((await client.threads.get(thread.thread_id)).status).toBe("idle");
  });
});

/**
 * Agent Server parity that real clients rely on, through the functions emulator and the official
 * SDK client: `GET /info`, `if_not_exists: "create"` on a run, threads found by `graph_id`, and the
 * thread's runs listed (running, then finished).
 */
import { describe, it, expect, beforeAll } from "vitest";
import { randomUUID } from "node:crypto";
import type { Client } from "@langchain/langgraph-sdk";
import { signUp, type TestUser } from "../../support/auth-emulator";
import { call, sdkClient } from "../../support/api-client";
import { HOLD_URL_ENV, holdClient, type Holds } from "../../support/hold-control";
import { stackEnv } from "../../support/stack-env";

let api: string;
let alice: TestUser;
let client: Client;
let holds: Holds;

beforeAll(async () => {
  const stack = stackEnv();
  api = stack.urls.api!;
  alice = await signUp(stack.urls.auth!);
  client = sdkClient(api, alice);
  holds = holdClient(stack.env[HOLD_URL_ENV]);
});

const ask = (content: string) => ({ messages: [{ type: "human", content }] });

async function drain(stream: AsyncIterable<{ event: string; data: unknown }>) {
  const out: { event: string; data: unknown }[] = [];
  for await (const ev of stream) out.push(ev);
  return out;
}

describe("Agent Server parity", () => {
  it("GET /info says what the server has, without auth", async () => {
    const r = await call(api, "/info");
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ flags: { assistants: true, resumable_streams: true, crons: false } });
  });

  it("a run with if_not_exists: create starts a thread that did not exist; without it, 404", async () => {
    const fresh = randomUUID();
    const refused = await call(api, `/threads/${fresh}/runs/stream`, {
      method: "POST",
      token: alice.idToken,
      body: { assistant_id: "quarry", input: ask("hello") },
    });
    expect(refused.status).toBe(404);
    const events = await drain(
      client.runs.stream(fresh, "quarry", {
        input: ask("hello"),
        ifNotExists: "create",
        streamMode: ["values"],
      }),
    );
    expect(events.some((e) => e.event === "error")).toBe(false);
    expect((await client.threads.get(fresh)).thread_id).toBe(fresh);
    // Another user's thread id is not theirs to create a run on.
    const bob = sdkClient(api, await signUp(stackEnv().urls.auth!));
    await expect(
      drain(bob.runs.stream(fresh, "quarry", { input: ask("hello"), ifNotExists: "create" })),
    ).rejects.toMatchObject({ status: 409 });
  });

  it("a checkpoint object from history or state, sent back as is (checkpoint_map: null), starts a run from it", async () => {
    const thread = await client.threads.create();
    await drain(
      client.runs.stream(thread.thread_id, "quarry", { input: ask("hello"), streamMode: ["values"] }),
    );
    const history = await client.threads.getHistory(thread.thread_id, { limit: 10 });
    const state = await client.threads.getState(thread.thread_id);
    const objects = [history.at(-1)!.checkpoint, history[0].parent_checkpoint!, state.checkpoint];
    expect(objects.some((c) => c && "checkpoint_map" in c && c.checkpoint_map === null)).toBe(true);
    for (const checkpoint of objects) {
      const events = await drain(
        client.runs.stream(thread.thread_id, "quarry", {
          input: ask("hello again"),
          checkpoint,
          streamMode: ["values"],
        }),
      );
      expect(events.map((e) => e.event)).not.toContain("error");
      // The same object in a background run's body is accepted too.
      const run = await client.runs.create(thread.thread_id, "quarry", {
        input: ask("and again"),
        checkpoint,
      });
      await client.runs.join(thread.thread_id, run.run_id);
    }
  });

  it("a run with a checkpoint and no input runs on from it; from the empty start it is a 400 saying to send input", async () => {
    const thread = await client.threads.create();
    const [start] = await client.threads.getHistory(thread.thread_id);
    expect((start.values as { messages: unknown[] }).messages).toEqual([]);
    expect(start.parent_checkpoint).toBeNull();
    const refused = await call(api, `/threads/${thread.thread_id}/runs/stream`, {
      method: "POST",
      token: alice.idToken,
      body: { assistant_id: "quarry", checkpoint: start.checkpoint },
    });
    expect(refused.status).toBe(400);
    expect(String(refused.json.message)).toMatch(/no question to run on from: send input/);
    // After a turn: from the question's checkpoint, the turn runs again and answers once more.
    await drain(
      client.runs.stream(thread.thread_id, "quarry", { input: ask("How many orders were placed?") }),
    );
    const history = await client.threads.getHistory(thread.thread_id, { limit: 50 });
    // A turn keeps two checkpoints after the thread's empty start: the question and the end.
    expect(history.map((h) => h.next)).toEqual([[], ["ingress"], []]);
    const question = history[1];
    const events = await drain(
      client.runs.stream(thread.thread_id, "quarry", {
        checkpoint: question.checkpoint,
        streamMode: ["values", "custom"],
      }),
    );
    expect(events.map((e) => e.event)).not.toContain("error");
    const phases = events
      .filter((e) => e.event === "custom" && (e.data as { type?: string }).type === "phase")
      .map((e) => (e.data as { phase: string }).phase);
    expect(phases).toContain("answering");
    const state = await client.threads.getState(thread.thread_id);
    const messages = (state.values as { messages: { type: string }[] }).messages;
    expect(messages.filter((m) => m.type === "human")).toHaveLength(1);
    expect(state.parent_checkpoint?.checkpoint_id).not.toBe(history[0].checkpoint.checkpoint_id);
    const meta = await client.threads.get(thread.thread_id);
    expect(meta.values).toMatchObject({
      messages: [{ type: "human", content: "How many orders were placed?" }, { type: "ai" }],
    });
  });

  it("threads are found by graph_id, and a thread's runs are listed while running and after", async () => {
    const thread = await client.threads.create();
    const found = await client.threads.search({ metadata: { graph_id: "quarry" }, limit: 100 });
    expect(found.map((t) => t.thread_id)).toContain(thread.thread_id);
    const key = holds.newKey("list");
    let runId = "";
    const running = drain(
      client.runs.stream(thread.thread_id, "quarry", {
        input: ask(`How many orders? ${holds.planner(key)}`),
        onRunCreated: (m) => (runId = m.run_id),
      }),
    );
    await holds.waitHeld(key);
    const during = await client.runs.list(thread.thread_id, { status: "running" });
    expect(during.map((r) => [r.run_id, r.status])).toEqual([[runId, "running"]]);
    await holds.release(key);
    await running;
    const after = await client.runs.list(thread.thread_id);
    expect(after.map((r) => [r.run_id, r.status])).toEqual([[runId, "success"]]);
    expect((await client.runs.get(thread.thread_id, runId)).status).toBe("success");
  });

  it.each(["interrupt", "rollback"] as const)(
    "multitask_strategy %s stops the running run and runs the new one",
    async (strategy) => {
      const thread = await client.threads.create();
      await drain(client.runs.stream(thread.thread_id, "quarry", { input: ask("hello") }));
      const key = holds.newKey(strategy);
      const busyQuestion = `How many orders? ${holds.planner(key)}`;
      let busyRun = "";
      const busy = drain(
        client.runs.stream(thread.thread_id, "quarry", {
          input: ask(busyQuestion),
          onRunCreated: (m) => (busyRun = m.run_id),
        }),
      );
      await holds.waitHeld(key); // the first run is at its model call
      const events = await drain(
        client.runs.stream(thread.thread_id, "quarry", {
          input: ask("How many customers are there?"),
          streamMode: ["values"],
          multitaskStrategy: strategy,
        }),
      );
      expect(events.some((e) => e.event === "error")).toBe(false);
      await busy; // its stream ended: it was stopped
      expect((await client.runs.get(thread.thread_id, busyRun)).status).not.toBe("running");
      const values = (await client.threads.getState(thread.thread_id)).values as {
        messages: { type: string; content: unknown; tool_calls?: unknown[] }[];
      };
      const questions = values.messages.filter((m) => m.type === "human").map((m) => m.content);
      // interrupt keeps what the stopped run did (its question); rollback starts from before it.
      expect(questions).toEqual(
        strategy === "interrupt"
          ? ["hello", busyQuestion, "How many customers are there?"]
          : ["hello", "How many customers are there?"],
      );
      const answer = values.messages.filter((m) => m.type === "ai" && !m.tool_calls?.length).at(-1);
      expect(String(answer?.content)).toContain("FROM shop.customers");
      await holds.release(key);
    },
  );
});

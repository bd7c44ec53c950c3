/**
 * A clarifying question through the functions emulator and the official SDK client: the run stops
 * at the question (the stream's `__interrupt__`, thread status "interrupted", the state's tasks),
 * `command: { resume }` answers it and the same turn finishes with the chosen reading; answering
 * when nothing is asked, or answering badly, is refused with what to do.
 */
import { describe, it, expect, beforeAll } from "vitest";
import type { Client } from "@langchain/langgraph-sdk";
import { signUp } from "../../support/auth-emulator";
import { call, sdkClient } from "../../support/api-client";
import { stackEnv } from "../../support/stack-env";
import { CLARIFYING_CHOICES, CLARIFYING_QUESTION } from "../../support/scripted-model-script";
import type { TestUser } from "../../support/auth-emulator";

let api: string;
let alice: TestUser;
let client: Client;

beforeAll(async () => {
  const stack = stackEnv();
  api = stack.urls.api!;
  alice = await signUp(stack.urls.auth!);
  client = sdkClient(api, alice);
});

type Ev = { event: string; data: unknown };
const MODES = ["values", "updates", "messages-tuple", "custom"] as const;

async function collect(stream: AsyncIterable<Ev>): Promise<Ev[]> {
  const out: Ev[] = [];
  for await (const ev of stream) out.push(ev);
  return out;
}

const ask = (content: string) => ({ messages: [{ type: "human", content }] });
const answerText = (events: Ev[]) =>
  events
    .filter((e) => e.event === "messages")
    .map((e) => e.data as [{ content?: unknown }, { langgraph_node?: string }])
    .filter(([, meta]) => meta?.langgraph_node === "generator")
    .map(([m]) => String(m.content ?? ""))
    .join("");

async function askedThread(): Promise<{ threadId: string; events: Ev[] }> {
  const thread = await client.threads.create();
  const events = await collect(
    client.runs.stream(thread.thread_id, "quarry", {
      input: ask("How are we doing?"),
      streamMode: [...MODES],
    }) as AsyncIterable<Ev>,
  );
  return { threadId: thread.thread_id, events };
}

describe("a clarifying question through the SDK", () => {
  it("stops at the question, then the answer sent as command.resume finishes the same turn", async () => {
    const { threadId, events } = await askedThread();
    expect(events.some((e) => e.event === "error")).toBe(false);
    const interrupt = events.filter((e) => e.event === "values").at(-1)?.data as {
      __interrupt__?: { id: string; value: Record<string, unknown> }[];
    };
    expect(interrupt.__interrupt__?.[0].value).toMatchObject({
      kind: "clarification",
      question: CLARIFYING_QUESTION,
      choices: CLARIFYING_CHOICES,
    });
    expect(events.some((e) => e.event === "updates" && "__interrupt__" in (e.data as object))).toBe(true);
    expect(answerText(events)).toBe("");

    const waiting = await client.threads.get(threadId);
    expect(waiting.status).toBe("interrupted");
    const state = await client.threads.getState(threadId);
    expect(state.next).toEqual(["clarify"]);
    expect(state.tasks[0].interrupts[0].value).toMatchObject({ question: CLARIFYING_QUESTION });
    expect((state as unknown as { interrupts: unknown[] }).interrupts).toHaveLength(1);

    const resumed = await collect(
      client.runs.stream(threadId, "quarry", {
        command: { resume: "Number of customers" },
        streamMode: [...MODES],
      }) as AsyncIterable<Ev>,
    );
    expect(resumed[0].event).toBe("metadata");
    expect(resumed.some((e) => e.event === "error")).toBe(false);
    const result = resumed.find(
      (e) => e.event === "custom" && (e.data as { type: string }).type === "result",
    );
    expect((result?.data as { sql: string }).sql).toContain("FROM shop.customers");
    expect(answerText(resumed)).toMatch(/^Here is what I found \(1 rows\)/);

    const after = await client.threads.getState(threadId);
    expect(after.next).toEqual([]);
    const messages = (after.values as { messages: { type: string; content: unknown; name?: string }[] })
      .messages;
    // One question, the ask, the answer, the queries, the written answer: a single turn.
    expect(messages.filter((m) => m.type === "human")).toHaveLength(1);
    expect(messages.find((m) => m.type === "tool" && m.name === "ask_user")?.content).toBe(
      "The user answered: Number of customers",
    );
    expect((await client.threads.get(threadId)).status).toBe("idle");
  });

  it("a thread not waiting for an answer refuses command.resume with 409 and what to do", async () => {
    const { threadId } = await askedThread();
    await collect(
      client.runs.stream(threadId, "quarry", {
        command: { resume: { answer: "Number of orders" } },
        streamMode: ["values"],
      }) as AsyncIterable<Ev>,
    );
    const again = await call(api, `/threads/${threadId}/runs/stream`, {
      method: "POST",
      token: alice.idToken,
      body: { assistant_id: "quarry", command: { resume: "Number of orders" } },
    });
    expect(again.status).toBe(409);
    expect(again.json.error).toBe("conflict:no_interrupt");
    expect(String(again.json.message)).toMatch(/send a new question as input/);
  });

  it("bad answers are refused before anything runs; the question stays waiting", async () => {
    const { threadId } = await askedThread();
    const post = (body: object) =>
      call(api, `/threads/${threadId}/runs/stream`, {
        method: "POST",
        token: alice.idToken,
        body: { assistant_id: "quarry", ...body },
      });
    const cases: [object, RegExp][] = [
      [{ command: { resume: 42 } }, /command.resume must be the answer as a string/],
      [{ command: { resume: "  " } }, /the answer is empty/],
      [{ command: { resume: "x", goto: "planner" } }, /command.goto is not supported/],
      [{ command: { resume: "x" }, input: ask("hi") }, /either input .* or command.resume/],
      [{ command: { resume: "x" }, checkpoint_id: "abc" }, /leave out checkpoint_id/],
    ];
    for (const [body, why] of cases) {
      const r = await post(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(String(r.json.message)).toMatch(why);
    }
    expect((await client.threads.get(threadId)).status).toBe("interrupted");
    expect((await client.threads.getState(threadId)).next).toEqual(["clarify"]);
  });

  it("a new question instead of an answer starts a fresh turn", async () => {
    const { threadId } = await askedThread();
    const events = await collect(
      client.runs.stream(threadId, "quarry", {
        input: ask("How many orders were placed?"),
        streamMode: [...MODES],
      }) as AsyncIterable<Ev>,
    );
    expect(events.some((e) => e.event === "error")).toBe(false);
    expect(answerText(events)).toContain("FROM shop.orders");
    expect((await client.threads.getState(threadId)).next).toEqual([]);
    expect((await client.threads.get(threadId)).status).toBe("idle");
  });
});

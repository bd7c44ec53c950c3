import { describe, it, expect, beforeAll, afterEach } from "vitest";
import type { Client } from "@langchain/langgraph-sdk";
import { signUp } from "../../support/auth-emulator";
import { call, sdkClient } from "../../support/api-client";
import { stackEnv } from "../../support/stack-env";
import { HOLD_URL_ENV, holdClient, type Holds } from "../../support/hold-control";

type Ev = { event: string; data: unknown };
const ask = (content: string) => ({ messages: [{ type: "human", content }] });

let api: string;
let faultUrl: string;
let client: Client;
let token: string;
let holds: Holds;

beforeAll(async () => {
  const stack = stackEnv();
  api = stack.urls.api!;
  faultUrl = stack.env.QUARRY_TEST_FAULT_URL;
  const user = await signUp(stack.urls.auth!);
  token = user.idToken;
  client = sdkClient(api, user);
  holds = holdClient(stack.env[HOLD_URL_ENV]);
});

afterEach(async () => {
  await fetch(`${faultUrl}/heal`, { method: "POST" });
});

describe("faults", () => {
  it("Firestore unreachable when a run is asked for: a 503 that says so, within the lease time", async () => {
    const thread = await client.threads.create();
    await fetch(`${faultUrl}/fail?ms=60000`, { method: "POST" });
    const started = Date.now();
    const res = await call(api, `/threads/${thread.thread_id}/runs/stream`, {
      method: "POST",
      token,
      body: { assistant_id: "quarry", input: ask("hello"), stream_mode: ["values"] },
    });
    const took = Date.now() - started;
    expect(res.status).toBe(503);
    expect(res.json).toMatchObject({
      error: "unavailable:storage",
      message: expect.stringMatching(/send it again/),
    });
    // Bounded by the lease time (10 s here); the Firestore client alone would retry for minutes. Also
    // on a fresh instance, whose graph build (it reads Firestore too) waits out the outage beside
    // the thread's read, not before it (54 s when this file ran first, before).
    console.log(`503 after ${took} ms of outage`);
    expect(took).toBeLessThan(15_000);
    await fetch(`${faultUrl}/heal`, { method: "POST" });
    const ok = await call(api, `/threads/${thread.thread_id}/runs/stream`, {
      method: "POST",
      token,
      body: { assistant_id: "quarry", input: ask("hello"), stream_mode: ["values"] },
    });
    expect(ok.status).toBe(200);
  }, 90_000);

  it(
    "Firestore failing mid-run gives an error event; afterwards the thread loads and the next turn works",
    { timeout: 90_000 },
    async () => {
      const thread = await client.threads.create();
      // The answer's model call is held until the run has failed: the run cannot finish before it
      // notices the outage, however fast or slow this machine is.
      const key = holds.newKey("outage");
      const question = `${holds.answer(key)} How many orders were placed in total?`;
      const events: Ev[] = [];
      let cut = false;
      let failedAt = 0;
      try {
        for await (const ev of client.runs.stream(thread.thread_id, "quarry", {
          input: ask(question),
          streamMode: ["messages-tuple", "custom", "values"],
        }) as AsyncIterable<Ev>) {
          events.push(ev);
          if (!cut && ev.event === "custom" && (ev.data as { type: string }).type === "sql") {
            // The function loses Firestore while the run is between checkpoints.
            await fetch(`${faultUrl}/fail?ms=60000`, { method: "POST" });
            failedAt = Date.now();
            cut = true;
          }
        }
      } finally {
        await holds.release(key);
      }
      expect(cut).toBe(true);
      // The run gives up once it cannot renew its lease (a third of the 10 s lease), not minutes later.
      console.log(`error event after ${Date.now() - failedAt} ms of outage`);
      const err = events.find((e) => e.event === "error");
      expect(err, JSON.stringify(events.map((e) => e.event))).toBeDefined();
      expect(err!.data).toMatchObject({
        error: "unavailable:storage",
        message: expect.stringMatching(/database/),
      });

      await fetch(`${faultUrl}/heal`, { method: "POST" });
      // The thread still loads, with the question that was asked.
      const state = await client.threads.getState(thread.thread_id);
      const msgs = (state.values as { messages: Array<{ type: string; content: unknown }> }).messages;
      expect(msgs[0]).toMatchObject({ type: "human", content: question });
      // The next turn works once the lease (renewals failed during the outage) is released or expires.
      await expect
        .poll(
          async () =>
            (
              await call(api, `/threads/${thread.thread_id}/runs/stream`, {
                method: "POST",
                token,
                body: { assistant_id: "quarry", input: ask("hello"), stream_mode: ["values"] },
              })
            ).status,
          { timeout: 30_000, interval: 1000 },
        )
        .toBe(200);
      // The question asked during the outage is still part of the conversation.
      const after = await client.threads.getState(thread.thread_id);
      const humans = (after.values as { messages: Array<{ type: string; content: unknown }> }).messages
        .filter((m) => m.type === "human")
        .map((m) => m.content);
      expect(humans).toEqual([question, "hello"]);
    },
  );
});

/**
 * A client that disconnects mid-stream stops its run. Tested on the function's own express app,
 * served from this process, because firebase-tools' functions emulator never tells a function that
 * its client left: its proxy only unpipes the response (the worker's request stays open and the
 * worker is marked idle), so through the emulator the run always goes on to the end. Everything
 * else is the integration stack's: the Firestore and Auth emulators and the Vertex AI stand-in.
 */
import { it, expect, beforeAll, afterAll } from "vitest";
import { deleteApp, initializeApp, type App } from "firebase-admin/app";
import { getFirestore, type Firestore } from "firebase-admin/firestore";
import type { Client } from "@langchain/langgraph-sdk";
import { signUp } from "../../support/auth-emulator";
import { sdkClient } from "../../support/api-client";
import { LONG_ANSWER, MIDWAY } from "../../support/api-script";
import { stackEnv } from "../../support/stack-env";
import { startInProcessApp, type InProcessApp } from "../../support/in-process-app";

type Ev = { event: string; data: unknown };
type Msg = {
  type: string;
  content: unknown;
  tool_calls?: unknown[];
  response_metadata?: Record<string, unknown>;
};

let app: InProcessApp;
let client: Client;
let admin: App;
let db: Firestore;

beforeAll(async () => {
  const stack = stackEnv();
  app = await startInProcessApp();
  client = sdkClient(app.url, await signUp(stack.urls.auth!));
  admin = initializeApp({ projectId: stack.env.GCLOUD_PROJECT }, `disconnect-${Date.now()}`);
  db = getFirestore(admin);
});

afterAll(async () => {
  await app?.close();
  if (admin) await deleteApp(admin);
});

it("stops the run when the client disconnects mid-stream; the lease is released", async () => {
  const thread = await client.threads.create();
  const question = `${MIDWAY} Describe the orders table in detail`;
  const controller = new AbortController();
  let tokens = 0;
  try {
    for await (const ev of client.runs.stream(thread.thread_id, "quarry", {
      input: { messages: [{ type: "human", content: question }] },
      streamMode: ["messages-tuple"],
      signal: controller.signal,
    }) as AsyncIterable<Ev>) {
      const node = (ev.data as [unknown, { langgraph_node?: string }] | undefined)?.[1]?.langgraph_node;
      // The answer has started, and stops midway until the run drops its model call: only the
      // disconnect can end this run.
      if (ev.event === "messages" && node === "generator" && ++tokens === 1) controller.abort();
    }
  } catch {
    /* the aborted fetch rejects */
  }
  expect(tokens).toBe(1);
  // The server notices on its own: wait for the condition, bounded.
  await expect
    .poll(async () => (await db.collection("threads").doc(thread.thread_id).get()).get("run"), {
      timeout: 20_000,
    })
    .toBeNull();
  const state = await client.threads.getState(thread.thread_id);
  const msgs = (state.values as { messages: Msg[] }).messages;
  // The user's message was checkpointed even though the answer was cut off...
  expect(msgs[0]).toMatchObject({ type: "human", content: question });
  // ...and the run was stopped, not finished: only what had streamed of the answer is stored,
  // marked stopped (the answer holds midway, so the stored part is short of the whole).
  const answers = msgs.filter((m) => m.type === "ai" && !m.tool_calls?.length);
  expect(answers).toHaveLength(1);
  expect(answers[0].response_metadata).toMatchObject({ quarry_stopped: true });
  // How much of it had streamed when the server noticed depends on timing: any non-empty start.
  const kept = String(answers[0].content);
  expect(kept.length).toBeGreaterThan(0);
  expect(LONG_ANSWER.startsWith(kept), kept).toBe(true);
  expect(kept.length).toBeLessThan(1000);
});

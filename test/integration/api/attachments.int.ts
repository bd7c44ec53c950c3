/**
 * Images and PDFs in a question through the API, as LangChain's clients send them: agent-chat-ui's
 * own content blocks (`{type: "image", mimeType, data, metadata: {name}}`, its
 * src/lib/multimodal-utils.ts) through the official SDK client reach the model (the Vertex AI
 * stand-in's request carries the image as `inlineData`), stay in the thread's state with their data
 * (agent-chat-ui shows history images from it), and a question may be an image alone. What Quarry
 * does not take is refused before anything runs, saying what to send instead.
 */
import { describe, it, expect, beforeAll } from "vitest";
import type { Client } from "@langchain/langgraph-sdk";
import { signUp, type TestUser } from "../../support/auth-emulator";
import { call, sdkClient } from "../../support/api-client";
import { HOLD_URL_ENV, holdClient, type Holds } from "../../support/hold-control";
import { stackEnv } from "../../support/stack-env";

const PNG = Buffer.concat([Buffer.from("89504e470d0a1a0a", "hex"), Buffer.alloc(48, 3)]).toString("base64");

let api: string;
let user: TestUser;
let client: Client;
let holds: Holds;

beforeAll(async () => {
  const stack = stackEnv();
  api = stack.urls.api!;
  user = await signUp(stack.urls.auth!);
  client = sdkClient(api, user);
  holds = holdClient(stack.env[HOLD_URL_ENV]);
});

type Msg = { type: string; content: unknown };

describe("images and PDFs in a question", () => {
  it("agent-chat-ui's image block reaches the model and stays in the thread with its data", async () => {
    const marker = holds.newKey("image");
    const thread = await client.threads.create();
    const image = { type: "image", mimeType: "image/png", data: PNG, metadata: { name: "q2.png" } };
    const values = (await client.runs.wait(thread.thread_id, "quarry", {
      input: {
        messages: [
          {
            type: "human",
            content: [{ type: "text", text: `How many orders were placed? ${marker}` }, image],
          },
        ],
      },
    })) as { messages: Msg[] };
    expect(values.messages.at(-1)?.type).toBe("ai");
    const prompts = await holds.prompts(marker);
    expect(prompts.length).toBeGreaterThanOrEqual(2);
    expect(prompts.every((p) => p.includes(`"inlineData":{"mimeType":"image/png","data":"${PNG}"}`))).toBe(
      true,
    );
    const state = (await client.threads.getState(thread.thread_id)).values as { messages: Msg[] };
    expect(state.messages[0].content).toEqual([
      { type: "text", text: `How many orders were placed? ${marker}` },
      image,
    ]);
  });

  it("a background run and a v2 run.start carry an image bigger than a task may (Cloud Tasks: 1 MB)", async () => {
    const marker = holds.newKey("big-image");
    const big = Buffer.concat([
      Buffer.from("89504e470d0a1a0a", "hex"),
      Buffer.alloc(1_150_000, 9), // 1.5 MB as base64: over a task's 1 MB, little more
    ]).toString("base64");
    const image = { type: "image", mimeType: "image/png", data: big };
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "quarry", {
      input: {
        messages: [
          {
            type: "human",
            content: [{ type: "text", text: `How many orders were placed? ${marker}` }, image],
          },
        ],
      },
    });
    await client.runs.join(thread.thread_id, run.run_id);
    expect((await client.runs.get(thread.thread_id, run.run_id)).status).toBe("success");
    const prompts = await holds.prompts(marker);
    expect(prompts.some((p) => p.includes(big))).toBe(true);
    // The same through the v2 protocol's run.start (queued the same way).
    const v2 = crypto.randomUUID();
    const started = await call(api, `/threads/${v2}/commands`, {
      method: "POST",
      token: user.idToken,
      body: {
        id: 1,
        method: "run.start",
        params: {
          assistant_id: "quarry",
          input: {
            messages: [{ type: "human", content: [{ type: "text", text: "How many orders?" }, image] }],
          },
        },
      },
    });
    expect(started.json).toMatchObject({ type: "success", id: 1 });
    const runId = (started.json as { result: { run_id: string } }).result.run_id;
    await client.runs.join(v2, runId);
    const state = (await client.threads.getState(v2)).values as { messages: Msg[] };
    expect((state.messages[0].content as { data?: string }[])[1].data).toBe(big);
  });

  it("a question may be an image alone", async () => {
    const thread = await client.threads.create();
    const values = (await client.runs.wait(thread.thread_id, "quarry", {
      input: {
        messages: [{ type: "human", content: [{ type: "image", mimeType: "image/png", data: PNG }] }],
      },
    })) as { messages: Msg[] };
    expect(values.messages.at(-1)?.type).toBe("ai");
  });

  it("refuses what it does not take, before anything runs, saying what to send", async () => {
    const thread = await client.threads.create();
    const ask = async (block: object) =>
      call(api, `/threads/${thread.thread_id}/runs/wait`, {
        method: "POST",
        token: user.idToken,
        body: {
          assistant_id: "quarry",
          input: { messages: [{ type: "human", content: [{ type: "text", text: "What is this?" }, block] }] },
        },
      });
    const url = await ask({ type: "image", url: "https://example.com/chart.png", mimeType: "image/png" });
    expect([url.status, url.json?.error]).toEqual([400, "bad_request:attachment"]);
    expect(url.json?.message).toMatch(/does not fetch files from the web/);
    const svg = await ask({ type: "image", mimeType: "image/svg+xml", data: PNG });
    expect([svg.status, svg.json?.error]).toEqual([400, "bad_request:attachment"]);
    const big = Buffer.concat([Buffer.from("89504e470d0a1a0a", "hex"), Buffer.alloc(10 * 1024 * 1024 + 1)]);
    const tooBig = await ask({ type: "image", mimeType: "image/png", data: big.toString("base64") });
    expect([tooBig.status, tooBig.json?.error]).toEqual([413, "payload_too_large:attachment"]);
    expect(tooBig.json?.message).toMatch(/QUARRY_ATTACHMENT_MAX_MB/);
    // Nothing was asked on the thread.
    const state = (await client.threads.getState(thread.thread_id)).values as { messages?: Msg[] };
    expect(state.messages ?? []).toEqual([]);
  });
});

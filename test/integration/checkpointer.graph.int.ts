/**
 * FirestoreCheckpointer under a real StateGraph on the Java Firestore emulator: long conversations
 * resumed by fresh instances, a 5 MB value, forks, deletion, and two instances racing on a thread.
 */
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import type { Firestore } from "@google-cloud/firestore";
import { AIMessage, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import type { CheckpointTuple } from "@langchain/langgraph-checkpoint";
import { randomBytes } from "node:crypto";
import { FirestoreCheckpointer } from "../../functions/src/checkpointer";
import { conversationGraph, toolResult, turnInput } from "./checkpointer/conversation";
import { documentsUnder, emulatorFirestore, freshRoot } from "./checkpointer/firestore";
import { countRpcs } from "./checkpointer/rpc";

let firestore: Firestore;

beforeAll(() => {
  firestore = emulatorFirestore();
});

afterAll(async () => {
  await firestore?.terminate();
});

const cfg = (thread_id: string) => ({ configurable: { thread_id } });

function texts(messages: BaseMessage[]): string[] {
  return messages.map(
    (m) => `${m.getType()}:${typeof m.content === "string" ? m.content.slice(0, 40) : "?"}`,
  );
}

describe("a 200-turn conversation", () => {
  it("resumes correctly from fresh checkpointer instances, reading in 2 RPCs at turn 1 and 200", async () => {
    const root = freshRoot();
    const thread = "long-conversation";
    let saver = new FirestoreCheckpointer({ firestore, rootCollection: root });
    let graph = conversationGraph(saver, (t) => toolResult(t, 512));
    const rpcs = countRpcs(firestore);
    const getTupleRpcs = async () => {
      const fresh = new FirestoreCheckpointer({ firestore, rootCollection: root });
      const before = rpcs.length;
      const tuple = await fresh.getTuple(cfg(thread));
      return { tuple, methods: rpcs.slice(before).map((r) => r.method) };
    };

    let firstRead: string[] = [];
    for (let turn = 1; turn <= 200; turn++) {
      if (turn % 50 === 0) {
        // A new function instance: nothing cached, everything read back from Firestore.
        saver = new FirestoreCheckpointer({ firestore, rootCollection: root });
        graph = conversationGraph(saver, (t) => toolResult(t, 512));
        const state = await graph.getState(cfg(thread));
        expect(state.values.messages).toHaveLength((turn - 1) * 4);
        expect(state.values.turns).toBe(turn - 1);
      }
      const out = await graph.invoke(turnInput(turn), cfg(thread));
      expect(out.messages).toHaveLength(turn * 4);
      if (turn === 1) firstRead = (await getTupleRpcs()).methods;
    }
    const last = await getTupleRpcs();
    expect(firstRead).toEqual(["runQuery", "batchGetDocuments"]);
    expect(last.methods).toEqual(firstRead);

    const messages = last.tuple!.checkpoint.channel_values.messages as BaseMessage[];
    expect(messages).toHaveLength(800);
    expect(texts(messages.slice(0, 4))).toEqual([
      "human:Question 1: how did revenue do?",
      "ai:",
      `tool:${toolResult(1, 512).slice(0, 40)}`,
      "ai:Turn 1: revenue peaked in r1.",
    ]);
    expect((messages[797] as AIMessage).tool_calls?.[0]?.args).toEqual({
      sql: "SELECT * FROM sales WHERE turn = 200",
    });
    expect(messages[798].content).toBe(toolResult(200, 512));

    // Each message is stored once: blobs grow with turns, not with turns².
    const blobs = (await documentsUnder(firestore, root)).filter((p) => p.includes("/blobs/"));
    expect(blobs.length).toBeLessThanOrEqual(200 * 5);
  }, 300_000);
});

describe("a 5 MB tool result", () => {
  it("is stored in chunks under 1 MiB and read back byte-identical by a fresh instance", async () => {
    const root = freshRoot();
    const big = randomBytes(3_750_000).toString("base64"); // 5,000,000 characters, incompressible
    expect(big.length).toBe(5_000_000);
    const graph = conversationGraph(
      new FirestoreCheckpointer({ firestore, rootCollection: root }),
      () => big,
    );
    await graph.invoke(turnInput(1), cfg("big"));

    const fresh = conversationGraph(new FirestoreCheckpointer({ firestore, rootCollection: root }));
    const state = await fresh.getState(cfg("big"));
    const tool = (state.values.messages as BaseMessage[]).find((m) => m.getType() === "tool")!;
    expect(tool.content === big).toBe(true);

    const blobDocs = await firestore.collection(`${root}/big/blobs`).get();
    const sizes = blobDocs.docs.map((d) => (d.get("d") as Buffer).length);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(1_000_000);
    expect(sizes.reduce((a, b) => a + b, 0)).toBeGreaterThan(5_000_000);
  }, 120_000);
});

describe("forks", () => {
  it("updateState on an earlier checkpoint branches without touching the original branch", async () => {
    const root = freshRoot();
    const graph = conversationGraph(new FirestoreCheckpointer({ firestore, rootCollection: root }));
    for (let t = 1; t <= 3; t++) await graph.invoke(turnInput(t), cfg("fork"));
    const original = await graph.getState(cfg("fork"));

    const history = [];
    for await (const s of graph.getStateHistory(cfg("fork"))) history.push(s);
    const afterTurn1 = history.find((s) => s.values.messages?.length === 4 && s.next.length === 0)!;
    const forked = await graph.updateState(
      afterTurn1.config,
      { messages: [new AIMessage("Correction: r2.")] },
      "agent",
    );
    const resumed = await graph.invoke(turnInput(2), forked);

    expect(texts(resumed.messages).slice(3, 6)).toEqual([
      "ai:Turn 1: revenue peaked in r1.",
      "ai:Correction: r2.",
      "human:Question 2: how did revenue do?",
    ]);
    expect(resumed.messages).toHaveLength(4 + 1 + 4);

    // A fresh instance sees the fork as the latest and the original branch intact.
    const fresh = conversationGraph(new FirestoreCheckpointer({ firestore, rootCollection: root }));
    expect((await fresh.getState(cfg("fork"))).values.messages).toHaveLength(9);
    const old = await fresh.getState(original.config);
    expect(texts(old.values.messages)).toEqual(texts(original.values.messages));
    expect(old.values.messages).toHaveLength(12);
  });
});

describe("deleteThread", () => {
  it("leaves no document of the thread and keeps other threads", async () => {
    const root = freshRoot();
    const saver = new FirestoreCheckpointer({ firestore, rootCollection: root });
    const graph = conversationGraph(saver);
    for (let t = 1; t <= 3; t++) await graph.invoke(turnInput(t), cfg("doomed"));
    await graph.invoke(turnInput(1), cfg("kept"));
    expect((await documentsUnder(firestore, `${root}/doomed`)).length).toBeGreaterThan(10);

    await saver.deleteThread("doomed");

    expect(await documentsUnder(firestore, `${root}/doomed`)).toEqual([]);
    expect(await saver.getTuple(cfg("doomed"))).toBeUndefined();
    expect((await graph.getState(cfg("kept"))).values.messages).toHaveLength(4);
    // The same instance can start the thread again: no stale knowledge of deleted blobs.
    const again = await graph.invoke(turnInput(1), cfg("doomed"));
    expect(again.messages).toHaveLength(4);
    const fresh = conversationGraph(new FirestoreCheckpointer({ firestore, rootCollection: root }));
    expect((await fresh.getState(cfg("doomed"))).values.messages).toHaveLength(4);
  });
});

describe("two instances writing one thread at once", () => {
  it("leave a readable, consistent thread (a retry after a crash)", async () => {
    const root = freshRoot();
    const a = conversationGraph(new FirestoreCheckpointer({ firestore, rootCollection: root }));
    const b = conversationGraph(new FirestoreCheckpointer({ firestore, rootCollection: root }));
    await a.invoke(turnInput(1), cfg("race"));
    await b.getState(cfg("race"));
    await Promise.all([a.invoke(turnInput(2), cfg("race")), b.invoke(turnInput(2), cfg("race"))]);

    const reader = new FirestoreCheckpointer({ firestore, rootCollection: root });
    const fresh = conversationGraph(reader);
    const latest = await fresh.getState(cfg("race"));
    const turn1 = await a.getState(cfg("race"), { subgraphs: false });
    expect(texts(latest.values.messages).slice(4)).toEqual([
      "human:Question 2: how did revenue do?",
      "ai:",
      `tool:${toolResult(2, 5 * 1024).slice(0, 40)}`,
      "ai:Turn 2: revenue peaked in r2.",
    ]);
    expect(texts(latest.values.messages).slice(0, 4)).toEqual(texts(turn1.values.messages).slice(0, 4));
    // Every stored checkpoint decodes, and its parent chain leads back to the first one.
    const tuples: CheckpointTuple[] = [];
    for await (const t of reader.list(cfg("race"))) tuples.push(t);
    const ids = new Set(tuples.map((t) => t.checkpoint.id));
    for (const t of tuples) {
      if (t.parentConfig) expect(ids.has(t.parentConfig.configurable!.checkpoint_id as string)).toBe(true);
    }
    // Both runs continue from the same turn-1 checkpoint: two branches of the same length.
    expect(tuples.filter((t) => t.metadata?.step === tuples[0].metadata?.step).length).toBeGreaterThanOrEqual(
      1,
    );
    // The thread keeps working.
    const next = await fresh.invoke(turnInput(3), cfg("race"));
    expect(next.messages).toHaveLength(12);
  });

  it("keep the first regular write and the last special write for a task (putWrites race)", async () => {
    const root = freshRoot();
    const one = new FirestoreCheckpointer({ firestore, rootCollection: root });
    const two = new FirestoreCheckpointer({ firestore, rootCollection: root });
    const config = await one.put(
      { configurable: { thread_id: "w", checkpoint_ns: "" } },
      {
        v: 4,
        id: "1ef00000-0000-6000-8000-000000000001",
        ts: new Date().toISOString(),
        channel_values: {},
        channel_versions: {},
        versions_seen: {},
      },
      { source: "loop", step: 0, parents: {} },
      {},
    );
    await one.putWrites(config, [["messages", "first"]], "task");
    await Promise.all([
      two.putWrites(config, [["messages", "second"]], "task"),
      one.putWrites(config, [["other", "x"]], "task-2"),
      two.putWrites(config, [["__error__", "boom-1"]], "task"),
    ]);
    await two.putWrites(config, [["__error__", "boom-2"]], "task");
    const tuple = await new FirestoreCheckpointer({ firestore, rootCollection: root }).getTuple(config);
    expect(tuple!.pendingWrites).toEqual([
      ["task", "__error__", "boom-2"],
      ["task", "messages", "first"],
      ["task-2", "other", "x"],
    ]);
  });

  it("accepts pending writes that reach Firestore before their checkpoint", async () => {
    const root = freshRoot();
    const early = new FirestoreCheckpointer({ firestore, rootCollection: root });
    const late = new FirestoreCheckpointer({ firestore, rootCollection: root });
    const id = "1ef00000-0000-6000-8000-000000000002";
    const config = { configurable: { thread_id: "early", checkpoint_ns: "", checkpoint_id: id } };
    await early.putWrites(config, [["messages", [new HumanMessage("hi")]]], "task");
    expect(await late.getTuple(config)).toBeUndefined();
    await late.put(
      { configurable: { thread_id: "early", checkpoint_ns: "" } },
      {
        v: 4,
        id,
        ts: new Date().toISOString(),
        channel_values: { n: 1 },
        channel_versions: { n: 1 },
        versions_seen: {},
      },
      { source: "loop", step: 0, parents: {} },
      { n: 1 },
    );
    const tuple = await early.getTuple(config);
    expect(tuple!.checkpoint.channel_values).toEqual({ n: 1 });
    expect(tuple!.pendingWrites!.map((w) => [w[0], w[1], (w[2] as BaseMessage[])[0].content])).toEqual([
      ["task", "messages", "hi"],
    ]);
  });
});

describe("an image in the conversation", () => {
  it("is written once: the checkpoints of later turns do not carry it again, and it reads back whole", async () => {
    const root = freshRoot();
    const thread = "image-thread";
    const saver = new FirestoreCheckpointer({ firestore, rootCollection: root });
    const graph = conversationGraph(saver, (t) => toolResult(t, 512));
    const rpcs = countRpcs(firestore);
    // A 3 MB picture, as a question carries it (base64 in a standard image block).
    const image = randomBytes(3 * 1024 * 1024).toString("base64");
    const written = async (input: ReturnType<typeof turnInput>) => {
      const before = rpcs.length;
      await graph.invoke(input, cfg(thread));
      return rpcs.slice(before).reduce((sum, r) => sum + r.bytes, 0);
    };
    const first = await written({
      messages: [
        new HumanMessage({
          content: [
            { type: "text", text: "Make me this for Q3" },
            { type: "image", mimeType: "image/png", data: image },
          ],
        }),
      ],
      turns: 1,
    });
    expect(first).toBeGreaterThan(image.length);
    const later: number[] = [];
    for (let turn = 2; turn <= 6; turn++) later.push(await written(turnInput(turn)));
    // Each later turn writes its own messages and references (about 11 KB), not the picture (4 MB of base64).
    expect(Math.max(...later)).toBeLessThan(image.length / 50);
    expect(later.at(-1)!).toBeLessThan(later[0] * 2);
    const fresh = conversationGraph(new FirestoreCheckpointer({ firestore, rootCollection: root }));
    const messages = (await fresh.getState(cfg(thread))).values.messages as BaseMessage[];
    expect(messages).toHaveLength(6 * 4);
    expect((messages[0].content as { data?: string }[])[1].data).toBe(image);
  });
});

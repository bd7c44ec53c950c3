/** FirestoreCheckpointer's pure parts: value codec, document ids, errors. Nothing running. */
import { describe, it, expect } from "vitest";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { JsonPlusSerializer } from "@langchain/langgraph-checkpoint";
import { randomBytes } from "node:crypto";
import {
  CHUNK_BYTES,
  INLINE_BYTES,
  blobId,
  decodeValue,
  encodeValue,
  refBlobIds,
  MissingBlobError,
} from "../../functions/src/checkpointer/codec";
import { wrapError, FirestoreCheckpointerError } from "../../functions/src/checkpointer/errors";
import { FirestoreCheckpointer } from "../../functions/src/checkpointer";
import { checkpointDocId, keyOf, writeKey } from "../../functions/src/checkpointer/layout";

const serde = new JsonPlusSerializer();

async function roundTrip(value: unknown) {
  const enc = await encodeValue(serde, value);
  return { enc, back: await decodeValue(serde, enc.ref, enc.blobs) };
}

describe("value codec", () => {
  it("keeps small values inline, with no blob", async () => {
    const { enc, back } = await roundTrip({ phase: "planning", n: 3 });
    expect(enc.blobs.size).toBe(0);
    expect(refBlobIds(enc.ref)).toEqual([]);
    expect(back).toEqual({ phase: "planning", n: 3 });
  });

  it("stores each message of a message list as its own content-addressed blob", async () => {
    const messages = [
      new HumanMessage({ content: "How did revenue do last week?", id: "h1" }),
      new AIMessage({
        content: "",
        id: "a1",
        tool_calls: [{ id: "c1", name: "bq_query", args: { sql: "SELECT 1" } }],
      }),
      new ToolMessage({ content: "x".repeat(5000), tool_call_id: "c1", id: "t1" }),
    ];
    const first = await roundTrip(messages);
    // Two short messages, and the tool message as a skeleton plus its long content.
    expect(first.enc.blobs.size).toBe(4);
    expect(first.back).toEqual(messages);

    // The next turn's list shares the three blobs and adds one.
    const longer = [...messages, new AIMessage({ content: "Up 4%.", id: "a2" })];
    const second = await encodeValue(serde, longer);
    const shared = [...second.blobs.keys()].filter((id) => first.enc.blobs.has(id));
    expect(shared).toHaveLength(4);
    expect(second.blobs.size).toBe(5);
    expect(refBlobIds(second.ref)).toEqual([...second.blobs.keys()]);
  });

  it("shares a message's long content between copies that differ elsewhere (a write before its id)", async () => {
    const content = JSON.stringify({ rows: Array.from({ length: 300 }, (_, i) => ({ i, v: `r${i}` })) });
    const before = await encodeValue(serde, [new ToolMessage({ content, tool_call_id: "c1" })]);
    const after = await encodeValue(serde, [
      new ToolMessage({ content, tool_call_id: "c1", id: "given-later" }),
    ]);
    const big = [...before.blobs].filter(([, b]) => b.length >= content.length).map(([id]) => id);
    expect(big).toHaveLength(1);
    expect(after.blobs.has(big[0])).toBe(true);
    const [back] = (await decodeValue(serde, after.ref, after.blobs)) as ToolMessage[];
    expect(back.content).toBe(content);
    expect(back.id).toBe("given-later");
  });

  it("chunks a value larger than a document and reads it back byte-identical", async () => {
    const big = randomBytes(2_400_000).toString("base64");
    const { enc, back } = await roundTrip({ content: big });
    const sizes = [...enc.blobs.values()].map((b) => b.length);
    expect(sizes.length).toBe(Math.ceil((big.length + 20) / CHUNK_BYTES));
    expect(Math.max(...sizes)).toBeLessThanOrEqual(CHUNK_BYTES);
    expect((back as { content: string }).content === big).toBe(true);
  });

  it("round-trips raw bytes, arrays of primitives, nulls and nested arrays", async () => {
    const bytes = new Uint8Array([0, 1, 2, 255]);
    expect((await roundTrip(bytes)).back).toEqual(bytes);
    const mixed = ["dog", 1, null, { a: [1, 2] }, "y".repeat(INLINE_BYTES)];
    expect((await roundTrip(mixed)).back).toEqual(mixed);
    expect((await roundTrip([])).back).toEqual([]);
    // Not split (undefined has no serialization of its own): stored whole, as the serializer keeps it.
    expect((await roundTrip([undefined, 1])).back).toEqual(
      await serde.loadsTyped(...(await serde.dumpsTyped([undefined, 1]))),
    );
  });

  it("says which blob is missing", async () => {
    const enc = await encodeValue(serde, { content: "z".repeat(5000) });
    const [id] = refBlobIds(enc.ref);
    await expect(decodeValue(serde, enc.ref, new Map())).rejects.toThrow(new MissingBlobError(id));
  });

  it("names blobs by their content", () => {
    expect(blobId(Buffer.from("a"))).toBe(blobId(Buffer.from("a")));
    expect(blobId(Buffer.from("a"))).not.toBe(blobId(Buffer.from("b")));
    expect(blobId(Buffer.from("a"))).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });
});

describe("document ids", () => {
  it("keeps plain ids readable and escapes the rest injectively", () => {
    const inputs = ["thread-1", "", "a/b", "__x__", ".", "..", "child:1|grand:2", "~x", "é", "x".repeat(300)];
    const keys = inputs.map(keyOf);
    expect(keys[0]).toBe("thread-1");
    expect(new Set(keys).size).toBe(inputs.length);
    for (const k of keys) {
      expect(k).not.toContain("/");
      expect(k).not.toMatch(/^__.*__$/);
      expect(k.length).toBeGreaterThan(0);
      expect(k.length).toBeLessThanOrEqual(202);
    }
  });

  it("derives checkpoint and write keys deterministically", () => {
    expect(checkpointDocId("", "1ef")).toBe(checkpointDocId("", "1ef"));
    expect(checkpointDocId("a", "b!c")).not.toBe(checkpointDocId("a!b", "c"));
    expect(writeKey("task", 0)).toBe(writeKey("task", 0));
    expect(writeKey("task", 0)).not.toBe(writeKey("task", -1));
  });
});

describe("errors", () => {
  it("name the operation, thread and checkpoint, keep the cause, and hint at the fix", () => {
    const cause = Object.assign(new Error("9 FAILED_PRECONDITION: The query requires an index."), {
      code: 9,
    });
    const err = wrapError({ operation: "list", threadId: "t1", checkpointNs: "", checkpointId: "c1" }, cause);
    expect(err).toBeInstanceOf(FirestoreCheckpointerError);
    expect(err.message).toContain('FirestoreCheckpointer.list (thread "t1", checkpoint "c1")');
    expect(err.message).toContain("firestore.indexes.json");
    expect(err.cause).toBe(cause);
    expect(err.code).toBe("checkpointer:firestore");
  });

  it("refuse a missing firestore or a document path as rootCollection", () => {
    expect(() => new FirestoreCheckpointer({} as never)).toThrow(/firestore/);
    const firestore = {} as never;
    expect(() => new FirestoreCheckpointer({ firestore, rootCollection: "a/b" })).toThrow(/collection path/);
    expect(() => new FirestoreCheckpointer({ firestore, ttl: { days: 0 } })).toThrow(/ttl.days/);
  });

  it("refuse put and putWrites without the ids they need", async () => {
    const saver = new FirestoreCheckpointer({ firestore: {} as never });
    const cp = { v: 4, id: "c", ts: "", channel_values: {}, channel_versions: {}, versions_seen: {} };
    await expect(saver.put({}, cp, { source: "loop", step: 0, parents: {} }, {})).rejects.toThrow(
      /thread_id/,
    );
    await expect(saver.putWrites({ configurable: { thread_id: "t" } }, [], "task")).rejects.toThrow(
      /checkpoint_id/,
    );
    expect(await saver.getTuple({ configurable: {} })).toBeUndefined();
  });
});

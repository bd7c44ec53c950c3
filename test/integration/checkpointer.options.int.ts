/**
 * FirestoreCheckpointer options and failure reporting on the emulator: TTL fields (and their
 * refresh on blobs still in use), a deleted blob reported with its thread and checkpoint, and the
 * published `@quarry/functions/checkpointer` subpath (built CommonJS with type declarations).
 */
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import type { Firestore, Timestamp } from "@google-cloud/firestore";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { FirestoreCheckpointer, FirestoreCheckpointerError } from "../../functions/src/checkpointer";
import { refBlobIds } from "../../functions/src/checkpointer/codec";
import { conversationGraph, turnInput } from "./checkpointer/conversation";
import { emulatorFirestore, freshRoot } from "./checkpointer/firestore";

let firestore: Firestore;

beforeAll(() => {
  firestore = emulatorFirestore();
});

afterAll(async () => {
  await firestore?.terminate();
});

const DAY = 86_400_000;
const cfg = (thread_id: string) => ({ configurable: { thread_id } });

describe("ttl option", () => {
  it("stamps every document and pushes forward blobs that newer checkpoints still use", async () => {
    const root = freshRoot();
    const saver = new FirestoreCheckpointer({ firestore, rootCollection: root, ttl: { days: 30 } });
    const graph = conversationGraph(saver);
    await graph.invoke(turnInput(1), cfg("ttl"));

    const docs = [
      ...(await firestore.collection(`${root}/ttl/checkpoints`).get()).docs,
      ...(await firestore.collection(`${root}/ttl/blobs`).get()).docs,
    ];
    expect(docs.length).toBeGreaterThan(5);
    // Documents expire after 30 days, blobs after 45 (so they outlive whatever references them).
    for (const d of docs) {
      const days = d.ref.parent.id === "blobs" ? 45 : 30;
      const at = (d.get("expireAt") as Timestamp).toMillis();
      expect(Math.abs(at - (Date.now() + days * DAY))).toBeLessThan(10 * 60_000);
    }

    // Age the blobs as if written 20 days ago; a fresh instance reads them (learning their expiry)
    // and the next turn, which carries the old messages over, refreshes them.
    const aged = new Date(Date.now() + 10 * DAY);
    const blobs = await firestore.collection(`${root}/ttl/blobs`).get();
    await Promise.all(blobs.docs.map((d) => d.ref.update({ expireAt: aged })));
    const later = conversationGraph(
      new FirestoreCheckpointer({ firestore, rootCollection: root, ttl: { days: 30 } }),
    );
    await later.invoke(turnInput(2), cfg("ttl"));
    const latest = (
      await firestore.collection(`${root}/ttl/checkpoints`).orderBy("checkpoint_id", "desc").limit(1).get()
    ).docs[0];
    const used = new Set(
      Object.values(latest.get("ch") as Record<string, { r: Buffer }>).flatMap((e) => refBlobIds(e.r)),
    );
    const reused = blobs.docs.filter((d) => used.has(d.id));
    expect(reused.length).toBeGreaterThanOrEqual(4); // turn 1's messages, carried into turn 2
    const after = await firestore.getAll(...reused.map((d) => d.ref));
    const latestExpiry = (latest.get("expireAt") as Timestamp).toMillis();
    for (const d of after) {
      expect((d.get("expireAt") as Timestamp).toMillis()).toBeGreaterThanOrEqual(latestExpiry);
      expect(d.get("d")).toBeInstanceOf(Buffer);
    }
  });

  it("uses a custom field name", async () => {
    const root = freshRoot();
    const saver = new FirestoreCheckpointer({
      firestore,
      rootCollection: root,
      ttl: { days: 1, field: "purgeAt" },
    });
    await conversationGraph(saver).invoke(turnInput(1), cfg("t"));
    const snap = await firestore.collection(`${root}/t/checkpoints`).limit(1).get();
    expect(snap.docs[0].get("purgeAt")).toBeDefined();
    expect(snap.docs[0].get("expireAt")).toBeUndefined();
  });
});

describe("failures", () => {
  it("report a missing blob with the thread and checkpoint it breaks", async () => {
    const root = freshRoot();
    const saver = new FirestoreCheckpointer({ firestore, rootCollection: root });
    await conversationGraph(saver).invoke(turnInput(1), cfg("broken"));
    const blobs = await firestore.collection(`${root}/broken/blobs`).get();
    await Promise.all(blobs.docs.map((d) => d.ref.delete()));

    const fresh = new FirestoreCheckpointer({ firestore, rootCollection: root });
    const err = await fresh.getTuple(cfg("broken")).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FirestoreCheckpointerError);
    const e = err as FirestoreCheckpointerError;
    expect(e.code).toBe("checkpointer:corrupt");
    expect(e.threadId).toBe("broken");
    expect(e.checkpointId).toMatch(/^[0-9a-f-]{36}$/);
    expect(e.message).toContain('thread "broken"');
    expect(e.message).toMatch(/blob \S+ is missing/);
  });
});

describe("the published subpath", () => {
  it("@quarry/functions/checkpointer loads as CommonJS with types and works", async () => {
    const root = path.resolve(__dirname, "../..");
    expect(existsSync(path.join(root, "functions/lib/checkpointer/index.d.ts"))).toBe(true);
    const require = createRequire(path.join(root, "package.json"));
    const mod =
      require("@quarry/functions/checkpointer") as typeof import("../../functions/src/checkpointer");
    const saver = new mod.FirestoreCheckpointer({ firestore, rootCollection: freshRoot() });
    const out = await conversationGraph(saver).invoke(turnInput(1), cfg("pkg"));
    expect(out.messages).toHaveLength(4);
    expect((await saver.getTuple(cfg("pkg")))?.checkpoint.channel_values.turns).toBe(1);
  });
});

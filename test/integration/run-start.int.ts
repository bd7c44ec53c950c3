/**
 * How a run starts, on the Firestore emulator: the checkpointer's `getTupleAlong` / `putAlong`, the
 * thread store's lease taken in the commit of the run's first checkpoint (and the race it must
 * refuse), and the per-run RunCheckpointer that holds later steps back until the answer streams.
 */
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { FieldValue, Timestamp, type Firestore, type WriteBatch } from "@google-cloud/firestore";
import { randomUUID } from "node:crypto";
import type { RunnableConfig } from "@langchain/core/runnables";
import { HumanMessage } from "@langchain/core/messages";
import { Command, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { FirestoreCheckpointer } from "../../functions/src/checkpointer";
import { QuarryError } from "../../functions/src/errors";
import { isStale } from "../../functions/src/storage";
import { RunCheckpointer } from "../../functions/src/runs/checkpointer";
import type { RunClaim } from "../../functions/src/runs/thread-doc";
import { RunStore } from "../../functions/src/runs/run-store";
import { takeOver } from "../../functions/src/runs/takeover";
import { ThreadStore } from "../../functions/src/runs/thread-store";
import { conversationGraph, turnInput } from "./checkpointer/conversation";
import { emulatorFirestore, freshRoot } from "./checkpointer/firestore";
import { countRpcs } from "./checkpointer/rpc";

let firestore: Firestore;

beforeAll(() => {
  firestore = emulatorFirestore();
});

afterAll(async () => {
  await firestore?.terminate();
});

const cfg = (thread_id: string): RunnableConfig => ({ configurable: { thread_id, checkpoint_ns: "" } });

function storeOn(db: Firestore, collection = freshRoot("threads")) {
  return new ThreadStore(
    db as unknown as ConstructorParameters<typeof ThreadStore>[0],
    collection,
    FieldValue as unknown as ConstructorParameters<typeof ThreadStore>[2],
    Timestamp as unknown as ConstructorParameters<typeof ThreadStore>[3],
  );
}

/** The run store (the lease's operations) over a thread store. */
function runsOf(store: ThreadStore) {
  return new RunStore(
    firestore as unknown as ConstructorParameters<typeof RunStore>[0],
    store,
    FieldValue as unknown as ConstructorParameters<typeof RunStore>[2],
    Timestamp as unknown as ConstructorParameters<typeof RunStore>[3],
  );
}

const claim = (runId: string): RunClaim => ({ runId, leaseMs: 10_000, question: "How many orders?" });

async function checkpointCount(root: string, threadId: string) {
  return (await firestore.collection(`${root}/${threadId}/checkpoints`).get()).size;
}

describe("FirestoreCheckpointer.getTupleAlong", () => {
  it("returns getTuple's tuple and the caller's documents, still in two round trips", async () => {
    const root = freshRoot();
    const saver = new FirestoreCheckpointer({ firestore, rootCollection: root });
    await conversationGraph(saver).invoke(turnInput(1), cfg("t1"));
    const mine = firestore.doc(`${freshRoot("app")}/meta`);
    await mine.set({ owner: "alice" });
    const missing = firestore.doc(`${freshRoot("app")}/none`);

    const fresh = new FirestoreCheckpointer({ firestore, rootCollection: root });
    const rpcs = countRpcs(firestore);
    const got = await fresh.getTupleAlong(cfg("t1"), [mine, missing]);
    expect(rpcs.map((r) => r.method)).toEqual(["runQuery", "batchGetDocuments"]);
    expect(got.along.map((s) => s.exists)).toEqual([true, false]);
    expect(got.along[0].get("owner")).toBe("alice");
    const plain = await fresh.getTuple(cfg("t1"));
    expect(got.tuple?.checkpoint).toEqual(plain?.checkpoint);
    expect(got.tuple?.pendingWrites).toEqual(plain?.pendingWrites);

    // A thread without checkpoints: no tuple, the documents all the same.
    const empty = await fresh.getTupleAlong(cfg("nothing-here"), [mine]);
    expect(empty.tuple).toBeUndefined();
    expect(empty.along[0].get("owner")).toBe("alice");
  });
});

describe("FirestoreCheckpointer.putAlong", () => {
  it("commits the caller's writes with the checkpoint, or neither when their precondition fails", async () => {
    const root = freshRoot();
    const saver = new FirestoreCheckpointer({ firestore, rootCollection: root });
    await conversationGraph(saver).invoke(turnInput(1), cfg("t"));
    const latest = (await saver.getTuple(cfg("t")))!;
    const lease = firestore.doc(`${freshRoot("app")}/lease`);
    await lease.set({ holder: null });
    const read = await lease.get();
    const next = { ...latest.checkpoint, id: "1ff-next-a" };
    const before = await checkpointCount(root, "t");

    // Someone else changes the document after we read it: nothing of ours lands.
    await lease.update({ holder: "other" });
    const stale = saver.putAlong(latest.config, next, { source: "loop", step: 9, parents: {} }, {}, (b) =>
      b.update(lease, { holder: "me" }, { lastUpdateTime: read.updateTime }),
    );
    await expect(stale).rejects.toMatchObject({ cause: { code: 9 } });
    expect(await checkpointCount(root, "t")).toBe(before);
    expect((await lease.get()).get("holder")).toBe("other");

    // With a fresh read, both land in one commit.
    const again = await lease.get();
    const rpcs = countRpcs(firestore);
    await saver.putAlong(latest.config, next, { source: "loop", step: 9, parents: {} }, {}, (b) =>
      b.update(lease, { holder: "me" }, { lastUpdateTime: again.updateTime }),
    );
    expect(rpcs.map((r) => r.method)).toEqual(["commit"]);
    expect(await checkpointCount(root, "t")).toBe(before + 1);
    expect((await lease.get()).get("holder")).toBe("me");
    expect((await saver.getTuple(cfg("t")))?.checkpoint.id).toBe("1ff-next-a");
  });
});

describe("RunStore.claimLease", () => {
  it("of two runs that read a free thread at once, exactly one gets the lease; the other a 409", async () => {
    const store = storeOn(firestore);
    const id = randomUUID();
    await store.create(id, "alice", {}, "raise");
    const snap = await store.ref(id).get();
    const marks = firestore.doc(`${freshRoot("app")}/marks`);
    const commitWith = (tag: string) => (along: (b: WriteBatch) => void) => {
      const batch = firestore.batch();
      batch.set(marks, { [tag]: true }, { merge: true });
      along(batch as never);
      return batch.commit();
    };
    const results = await Promise.allSettled([
      runsOf(store).claimLease(id, "alice", claim("run-a"), snap as never, commitWith("a")),
      runsOf(store).claimLease(id, "alice", claim("run-b"), snap as never, commitWith("b")),
    ]);
    const won = results.filter((r) => r.status === "fulfilled");
    const lost = results.filter((r) => r.status === "rejected") as PromiseRejectedResult[];
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect(lost[0].reason).toBeInstanceOf(QuarryError);
    expect((lost[0].reason as QuarryError).code).toBe("conflict:run");
    // Only the winner's commit landed, with the lease in it.
    const doc = await store.get(id, "alice");
    const winner = doc.run!.runId;
    expect(["run-a", "run-b"]).toContain(winner);
    expect(Object.keys((await marks.get()).data() ?? {})).toEqual([winner === "run-a" ? "a" : "b"]);
    expect(doc.status).toBe("busy");
    expect(doc.title).toBe("How many orders?");
  });

  it("re-reads when something else changed the thread, and still takes a free lease", async () => {
    const store = storeOn(firestore);
    const id = randomUUID();
    await store.create(id, "alice", { title: "kept" }, "raise");
    const snap = await store.ref(id).get();
    await store.patchMetadata(id, "alice", { color: "blue" });
    const rpcs = countRpcs(firestore);
    await runsOf(store).claimLease(id, "alice", claim("run-c"), snap as never, (along) => {
      const batch = firestore.batch();
      along(batch as never);
      return batch.commit();
    });
    // commit refused (stale), read, commit.
    expect(rpcs.map((r) => r.method)).toEqual(["commit", "batchGetDocuments", "commit"]);
    const doc = await store.get(id, "alice");
    expect(doc.run?.runId).toBe("run-c");
    expect(doc.title).toBe("kept");
    expect(doc.metadata.color).toBe("blue");
  });

  it("refuses when a whole other run started and ended between the read and the claim", async () => {
    const store = storeOn(firestore);
    const id = randomUUID();
    await store.create(id, "alice", {}, "raise");
    const stale = await store.ref(id).get();
    const commitOnly = (along: (b: WriteBatch) => void) => {
      const batch = firestore.batch();
      along(batch as never);
      return batch.commit();
    };
    await runsOf(store).claimLease(id, "alice", claim("meanwhile"), stale as never, commitOnly);
    await runsOf(store).releaseLease(id, "meanwhile", "idle");
    // Our checkpoint would hang off the one read before that run: refused, nothing taken.
    await expect(
      runsOf(store).claimLease(id, "alice", claim("late"), stale as never, commitOnly),
    ).rejects.toThrow(/had another run \(meanwhile\)/);
    expect((await store.get(id, "alice")).run).toBeNull();
  });

  it("refuses another user's thread and a held lease before anything runs", async () => {
    const store = storeOn(firestore);
    const id = randomUUID();
    await store.create(id, "alice", {}, "raise");
    const snap = await store.ref(id).get();
    expect(() => runsOf(store).refuseUnclaimable(id, snap as never, "mallory", claim("x"))).toThrow(
      /not found/,
    );
    await runsOf(store).claimLease(id, "alice", claim("first"), snap as never, (along) => {
      const batch = firestore.batch();
      along(batch as never);
      return batch.commit();
    });
    const held = await store.ref(id).get();
    expect(() => runsOf(store).refuseUnclaimable(id, held as never, "alice", claim("second"))).toThrow(
      /already has a run in progress \(first\)/,
    );
  });
});

describe("releasing a run", () => {
  const commitOnly = (along: (b: WriteBatch) => void) => {
    const batch = firestore.batch();
    along(batch as never);
    return batch.commit();
  };
  /** A thread held by `runId`, and its document as a watch on it would have seen it. */
  async function held(runId: string) {
    const store = storeOn(firestore);
    const id = randomUUID();
    await store.create(id, "alice", {}, "raise");
    await runsOf(store).claimLease(
      id,
      "alice",
      claim(runId),
      (await store.ref(id).get()) as never,
      commitOnly,
    );
    const snap = await store.ref(id).get();
    const seen = { doc: snap.data() as never, updateTime: snap.updateTime! as never };
    const usage = firestore.doc(`${freshRoot("usage")}/alice_day`);
    const end = {
      status: "idle" as const,
      outcome: "success" as const,
      usage: { totalTokens: 5 },
      charge: { ref: usage as never, fields: { tokens: FieldValue.increment(5) } },
      markTtlMs: 60_000,
    };
    const mark = store.ref(id).collection("runs").doc(runId).collection("ended").doc("a0");
    return { store, runs: runsOf(store), id, seen, end, usage, mark };
  }

  it("rides another commit, made from the version a watch saw: all of it lands at once, nothing read", async () => {
    const { store, runs, id, seen, end, usage, mark } = await held("r1");
    const release = runs.releaseAlong(id, seen, "r1", end)!;
    expect(release).toBeDefined();
    const other = firestore.doc(`${freshRoot("app")}/log-end`);
    const rpcs = countRpcs(firestore);
    await commitOnly((b) => {
      b.create(other as never, { end: true });
      release(b);
    });
    expect(rpcs.map((r) => r.method)).toEqual(["commit"]);
    const thread = await store.ref(id).get();
    expect(thread.get("run")).toBeNull();
    expect(thread.get("status")).toBe("idle");
    expect(thread.get("lastRunEnd")).toEqual({ runId: "r1", outcome: "success" });
    expect(thread.get("usage.totalTokens")).toBe(5);
    expect((await usage.get()).get("tokens")).toBe(5);
    expect((await mark.get()).exists).toBe(true);
    for (const doc of [other, usage, mark])
      expect((await doc.get()).updateTime!.isEqual(thread.updateTime!)).toBe(true);
  });

  it("is refused whole when the thread changed since the watch saw it; the release then reads again", async () => {
    const { store, runs, id, seen, end, usage, mark } = await held("r2");
    await store.patchMetadata(id, "alice", { color: "blue" }); // after the version the watch saw
    const release = runs.releaseAlong(id, seen, "r2", end)!;
    const other = firestore.doc(`${freshRoot("app")}/log-end`);
    const refused = await commitOnly((b) => {
      b.create(other as never, { end: true });
      release(b);
    }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(isStale(refused)).toBe(true);
    expect((await other.get()).exists).toBe(false); // nothing of that commit was written
    expect((await usage.get()).exists).toBe(false);
    expect((await store.ref(id).get()).get("run.runId")).toBe("r2");
    await expect(runs.releaseMarked(id, "r2", end)).resolves.toBe(false); // written now
    const thread = await store.ref(id).get();
    expect(thread.get("run")).toBeNull();
    expect(thread.get("usage.totalTokens")).toBe(5);
    expect(thread.get("metadata.color")).toBe("blue");
    expect((await usage.get()).get("tokens")).toBe(5);
    expect((await mark.get()).exists).toBe(true);
  });

  it("lands once, whichever commit carrying it comes first", async () => {
    // The commit carrying it landed (its answer lost): the release finds the mark, writes nothing.
    const a = await held("r3");
    await commitOnly(a.runs.releaseAlong(a.id, a.seen, "r3", a.end)!);
    const before = await a.store.ref(a.id).get();
    await expect(a.runs.releaseMarked(a.id, "r3", a.end)).resolves.toBe(true);
    await expect(a.runs.chargeMarked(a.id, "r3", a.end)).resolves.toBe(false);
    const after = await a.store.ref(a.id).get();
    expect(after.updateTime!.isEqual(before.updateTime!)).toBe(true); // not written again
    expect(after.get("usage.totalTokens")).toBe(5);
    expect((await a.usage.get()).get("tokens")).toBe(5); // charged once
    // The release went its own way first: a commit carrying it that arrives late is refused whole.
    const b = await held("r4");
    const late = b.runs.releaseAlong(b.id, b.seen, "r4", b.end)!;
    await expect(b.runs.releaseMarked(b.id, "r4", b.end)).resolves.toBe(false);
    await expect(commitOnly(late)).rejects.toThrow();
    expect((await b.store.ref(b.id).get()).get("usage.totalTokens")).toBe(5);
    expect((await b.usage.get()).get("tokens")).toBe(5);
  });

  /** A watchdog takes the run's lapsed attempt 0 over: to go on with it, or (`closing`) to close it. */
  async function takenOver(a: Awaited<ReturnType<typeof held>>, runId: string, closing = false) {
    await a.store.ref(a.id).update({ "run.expiresAt": Timestamp.fromMillis(0) }); // its lease lapsed
    const args = {
      threadId: a.id,
      runId,
      from: 0,
      leaseMs: 60_000,
      holder: "next",
      ttlMs: 60_000,
      log: false,
    };
    expect(await takeOver(a.runs, { ...args, closing })).toMatchObject({ attempt: 1 });
  }

  it("charges and counts nothing for an attempt a continuation took over: that one charges the turn", async () => {
    const a = await held("r6");
    await takenOver(a, "r6");
    const before = await a.store.ref(a.id).get();
    await expect(a.runs.releaseMarked(a.id, "r6", a.end)).resolves.toBe(false);
    expect((await a.mark.get()).exists).toBe(true); // this attempt's end is recorded
    expect((await a.usage.get()).exists).toBe(false); // not charged
    const after = await a.store.ref(a.id).get();
    expect(after.get("run")).toEqual(before.get("run")); // the continuation still holds the run
    expect(after.get("usage")).toEqual(before.get("usage")); // and counts the turn itself
    // The charge alone (its release could not be written) is not applied either.
    const b = await held("r7");
    await takenOver(b, "r7");
    await expect(b.runs.chargeMarked(b.id, "r7", b.end)).resolves.toBe(true);
    expect((await b.mark.get()).exists).toBe(true);
    expect((await b.usage.get()).exists).toBe(false);
  });

  it("still charges an attempt whose run a watchdog only closed: nobody else charges it", async () => {
    const a = await held("r8");
    await takenOver(a, "r8", true);
    await expect(a.runs.releaseMarked(a.id, "r8", a.end)).resolves.toBe(false);
    expect((await a.usage.get()).get("tokens")).toBe(5);
    const b = await held("r9");
    await takenOver(b, "r9", true);
    await expect(b.runs.chargeMarked(b.id, "r9", b.end)).resolves.toBe(true);
    await expect(b.runs.chargeMarked(b.id, "r9", b.end)).resolves.toBe(false); // once
    expect((await b.usage.get()).get("tokens")).toBe(5);
  });

  it("is not offered from a version that does not show this attempt holding the run", async () => {
    const { runs, id, seen, end } = await held("r5");
    expect(runs.releaseAlong(id, undefined, "r5", end)).toBeUndefined(); // the watch saw nothing yet
    expect(runs.releaseAlong(id, seen, "another-run", end)).toBeUndefined();
    expect(runs.releaseAlong(id, seen, "r5", { ...end, attempt: 1 })).toBeUndefined();
  });
});

describe("RunCheckpointer", () => {
  function frontFor(saver: FirestoreCheckpointer, threadId: string, tuple = undefined) {
    const lease = firestore.doc(`${freshRoot("app")}/lease`);
    const front = new RunCheckpointer(saver, { threadId, tuple }, async (put) => {
      const read = await lease.get();
      await put((b) => b.set(lease, { runId: "r1", read: read.exists }));
    });
    return { front, lease };
  }

  it("stores only the first checkpoint (with the caller's writes) until the run ends, then the last as its child", async () => {
    const root = freshRoot();
    const saver = new FirestoreCheckpointer({ firestore, rootCollection: root });
    const reference = new FirestoreCheckpointer({ firestore, rootCollection: freshRoot() });
    await conversationGraph(reference).invoke(turnInput(1), { ...cfg("t"), durability: "sync" });
    const referenceSteps: number[] = [];
    for await (const t of reference.list(cfg("t"))) referenceSteps.push(t.metadata!.step);
    expect(referenceSteps.length).toBeGreaterThan(2);

    const { front, lease } = frontFor(saver, "t");
    await conversationGraph(front).invoke(turnInput(1), { ...cfg("t"), durability: "sync" });
    await front.started;
    // The graph has finished, yet only its first checkpoint is stored, together with the lease.
    expect(await checkpointCount(root, "t")).toBe(1);
    expect((await lease.get()).get("runId")).toBe("r1");
    const first = (await saver.getTuple(cfg("t")))!;
    expect(first.metadata?.step).toBe(-1);

    await front.drain();
    // The steps between are folded into the last one, which hangs off the first.
    const kept: { step: number; id: string; parent?: string }[] = [];
    for await (const t of saver.list(cfg("t")))
      kept.push({
        step: t.metadata!.step,
        id: t.config.configurable!.checkpoint_id as string,
        parent: t.parentConfig?.configurable?.checkpoint_id as string | undefined,
      });
    expect(kept.map((k) => k.step)).toEqual([referenceSteps[0], referenceSteps.at(-1)]);
    expect(kept[0].parent).toBe(kept[1].id);
    const final = (await saver.getTuple(cfg("t")))!;
    const expected = (await reference.getTuple(cfg("t")))!;
    // Message ids are random per run: compare what the messages say. Every channel the folded
    // steps wrote is readable from the last checkpoint.
    const said = (t: typeof final) =>
      (t.checkpoint.channel_values.messages as Array<{ getType(): string; content: unknown }>).map((m) => [
        m.getType(),
        m.content,
      ]);
    expect(said(final)).toEqual(said(expected));
    expect(final.checkpoint.channel_values.turns).toBe(expected.checkpoint.channel_values.turns);
    expect(Object.keys(final.checkpoint.channel_values).sort()).toEqual(
      Object.keys(expected.checkpoint.channel_values).sort(),
    );
  });

  it("serves the tuple read beforehand and writes the rest when the run ends", async () => {
    const root = freshRoot();
    const saver = new FirestoreCheckpointer({ firestore, rootCollection: root });
    await conversationGraph(saver).invoke(turnInput(1), { ...cfg("t"), durability: "sync" });
    const tuple = (await saver.getTuple(cfg("t")))!;

    const perTurn = await checkpointCount(root, "t");
    const { front } = frontFor(saver, "t", tuple as never);
    const rpcs = countRpcs(firestore);
    const out = await conversationGraph(front).invoke(turnInput(2), { ...cfg("t"), durability: "sync" });
    // The lease read and one commit: the turn's state came from the tuple read before.
    expect(rpcs.map((r) => r.method)).toEqual(["batchGetDocuments", "commit"]);
    expect(out.messages.filter((m: { getType(): string }) => m.getType() === "human")).toHaveLength(2);
    await front.drain(); // keeps the turn's last checkpoint: two for the turn
    expect(await checkpointCount(root, "t")).toBe(perTurn + 2);
    const latest = (await saver.getTuple(cfg("t")))!;
    expect((latest.checkpoint.channel_values.messages as unknown[]).length).toBe(8);
  });

  it("ends a turn in one commit: the first checkpoint gets no pending writes once a later one holds their effect", async () => {
    const root = freshRoot();
    const saver = new FirestoreCheckpointer({ firestore, rootCollection: root });
    const { front } = frontFor(saver, "t");
    // A turn as Quarry gives it (functions/src/agent/graph.ts turnInput): the first step's task runs
    // on the first checkpoint, so its writes are made on it.
    await conversationGraph(front).invoke(new Command({ update: turnInput(1), goto: "agent" }), {
      ...cfg("t"),
      durability: "sync",
    });
    await front.started;
    const first = (await saver.getTuple(cfg("t")))!;
    const rpcs = countRpcs(firestore);
    await front.drain();
    // The last checkpoint alone: the agent's writes on the first are not stored beside it.
    expect(rpcs.map((r) => r.method)).toEqual(["commit"]);
    const firstAfter = (await saver.getTuple(first.config))!;
    expect(firstAfter.pendingWrites).toEqual([]);
    const last = (await saver.getTuple(cfg("t")))!;
    expect(last.parentConfig?.configurable?.checkpoint_id).toBe(first.config.configurable?.checkpoint_id);
  });

  it("stores what a run's first step wrote on the first checkpoint when the run ends there (its error)", async () => {
    const root = freshRoot();
    const saver = new FirestoreCheckpointer({ firestore, rootCollection: root });
    const { front } = frontFor(saver, "t");
    const failing = new StateGraph(MessagesAnnotation)
      .addNode("agent", () => {
        throw new Error("the model is down");
      })
      .addEdge(START, "agent")
      .compile({ checkpointer: front });
    await expect(
      failing.invoke(new Command({ update: { messages: [new HumanMessage("Q?")] }, goto: "agent" }), {
        ...cfg("t"),
        durability: "sync",
      }),
    ).rejects.toThrow(/model is down/);
    await front.drain();
    const first = (await saver.getTuple(cfg("t")))!;
    expect(first.metadata?.step).toBe(-1);
    expect(first.pendingWrites?.map(([, channel]) => channel)).toEqual(["__error__"]);
  });

  it("once closed, writes nothing more and leaves no unhandled rejection", async () => {
    const root = freshRoot();
    const saver = new FirestoreCheckpointer({ firestore, rootCollection: root });
    const { front } = frontFor(saver, "t");
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      const graph = conversationGraph(front);
      await graph.invoke(turnInput(1), { ...cfg("t"), durability: "sync" });
      await front.started;
      front.close(new Error("lease lost"));
      // LangGraph keeps calling the saver after a close (a second turn here): refused quietly.
      await front.put(
        cfg("t"),
        { ...(await saver.getTuple(cfg("t")))!.checkpoint, id: "1ff-x" },
        {
          source: "loop",
          step: 1,
          parents: {},
        },
        {},
      );
      await front.putWrites({ configurable: { thread_id: "t", checkpoint_id: "1ff-x" } }, [["x", 1]], "task");
      await expect(front.drain()).rejects.toThrow(/lease lost/);
      // Node reports an unhandled rejection once the microtasks of the turn that made it have run;
      // the next macrotask comes after that report, so every rejection made so far has been seen.
      await new Promise((r) => setImmediate(r));
      expect(unhandled).toEqual([]);
      expect(await checkpointCount(root, "t")).toBe(1); // only the first, committed with the lease
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });

  it("reports a failed background write and refuses to pretend it was stored", async () => {
    const db = emulatorFirestore();
    const saver = new FirestoreCheckpointer({ firestore: db, rootCollection: freshRoot() });
    const { front } = frontFor(saver, "t");
    const failures: unknown[] = [];
    front.onFailure = (err) => failures.push(err);
    await conversationGraph(front).invoke(turnInput(1), { ...cfg("t"), durability: "sync" });
    await front.started;
    await db.terminate(); // the database is gone before the held-back steps are written
    await expect(front.drain()).rejects.toThrow(/terminated/);
    expect(failures).toHaveLength(1);
  });
});

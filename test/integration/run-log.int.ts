/**
 * The run event log (functions/src/runs/event-log.ts) on the Firestore emulator: batching,
 * events larger than a document split and joined again, replay after an id, following a live log
 * to its end marker, and a run lost without one.
 */
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { deleteApp, initializeApp, type App } from "firebase-admin/app";
import { getFirestore, Timestamp, type Firestore } from "firebase-admin/firestore";
import { randomBytes, randomUUID } from "node:crypto";
import { RunLogWriter, followRunLog, runLog, type LoggedEvent } from "../../functions/src/runs/event-log";
import { stackEnv } from "../support/stack-env";

let admin: App;
let db: Firestore;

beforeAll(() => {
  admin = initializeApp({ projectId: stackEnv().env.GCLOUD_PROJECT }, `run-log-${Date.now()}`);
  db = getFirestore(admin);
});

afterAll(async () => {
  await deleteApp(admin);
});

const newLog = () => runLog(db.collection("threads").doc(randomUUID()).collection("runs").doc(randomUUID()));
const writer = (log: ReturnType<typeof newLog>, flushMs = 60_000) =>
  new RunLogWriter(log, { ttlMs: 3_600_000, timestamp: Timestamp, flushMs });
const never = () => () => {};

describe("the run event log", () => {
  it("batches events into few documents and replays them all, or those after an id", async () => {
    const log = newLog();
    const w = writer(log);
    for (let i = 0; i < 50; i++)
      w.append("messages", [{ content: `token ${i}` }, { langgraph_node: "generator" }]);
    w.boundary();
    w.append("custom", { type: "phase", phase: "done" });
    await w.close({ status: "success" });
    expect(w.writes).toBe(2); // 50 events at a boundary, then 1 with the end marker
    const all: LoggedEvent[] = [];
    expect(await followRunLog(log, { after: 0, onEvent: (e) => all.push(e), watchRun: never })).toEqual({
      status: "success",
    });
    expect(all.map((e) => e.id)).toEqual(Array.from({ length: 51 }, (_, i) => i + 1));
    expect(all[3]).toEqual({
      id: 4,
      event: "messages",
      data: [{ content: "token 3" }, { langgraph_node: "generator" }],
    });
    const rest: LoggedEvent[] = [];
    await followRunLog(log, { after: 48, onEvent: (e) => rest.push(e), watchRun: never });
    expect(rest.map((e) => e.id)).toEqual([49, 50, 51]);
  });

  it("splits an event bigger than a document and joins it again", async () => {
    const log = newLog();
    const w = writer(log);
    const rows = Array.from({ length: 30_000 }, (_, i) => ({ id: i, name: `row-${i}-é€😀` }));
    w.append("custom", { type: "result", rows });
    w.append("custom", { type: "phase", phase: "answering" });
    await w.close({ status: "success" });
    expect(w.writes).toBeGreaterThan(1);
    const got: LoggedEvent[] = [];
    await followRunLog(log, { after: 0, onEvent: (e) => got.push(e), watchRun: never });
    expect(got).toHaveLength(2);
    expect((got[0].data as { rows: unknown[] }).rows).toEqual(rows);
  });

  it("stores a long string (an image every values event repeats) once, and replays every event whole", async () => {
    const log = newLog();
    const w = writer(log);
    const image = randomBytes(150_000).toString("base64"); // 200,000 characters
    const other = "é😀".repeat(20_000); // long, and not ASCII
    const question = {
      type: "human",
      content: [
        { type: "text", text: "like this?" },
        { type: "image", data: image },
      ],
    };
    // What a user could put in a value: strings that look like the log's own marks stay as they were.
    const lookalikes = ["\u0000log:ref:0", "\u0000log:lit:x", "\u0000log:", "a\u0000log:ref:0"];
    const events = [
      { messages: [question] },
      { messages: [question, { type: "ai", content: other }] },
      { messages: [question, { type: "ai", content: other }, { type: "ai", content: "done" }], lookalikes },
      { lookalikes, copy: `${image}` },
    ];
    for (const e of events) w.append("values", e);
    await w.close({ status: "success" });
    const stored = (await log.get()).docs.reduce((n, d) => n + (d.get("bytes") as Buffer).length, 0);
    // Each long string once (the image's 200,000 characters, the other's 120,000 UTF-8 bytes), not per event.
    expect(stored).toBeGreaterThan(320_000);
    expect(stored).toBeLessThan(340_000);
    for (const after of [0, 2]) {
      const got: LoggedEvent[] = [];
      await followRunLog(log, { after, onEvent: (e) => got.push(e), watchRun: never });
      expect(got.map((e) => e.data)).toEqual(events.slice(after));
    }
  });

  it("follows a live log: events arrive as they are written, and it ends at the end marker", async () => {
    const log = newLog();
    const w = writer(log);
    const got: LoggedEvent[] = [];
    let seen = (_n: number) => {};
    const done = followRunLog(log, {
      after: 0,
      onEvent: (e) => {
        got.push(e);
        seen(got.length);
      },
      watchRun: never,
    });
    const reached = (n: number) => new Promise<void>((r) => (seen = (k) => k >= n && r()));
    w.append("metadata", { run_id: "r" });
    w.boundary();
    await reached(1);
    w.append("values", { messages: [] });
    w.append("custom", { type: "phase", phase: "planning" });
    w.boundary();
    await reached(3);
    await w.close({ status: "cancelled" });
    expect(await done).toEqual({ status: "cancelled" });
    expect(got.map((e) => e.event)).toEqual(["metadata", "values", "custom"]);
  });

  it("joins the flushes asked for while a write is on its way into the next write, losing nothing", async () => {
    const log = newLog();
    const w = writer(log);
    // Boundaries come faster than Firestore answers: the first write goes at once, the four asked
    // for while it is on its way, and the end marker, go together in the second.
    for (let i = 1; i <= 5; i++) {
      w.append("custom", { type: "phase", phase: `step ${i}` });
      w.boundary();
    }
    await w.close({ status: "success" });
    expect(w.writes).toBe(2);
    const got: LoggedEvent[] = [];
    expect(await followRunLog(log, { after: 0, onEvent: (e) => got.push(e), watchRun: never })).toEqual({
      status: "success",
    });
    expect(got.map((e) => [e.id, (e.data as { phase: string }).phase])).toEqual(
      [1, 2, 3, 4, 5].map((i) => [i, `step ${i}`]),
    );
  });

  it("a run that lets go of its thread without an end marker ends its readers as lost", async () => {
    const log = newLog();
    const w = writer(log);
    w.append("metadata", { run_id: "r" });
    w.boundary();
    let gone = () => {};
    const got: LoggedEvent[] = [];
    let first = () => {};
    const delivered = new Promise<void>((r) => (first = r));
    const done = followRunLog(log, {
      after: 0,
      onEvent: (e) => {
        got.push(e);
        first();
      },
      watchRun: (g) => {
        gone = g;
        return () => {};
      },
    });
    await delivered; // the follower has read the log up to the live point
    expect(got).toHaveLength(1);
    gone(); // the lease was released or ran out, and no end marker came
    expect(await done).toBe("lost");
  });
});

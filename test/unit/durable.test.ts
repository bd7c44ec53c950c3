/**
 * Durable runs' pure parts (docs/runs.md, "What survives what"): the watchdog's decision from the
 * thread document, a lapsed lease that still holds the thread while its run is continued, event
 * ids that continue above every id an earlier attempt could have sent, the v2 view of a hand-over
 * (the cut answer ends with an error, the redone one streams as a new message), and the watchdog
 * queue's retries covering every attempt of a run.
 */
import { describe, expect, it } from "vitest";
import { Timestamp, type CollectionReference } from "firebase-admin/firestore";
import { leaseHolder, watchVerdict, type ThreadDoc } from "../../functions/src/runs/thread-doc";
import { RunLogWriter, type LoggedEvent } from "../../functions/src/runs/event-log";
import { ProtocolView, runNoOfSeq } from "../../functions/src/http/v2/events";
import { watchdogRetryOf } from "../../functions/src/config/runs";

const NOW = 1_800_000_000_000;
const at = (ms: number) => Timestamp.fromMillis(ms);

function thread(run: Partial<NonNullable<ThreadDoc["run"]>> | null): ThreadDoc {
  return {
    owner: "u1",
    run:
      run === null
        ? null
        : { runId: "r1", expiresAt: at(NOW + 5_000), cancel: false, attempt: 0, graceMs: 30_000, ...run },
  } as ThreadDoc;
}

describe("the watchdog's decision", () => {
  it("looks again while the lease is held, continues a lapsed run, closes it once out of continuations", () => {
    expect(watchVerdict(thread({}), "r1", 0, 2, NOW)).toBe("held");
    expect(watchVerdict(thread({ expiresAt: at(NOW - 1) }), "r1", 0, 2, NOW)).toBe("continue");
    expect(watchVerdict(thread({ expiresAt: at(NOW - 1), attempt: 1 }), "r1", 1, 2, NOW)).toBe("continue");
    expect(watchVerdict(thread({ expiresAt: at(NOW - 1), attempt: 2 }), "r1", 2, 2, NOW)).toBe("give-up");
    // Handed off on purpose: continued at once, although its expiry is not past.
    expect(watchVerdict(thread({ handoff: true }), "r1", 0, 2, NOW)).toBe("continue");
  });

  it("closes a lapsed run someone cancelled, and leaves runs that ended or moved on alone", () => {
    expect(watchVerdict(thread({ expiresAt: at(NOW - 1), cancel: true }), "r1", 0, 2, NOW)).toBe("cancelled");
    expect(watchVerdict(thread(null), "r1", 0, 2, NOW)).toBe("done");
    expect(watchVerdict(thread({ runId: "r2" }), "r1", 0, 2, NOW)).toBe("done");
    // A later attempt took it over: it has a watchdog of its own.
    expect(watchVerdict(thread({ expiresAt: at(NOW - 1), attempt: 1 }), "r1", 0, 2, NOW)).toBe("done");
    expect(watchVerdict(undefined, "r1", 0, 2, NOW)).toBe("done");
  });
});

describe("a lapsed lease while its run is continued", () => {
  it("still holds the thread within its grace, not after it, and not once cancelled", () => {
    const lapsed = thread({ expiresAt: at(NOW - 1_000) });
    expect(leaseHolder(lapsed, NOW)).toBe("r1");
    expect(leaseHolder(lapsed, NOW + 28_999)).toBe("r1");
    expect(leaseHolder(lapsed, NOW + 29_000)).toBeUndefined();
    expect(leaseHolder(thread({ expiresAt: at(NOW - 1_000), cancel: true }), NOW)).toBeUndefined();
    // A lease without a grace (durable runs off, or an older run) holds nothing once it lapsed.
    expect(leaseHolder(thread({ expiresAt: at(NOW - 1), graceMs: undefined }), NOW)).toBeUndefined();
  });
});

describe("event ids across a hand-over", () => {
  const writer = (attempt?: number) =>
    new RunLogWriter({} as CollectionReference, {
      ttlMs: 60_000,
      timestamp: Timestamp,
      flushMs: 3_600_000,
      flushBytes: Number.MAX_SAFE_INTEGER,
      ...(attempt !== undefined ? { continues: { attempt, nextDoc: 7 } } : {}),
    });

  it("start above every id an earlier attempt could have sent, and stay in order", () => {
    const first = writer();
    expect([first.append("metadata", {}), first.append("values", {})]).toEqual([1, 2]);
    const second = writer(1);
    const ids = [second.append("metadata", { attempt: 2 }), second.append("values", {})];
    expect(ids).toEqual([2 ** 24 + 1, 2 ** 24 + 2]);
    expect(writer(2).append("metadata", {})).toBe(2 * 2 ** 24 + 1);
  });
});

describe("the v2 view of a hand-over", () => {
  const piece = (id: string, content: string) => [
    { type: "ai", id, content },
    { langgraph_node: "generator", name: "quarry_generator" },
  ];
  const LOG: LoggedEvent[] = [
    { id: 1, event: "metadata", data: { run_id: "r1", attempt: 1 } },
    { id: 2, event: "custom", data: { type: "phase", phase: "answering" } },
    { id: 3, event: "messages", data: piece("m1", "Here is wh") },
    // The process stopped here; the continuation's events follow, above 2²⁴.
    { id: 2 ** 24 + 1, event: "metadata", data: { run_id: "r1", attempt: 2 } },
    { id: 2 ** 24 + 2, event: "custom", data: { type: "phase", phase: "answering" } },
    { id: 2 ** 24 + 3, event: "messages", data: piece("m2", "Here is what I found.") },
    {
      id: 2 ** 24 + 4,
      event: "values",
      data: { messages: [{ type: "ai", id: "m2", content: "Here is what I found." }] },
    },
  ];

  it("ends the cut answer with an error, streams the redone one once, with seqs in order", () => {
    const view = new ProtocolView(4);
    const events = LOG.flatMap((e) => view.convert(e));
    const seqs = events.map((e) => e.seq);
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(events.every((e) => runNoOfSeq(e.seq) === 4)).toBe(true);
    const messages = events
      .filter((e) => e.method === "messages")
      .map((e) => e.params.data as { event?: string });
    const cut = messages.findIndex((d) => d.event === "error");
    expect(messages[cut]).toMatchObject({ event: "error", code: "unavailable:run" });
    expect(messages.slice(0, cut).some((d) => d.event === "message-finish")).toBe(false);
    const finished = messages.filter((d) => d.event === "content-block-finish");
    expect(finished).toEqual([
      expect.objectContaining({ content: { type: "text", text: "Here is what I found." } }),
    ]);
  });
});

describe("the watchdog queue's retries", () => {
  it("look again every interval for as long as every attempt of a run may last", () => {
    const r = watchdogRetryOf(
      { QUARRY_RUN_LEASE_SECONDS: "60", QUARRY_RUN_WATCHDOG_SECONDS: "10", QUARRY_RUN_CONTINUATIONS: "2" },
      900,
    );
    expect(r).toMatchObject({ minBackoffSeconds: 10, maxBackoffSeconds: 10, maxDoublings: 0 });
    expect(r.maxRetrySeconds).toBeGreaterThanOrEqual(3 * (900 + 60));
    expect(r.maxAttempts * 10).toBeGreaterThanOrEqual(r.maxRetrySeconds);
  });
});

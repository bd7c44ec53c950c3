/**
 * `POST /threads/:id/stream/events` (Agent Streaming Protocol v2, SSE): the thread's events, as a
 * connection-scoped subscription — channels, namespaces and depth filter what is sent; `since`
 * replays what the client missed, then the stream follows live. The thread's latest run is
 * replayed from its log (a client opens its stream after `run.start` answered, so a fast run may
 * already be over), then each next run as it takes the thread, until the client goes away.
 * Every instance derives the same events and seq from the run's log (events.ts), so a client can
 * reconnect to any of them.
 */
import type { Request, Response } from "express";
import { matchesSubscription } from "@langchain/langgraph/stream";
import * as logger from "firebase-functions/logger";
import { z } from "zod";
import { config } from "../../config";
import { QuarryError } from "../../errors";
import { callerOf } from "../../access/caller";
import { runStore, threadStore } from "../../runs/runtime";
import { SseWriter } from "../sse";
import { ThreadIdParam, parse } from "../../runs/schemas";
import type { ThreadDoc } from "../../runs/thread-doc";
import { followRunLog } from "../../runs/event-log";
import { untilReleased, watchRunHeld } from "../../runs/join";
import type { RunStore } from "../../runs/run-store";
import { ProtocolError } from "./errors";
import { ProtocolView, runNoOfSeq, runSeqBase, type V2Event } from "./events";

/** The channels the protocol defines (a named custom channel is `custom:<name>`). */
const CHANNELS = [
  "values",
  "updates",
  "messages",
  "tools",
  "lifecycle",
  "input",
  "checkpoints",
  "tasks",
  "custom",
] as const;

const Channel = z.union([
  z.enum(CHANNELS),
  z.string().regex(/^custom:[\w.-]{1,100}$/, "a named custom channel is custom:<name>"),
]);

const EventStreamRequest = z.strictObject({
  channels: z.array(Channel).min(1, "name at least one channel").max(20),
  namespaces: z
    .array(z.array(z.string().max(200)).max(10))
    .max(20)
    .optional(),
  depth: z.number().int().min(0).max(100).optional(),
  since: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
});

export async function streamEvents(req: Request, res: Response): Promise<void> {
  // Watched from the start: a client gone while the thread is read must not leave a stream waiting.
  const ac = new AbortController();
  res.on("close", () => ac.abort());
  const { uid } = callerOf(req);
  const threadId = parse(ThreadIdParam, req.params.threadId, "path");
  const filter = parse(EventStreamRequest, req.body ?? {}, "event stream request");
  if (!config().runLog) {
    throw new QuarryError(
      "unavailable:run",
      "v2 event streams are read from the runs' event log, and QUARRY_RUN_LOG is off: turn it on (the default).",
    );
  }
  const [store, runs] = await Promise.all([threadStore(), runStore()]);
  const doc = await store.get(threadId, uid); // 404 for a thread that is not the caller's
  const latest = doc.runNo ?? 0;
  if (filter.since !== undefined && runNoOfSeq(filter.since) > latest) {
    throw new ProtocolError(
      "invalid_argument",
      `since ${filter.since} is beyond this thread's events (its latest run's events start after ` +
        `${runSeqBase(latest)}): send the seq of the last event you received, or leave since out.`,
    );
  }
  if (res.destroyed) return;
  const sse = new SseWriter(res);
  sse.open({});
  // A first byte at once: a proxy that holds a response back until its body starts (the functions
  // emulator does) would keep the headers until the first matching event or heartbeat — up to 2 s
  // on a stream of channels the run has not reached — and the SDK opens its next subscription
  // only once this one has answered.
  sse.comment("open");
  // LangGraph's own subscription matching: since, channels (a named custom channel, or all of
  // custom), namespace prefixes and depth.
  const wanted = (e: V2Event) => matchesSubscription(e as never, filter as never);
  const send = (e: V2Event) => {
    if (wanted(e)) sse.sendJson(e.method, JSON.stringify(e), e.seq);
  };
  let current: ThreadDoc | undefined = doc;
  while (current && !ac.signal.aborted) {
    const runId = current.lastRunId;
    if (runId) await followRun(runs, threadId, runId, current.runNo ?? 0, send, ac.signal);
    current = await nextRun(runs, threadId, uid, runId, ac.signal);
  }
  sse.end();
}

/** Sends run `runId`'s events from its log's start (the filter drops what the client has), until it ends. */
async function followRun(
  runs: RunStore,
  threadId: string,
  runId: string,
  runNo: number,
  send: (e: V2Event) => void,
  signal: AbortSignal,
): Promise<void> {
  const view = new ProtocolView(runNo);
  let lastId = 0;
  const how = await followRunLog(runs.log(threadId, runId), {
    after: 0,
    onEvent: (e) => {
      lastId = e.id;
      // Called from a Firestore listener: an event the view cannot take must not crash the
      // instance; it is logged and skipped (the state still reaches the client in values).
      try {
        view.convert(e).forEach(send);
      } catch (err) {
        logger.error("v2 event not converted", { threadId, runId, id: e.id, err: String(err) });
      }
    },
    onBatch: () => view.flush().forEach(send),
    watchRun: (gone) => watchRunHeld(runs, threadId, runId, gone),
    signal,
  });
  if (how === "aborted") return;
  // A run that left no log to read (expired after QUARRY_RUN_LOG_TTL_HOURS, or written while the
  // log was off) has nothing to replay: its answer is in the thread's state.
  if (how === "lost" && lastId === 0) return;
  view.close(lastId, how === "lost" ? "lost" : (how.status ?? "error")).forEach(send);
  if (how !== "lost") await untilReleased(runs, threadId, runId, signal);
}

/** Waits for the thread's next run (another `lastRunId`); undefined when the thread is gone or the client left. */
function nextRun(
  runs: RunStore,
  threadId: string,
  uid: string,
  after: string | undefined,
  signal: AbortSignal,
): Promise<ThreadDoc | undefined> {
  return new Promise((resolve) => {
    let stop = () => {};
    const done = (doc: ThreadDoc | undefined) => {
      stop();
      signal.removeEventListener("abort", onAbort);
      resolve(doc);
    };
    const onAbort = () => done(undefined);
    if (signal.aborted) return resolve(undefined);
    signal.addEventListener("abort", onAbort, { once: true });
    stop = runs.watchRun(threadId, undefined, {
      onChange: ({ thread: doc }) => {
        // Deleted (or deleting, or its id taken again by someone else): the stream ends.
        if (!doc || doc.deleting || doc.owner !== uid) done(undefined);
        else if (doc.lastRunId && doc.lastRunId !== after) done(doc);
      },
      onError: () => done(undefined),
    });
  });
}

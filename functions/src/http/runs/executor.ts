/**
 * Runs one turn of the graph for an open SSE response: holds the thread's lease (renewed, watched
 * for cancel), maps graph chunks to protocol events, and always ends the response and releases the
 * lease — even when Firestore stops answering, since the Firestore client retries for minutes.
 */
import * as logger from "firebase-functions/logger";
import type { QuarryEvent } from "../../agent/events";
import { toErrorBody } from "../../errors";
import { RunAbortedError } from "../abort";
import type { QuarryGraph } from "../../agent/index.js";
import type { RunCheckpointer } from "./checkpointer";
import type { RunEnd, RunLogWriter } from "./event-log";
import { GENERATOR_CALL, isAiChunk, keepStoppedAnswer, storageError } from "./stopped";

export { storageError } from "./stopped";
import { GRAPH_MODE, type StreamMode } from "../../contract/protocol";
import { toPlain } from "../serialize";
import type { RunOutput } from "../sse";
import { within } from "../within";
import type { ThreadStatus, ThreadStore, UsageTotals } from "../thread-store";

export interface RunSpec {
  threadId: string;
  uid: string;
  runId: string;
  leaseMs: number;
  modes: StreamMode[];
  /** A new question, or the answer to the question the thread is waiting on. */
  input: { type: "human"; content: unknown; id: string } | { resume: string };
  checkpointId?: string;
  /** Give the turn as a Command (see `turnInput`); else as plain input. */
  asCommand: boolean;
  cancelOnDisconnect: boolean;
  /** The run's event log, for clients that rejoin the stream (ids on every event). */
  log?: RunLogWriter;
}

type Chunk = [string, unknown];

/** How a run ended (after it held the lease), and the error shown if it failed. */
export interface RunOutcome {
  status: RunEnd["status"];
  error?: { error: string; message: string };
}

export async function executeRun(
  sse: RunOutput,
  store: ThreadStore,
  saver: RunCheckpointer,
  graph: QuarryGraph,
  spec: RunSpec,
): Promise<RunOutcome> {
  const { threadId, runId, leaseMs } = spec;
  /** Every event goes to the client and, with its id, to the run's log. */
  const send = (event: string, data: unknown) => {
    if (event === "error") shownError = data as RunOutcome["error"];
    const json = JSON.stringify(data); // once, for both
    sse.sendJson(event, json, spec.log?.appendJson(event, json));
  };
  const path = `/threads/${threadId}/runs/${runId}`;
  // Location tells the SDK where to rejoin the stream: only when there is a log to rejoin from.
  const headers: Record<string, string> = {
    "Content-Location": path,
    ...(spec.log ? { Location: `${path}/stream` } : {}),
  };
  const abort = new AbortController();
  const stop = (why: RunAbortedError["why"]) => {
    if (!abort.signal.aborted) abort.abort(new RunAbortedError(why));
  };
  const aborted = new Promise<never>((_, reject) =>
    abort.signal.addEventListener("abort", () => reject(abort.signal.reason as Error), { once: true }),
  );
  aborted.catch(() => {}); // observed below through Promise.race
  sse.onDisconnect(() => {
    if (spec.cancelOnDisconnect) stop("disconnected");
  });
  saver.onFailure = (err) => {
    logger.warn("checkpoint write failed", { threadId, runId, err: String(err) });
    stop("storage-lost");
  };

  let leased = false;
  let unwatch = () => {};
  let renew: NodeJS.Timeout | undefined;
  let status: ThreadStatus = "idle";
  let shownError: RunOutcome["error"];
  let usage: Partial<UsageTotals> = { runs: 1 };
  let iterator: AsyncIterator<Chunk> | undefined;
  /** The run stopped at a question to the user: the thread waits for the answer. */
  let asking = false;
  /** The answer's tokens streamed so far (generator), stored as a stopped answer if the run is stopped. */
  let answerSoFar: { id?: string; text: string } | undefined;
  // Held-back steps are written once the client sees the answer start: its first token, or for a
  // client not streaming tokens the generator's "answering" phase.
  const tokens = spec.modes.includes("messages-tuple");
  const handle = ([mode, data]: Chunk) => {
    if (mode === "custom") {
      const ev = data as QuarryEvent;
      if (ev?.type === "usage") usage = { ...ev.turn, runs: 1 };
      if (!tokens && ev?.type === "phase" && ev.phase === "answering") saver.flow();
      if (spec.modes.includes("custom")) send("custom", toPlain(data));
      // A phase boundary: what the run sent so far goes to the log now.
      if (ev?.type === "phase") spec.log?.boundary();
    } else if (mode === "messages") {
      // Nodes' finished messages come through this mode too (named after the node); the answer's
      // tokens carry the generator's model-call name.
      const [msg, meta] = data as [unknown, { langgraph_node?: string; name?: string } | undefined];
      if (isAiChunk(msg) && meta?.name === GENERATOR_CALL) {
        saver.flow();
        // The answer so far, kept if the run is stopped before it ends.
        if (typeof msg.content === "string") {
          answerSoFar = { id: msg.id ?? answerSoFar?.id, text: (answerSoFar?.text ?? "") + msg.content };
        }
      }
      send("messages", toPlain(data));
    } else {
      if (mode === "updates" && data && typeof data === "object" && "__interrupt__" in data) {
        asking = true;
        saver.flow();
      }
      // The answer is in the state now: a stop from here on has nothing partial to keep.
      if (mode === "updates" && data && typeof data === "object" && "generator" in data) {
        answerSoFar = undefined;
      }
      if (spec.modes.includes(mode as StreamMode)) send(mode, toPlain(data));
    }
  };
  try {
    const { resumeInput, turnInput } = await import("../../agent/index.js");
    const input = spec.input;
    const stream = await graph.stream(
      // A turn on a thread at rest goes in as a Command, so the first checkpoint holds the question
      // in `messages`. Forks and turns after a stopped run go in as plain input (see runs.ts).
      // The message is a dict: the messages reducer coerces it to a HumanMessage.
      ("resume" in input
        ? resumeInput(input.resume)
        : spec.asCommand
          ? turnInput(input)
          : { messages: [input] }) as unknown as Parameters<typeof graph.stream>[0],
      {
        configurable: {
          thread_id: threadId,
          user_id: spec.uid,
          run_id: runId,
          ...(spec.checkpointId ? { checkpoint_id: spec.checkpointId } : {}),
        },
        // `updates` always: it is where an interrupt (a question to the user) shows.
        streamMode: [...new Set(spec.modes.map((m) => GRAPH_MODE[m]).concat("custom", "updates"))],
        signal: abort.signal,
        // LangGraph awaits each step's checkpoint before the next: the first one (the user's
        // message, committed with the lease) before any model call. Later ones the RunCheckpointer
        // acknowledges at once and writes in the background.
        durability: "sync",
        runId,
        metadata: { run_id: runId, thread_id: threadId, user_id: spec.uid },
      } as Parameters<typeof graph.stream>[1],
    );
    iterator = (stream as AsyncIterable<Chunk>)[Symbol.asyncIterator]();

    // Nothing is sent until the lease is ours: a run that loses the race still gets an HTTP 409.
    // Bounded: the Firestore client would retry an unreachable commit for minutes.
    const taken = within(leaseMs, saver.started, "taking the run lease").then(() => undefined);
    taken.catch(() => {}); // observed through the race below, or no longer of interest
    const early: Chunk[] = [];
    let next: Promise<IteratorResult<Chunk>> | undefined = iterator.next();
    for (;;) {
      const r = await Promise.race([taken, next!, aborted]);
      if (r === undefined) break;
      if (r.done) {
        if (!saver.firstPutMade) throw new Error("the run ended before storing its first checkpoint");
        await Promise.race([saver.started, aborted]);
        next = undefined;
        break;
      }
      early.push(r.value);
      next = iterator.next();
    }
    leased = true;
    unwatch = store.watchCancel(threadId, runId, () => stop("cancelled"));
    // A lease we cannot renew in time is a lease we may lose: stop rather than risk two writers.
    renew = setInterval(() => {
      within(leaseMs / 3, store.renewLease(threadId, runId, leaseMs), "renewing the run lease").then(
        (ours) => ours || stop("lease-lost"),
        (err: unknown) => {
          logger.warn("lease renewal failed", { threadId, runId, err: String(err) });
          stop("lease-lost");
        },
      );
    }, leaseMs / 3);
    renew.unref();

    sse.open(headers);
    send("metadata", { run_id: runId, attempt: 1 });
    early.forEach(handle);
    while (next) {
      // Raced with the abort: a graph stuck on an unreachable Firestore must not hold the response.
      const r: IteratorResult<Chunk> = await Promise.race([next, aborted]);
      if (r.done) break;
      handle(r.value);
      next = iterator.next();
    }
  } catch (err) {
    const why = abort.signal.aborted ? (abort.signal.reason as RunAbortedError).why : undefined;
    if (!leased) {
      // Refused before the stream opened (409, 404, storage): an HTTP error, once the graph stops.
      stop("not-started");
      // Once the graph has stopped, either it made its first put (whose lease must then be
      // released) or it never will.
      await within(
        leaseMs / 2,
        Promise.resolve(iterator?.return?.()).then(() => {}),
        "stopping the run",
      ).catch(() => {});
      leased =
        saver.firstPutMade &&
        (await within(leaseMs / 2, saver.started, "taking the run lease").then(
          () => true,
          () => false,
        ));
      if (!leased) {
        saver.close(new Error("the run did not start"));
        // A lease commit still in flight is released whenever it lands.
        if (saver.firstPutMade) {
          saver.started.then(
            () => store.releaseLease(threadId, runId, "idle").catch(() => {}),
            () => {},
          );
        }
        throw why === "disconnected" ? err : storageError(err);
      }
      // The lease (and the user's message) landed after the run failed: report it in the stream.
      if (why !== "disconnected") {
        status = "error";
        sse.open(headers);
        send("metadata", { run_id: runId, attempt: 1 });
        send("error", toErrorBody(err).body);
      }
    } else if (why === "cancelled" || why === "disconnected") {
      logger.info("run stopped", { threadId, runId, why });
    } else {
      status = "error";
      const shown = why === "lease-lost" || why === "storage-lost" ? storageError(err, true) : err;
      const { body, expected } = toErrorBody(shown);
      if (!expected)
        logger.error("run failed", { threadId, runId, err: String((err as Error)?.stack ?? err) });
      send("error", body);
    }
  } finally {
    clearInterval(renew);
    unwatch();
    if (abort.signal.aborted) iterator?.return?.().catch(() => {});
    if (leased) await finish();
  }
  return { status: outcome(), ...(shownError ? { error: shownError } : {}) };

  function outcome(): RunEnd["status"] {
    const why = abort.signal.aborted ? (abort.signal.reason as RunAbortedError).why : undefined;
    if (why === "cancelled" || why === "disconnected") return "cancelled";
    if (status === "error") return "error";
    return asking ? "interrupted" : "success";
  }

  /**
   * Writes the held-back steps, then releases the lease — before the stream ends, so a client that
   * sees the end can start the next turn at once. Both bounded: if Firestore is unreachable the
   * lease simply expires. A write still in flight when the drain times out may land late; nothing
   * queued after it does.
   */
  async function finish() {
    const why = abort.signal.aborted ? (abort.signal.reason as RunAbortedError).why : undefined;
    try {
      // A lost lease may already be someone else's: nothing more of this run is written then.
      if (why === "lease-lost") saver.close(new Error("the run lost its lease"));
      else {
        if ((why === "cancelled" || why === "disconnected") && answerSoFar?.text.trim()) {
          const stopped = keepStoppedAnswer(graph, threadId, answerSoFar, iterator);
          await within(leaseMs / 2, stopped, "storing the stopped answer").catch((err: unknown) =>
            logger.warn("stopped answer not stored", { threadId, runId, err: String(err) }),
          );
        }
        await within(leaseMs / 2, saver.drain(), "writing the run's checkpoints");
      }
    } catch (err) {
      if (status !== "error") send("error", toErrorBody(storageError(err, true)).body);
      status = "error";
    }
    // Whatever is still queued (the drain timed out) must not land after the release.
    saver.close(new Error("the run released its lease"));
    if (asking && status === "idle") status = "interrupted";
    // The log's end marker before the release: a reader that sees the release finds it.
    if (spec.log) {
      const end: RunEnd = { status: outcome() };
      await within(leaseMs / 2, spec.log.close(end), "writing the run's event log").catch((err: unknown) =>
        logger.warn("run log not fully written", { threadId, runId, err: String(err) }),
      );
    }
    await within(
      leaseMs / 2,
      store.releaseLease(threadId, runId, status, usage),
      "releasing the run lease",
    ).catch((err: unknown) => logger.error("lease release failed", { threadId, runId, err: String(err) }));
    sse.end();
  }
}

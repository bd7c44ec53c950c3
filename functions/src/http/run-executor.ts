/**
 * Runs one turn of the graph for an open SSE response: holds the thread's lease (renewed, watched
 * for cancel), maps graph chunks to protocol events, and always ends the response and releases the
 * lease — even when Firestore stops answering, since the Firestore client retries for minutes.
 */
import type { Response } from "express";
import * as logger from "firebase-functions/logger";
import type { QuarryEvent } from "../agent/events";
import { QuarryError, toErrorBody } from "../errors";
import { RunAbortedError } from "./abort";
import { agentGraph } from "./runtime";
import type { StreamMode } from "./schemas";
import { toPlain } from "./serialize";
import { SseWriter } from "./sse";
import type { ThreadStatus, ThreadStore, UsageTotals } from "./thread-store";

/** LangGraph stream mode for each protocol stream mode. */
const GRAPH_MODE: Record<StreamMode, "values" | "updates" | "messages" | "custom"> = {
  values: "values",
  updates: "updates",
  "messages-tuple": "messages",
  messages: "messages",
  custom: "custom",
};

export interface RunSpec {
  threadId: string;
  uid: string;
  runId: string;
  leaseMs: number;
  modes: StreamMode[];
  input: { type: "human"; content: unknown; id: string };
  checkpointId?: string;
  cancelOnDisconnect: boolean;
}

/** Resolves with the value, or rejects after ms (the Firestore client would otherwise retry for minutes). */
function within<T>(ms: number, p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  return Promise.race([p, deadline]).finally(() => clearTimeout(timer));
}

export async function executeRun(res: Response, store: ThreadStore, spec: RunSpec): Promise<void> {
  const { threadId, runId, leaseMs } = spec;
  const sse = new SseWriter(res);
  const abort = new AbortController();
  const stop = (why: RunAbortedError["why"]) => {
    if (!abort.signal.aborted) abort.abort(new RunAbortedError(why));
  };
  const aborted = new Promise<never>((_, reject) =>
    abort.signal.addEventListener("abort", () => reject(abort.signal.reason as Error), { once: true }),
  );
  aborted.catch(() => {}); // observed below through Promise.race
  res.on("close", () => {
    if (!res.writableEnded && spec.cancelOnDisconnect) stop("disconnected");
  });
  const unwatch = store.watchCancel(threadId, runId, () => stop("cancelled"));
  // A lease we cannot renew in time is a lease we may lose: stop rather than risk two writers.
  const renew = setInterval(() => {
    within(leaseMs / 3, store.renewLease(threadId, runId, leaseMs), "renewing the run lease").then(
      (ours) => ours || stop("lease-lost"),
      (err: unknown) => {
        logger.warn("lease renewal failed", { threadId, runId, err: String(err) });
        stop("lease-lost");
      },
    );
  }, leaseMs / 3);
  renew.unref();

  let status: ThreadStatus = "idle";
  let usage: Partial<UsageTotals> = { runs: 1 };
  let iterator: AsyncIterator<[string, unknown]> | undefined;
  try {
    sse.open({ "Content-Location": `/threads/${threadId}/runs/${runId}` });
    sse.send("metadata", { run_id: runId, attempt: 1 });
    const graph = await Promise.race([agentGraph(), aborted]);
    const stream = await graph.stream(
      // A message-like dict: the messages reducer coerces it to a HumanMessage.
      { messages: [spec.input] } as unknown as Parameters<typeof graph.stream>[0],
      {
        configurable: {
          thread_id: threadId,
          user_id: spec.uid,
          run_id: runId,
          ...(spec.checkpointId ? { checkpoint_id: spec.checkpointId } : {}),
        },
        streamMode: [...new Set(spec.modes.map((m) => GRAPH_MODE[m]).concat("custom"))],
        signal: abort.signal,
        // Each step is persisted before the next starts: the user's message is saved before any model call.
        durability: "sync",
        runId,
        metadata: { run_id: runId, thread_id: threadId, user_id: spec.uid },
      } as Parameters<typeof graph.stream>[1],
    );
    iterator = (stream as AsyncIterable<[string, unknown]>)[Symbol.asyncIterator]();
    for (;;) {
      // Raced with the abort: a graph stuck on an unreachable Firestore must not hold the response.
      const next = await Promise.race([iterator.next(), aborted]);
      if (next.done) break;
      const [mode, data] = next.value;
      if (mode === "custom") {
        const ev = data as QuarryEvent;
        if (ev?.type === "usage") usage = { ...ev.turn, runs: 1 };
        if (spec.modes.includes("custom")) sse.send("custom", toPlain(data));
      } else if (mode === "messages") {
        sse.send("messages", toPlain(data));
      } else if (spec.modes.includes(mode as StreamMode)) {
        sse.send(mode, toPlain(data));
      }
    }
  } catch (err) {
    const why = abort.signal.aborted ? (abort.signal.reason as RunAbortedError).why : undefined;
    if (why === "cancelled" || why === "disconnected") {
      logger.info("run stopped", { threadId, runId, why });
    } else {
      status = "error";
      const shown =
        why === "lease-lost"
          ? new QuarryError(
              "unavailable:storage",
              "Quarry lost contact with its database during this answer, so it stopped. Your question is saved; " +
                "ask again in a few seconds.",
            )
          : err;
      const { body, expected } = toErrorBody(shown);
      if (!expected)
        logger.error("run failed", { threadId, runId, err: String((err as Error)?.stack ?? err) });
      sse.send("error", body);
    }
  } finally {
    clearInterval(renew);
    unwatch();
    if (abort.signal.aborted) iterator?.return?.().catch(() => {});
    // Released before the stream ends, so a client that sees the end can start the next turn at
    // once; bounded, because if Firestore is unreachable the lease simply expires.
    await within(
      leaseMs / 2,
      store.releaseLease(threadId, runId, status, usage),
      "releasing the run lease",
    ).catch((err: unknown) => logger.error("lease release failed", { threadId, runId, err: String(err) }));
    sse.end();
  }
}

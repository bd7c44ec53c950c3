import { randomUUID } from "node:crypto";
import { Router, type Request, type Response } from "express";
import * as logger from "firebase-functions/logger";
import { config } from "../config";
import { QuarryError, toErrorBody } from "../errors";
import type { QuarryEvent } from "../agent/events";
import { RunAbortedError } from "./abort";
import { callerOf } from "./auth";
import {
  ASSISTANT_ID,
  CancelQuery,
  RunIdParam,
  RunStreamBody,
  ThreadIdParam,
  parse,
  questionText,
  type StreamMode,
} from "./schemas";
import { toPlain } from "./serialize";
import { SseWriter } from "./sse";
import { agentGraph, threadStore } from "./runtime";
import type { ThreadStatus, UsageTotals } from "./thread-store";

/** LangGraph stream mode for each protocol stream mode. */
const GRAPH_MODE: Record<StreamMode, "values" | "updates" | "messages" | "custom"> = {
  values: "values",
  updates: "updates",
  "messages-tuple": "messages",
  messages: "messages",
  custom: "custom",
};

export function runRoutes(): Router {
  const r = Router();
  r.post("/threads/:threadId/runs/stream", streamRun);
  r.post("/threads/:threadId/runs/:runId/cancel", cancelRun);
  r.get("/threads/:threadId/runs/:runId", getRun);
  return r;
}

/** Everything is validated and the lease taken before the stream opens: bad input is a 4xx, never an event. */
async function streamRun(req: Request, res: Response): Promise<void> {
  const { uid } = callerOf(req);
  const threadId = parse(ThreadIdParam, req.params.threadId, "path");
  const body = parse(RunStreamBody, req.body ?? {}, "body");
  if (body.assistant_id !== ASSISTANT_ID) {
    throw new QuarryError(
      "not_found:assistant",
      `Assistant "${body.assistant_id}" not found: use "${ASSISTANT_ID}".`,
    );
  }
  if (!body.input)
    throw new QuarryError(
      "bad_request:body",
      "input is required: { messages: [{ type: 'human', content }] }.",
    );
  const question = questionText(body.input);
  const requested = body.stream_mode === undefined ? ["values"] : [body.stream_mode].flat();
  if (requested.includes("messages")) {
    throw new QuarryError(
      "bad_request:body",
      'stream_mode "messages" is not supported: use "messages-tuple".',
    );
  }
  const modes = [...new Set(requested as StreamMode[])];
  const store = await threadStore();
  const runId = randomUUID();
  const leaseMs = config().runLeaseSeconds * 1000;
  await store.acquireLease(threadId, uid, runId, leaseMs, question);

  const sse = new SseWriter(res);
  const abort = new AbortController();
  let cancelledBy: string | undefined;
  const stop = (why: RunAbortedError["why"]) => {
    if (!abort.signal.aborted) {
      cancelledBy = why;
      abort.abort(new RunAbortedError(why));
    }
  };
  // The client went away before we finished: stop the graph (on_disconnect "cancel", the default).
  res.on("close", () => {
    if (!res.writableEnded && body.on_disconnect !== "continue") stop("disconnected");
  });
  const unwatch = store.watchCancel(threadId, runId, () => stop("cancelled"));
  const renew = setInterval(() => {
    store.renewLease(threadId, runId, leaseMs).then(
      (ours) => ours || stop("lease-lost"),
      (err: unknown) => logger.warn("lease renewal failed", { threadId, runId, err: String(err) }),
    );
  }, leaseMs / 3);
  renew.unref();

  let status: ThreadStatus = "idle";
  let usage: Partial<UsageTotals> = { runs: 1 };
  try {
    sse.open({ "Content-Location": `/threads/${threadId}/runs/${runId}` });
    sse.send("metadata", { run_id: runId, attempt: 1 });
    const graph = await agentGraph();
    const message = body.input.messages[0];
    const checkpointId = body.checkpoint_id ?? body.checkpoint?.checkpoint_id;
    const stream = await graph.stream(
      // A message-like dict: the messages reducer coerces it to a HumanMessage.
      {
        messages: [{ type: "human", content: message.content, id: message.id ?? randomUUID() }],
      } as unknown as Parameters<typeof graph.stream>[0],
      {
        configurable: {
          thread_id: threadId,
          user_id: uid,
          run_id: runId,
          ...(checkpointId ? { checkpoint_id: checkpointId } : {}),
        },
        streamMode: [...new Set(modes.map((m) => GRAPH_MODE[m]).concat("custom"))],
        signal: abort.signal,
        // Each step is persisted before the next starts: the user's message is saved before any model call.
        durability: "sync",
        runId,
        metadata: { run_id: runId, thread_id: threadId, user_id: uid },
      } as Parameters<typeof graph.stream>[1],
    );
    for await (const chunk of stream as AsyncIterable<[string, unknown]>) {
      const [mode, data] = chunk;
      if (mode === "custom") {
        const ev = data as QuarryEvent;
        if (ev?.type === "usage") usage = { ...ev.turn, runs: 1 };
        if (modes.includes("custom")) sse.send("custom", toPlain(data));
      } else if (mode === "messages") {
        sse.send("messages", toPlain(data));
      } else if (modes.includes(mode as StreamMode)) {
        sse.send(mode, toPlain(data));
      }
    }
  } catch (err) {
    if (abort.signal.aborted) {
      status = "idle";
      logger.info("run stopped", { threadId, runId, why: cancelledBy });
    } else {
      status = "error";
      const { body: errBody, expected } = toErrorBody(err);
      if (!expected)
        logger.error("run failed", { threadId, runId, err: String((err as Error)?.stack ?? err) });
      sse.send("error", errBody);
    }
  } finally {
    clearInterval(renew);
    unwatch();
    // Released before the stream ends, so a client that sees the end can start the next turn at once.
    await store
      .releaseLease(threadId, runId, status, usage)
      .catch((err: unknown) => logger.error("lease release failed", { threadId, runId, err: String(err) }));
    sse.end();
  }
}

async function cancelRun(req: Request, res: Response): Promise<void> {
  const { uid } = callerOf(req);
  const threadId = parse(ThreadIdParam, req.params.threadId, "path");
  const runId = parse(RunIdParam, req.params.runId, "path");
  parse(CancelQuery, req.query, "query");
  const store = await threadStore();
  const ok = await store.requestCancel(threadId, uid, runId);
  if (!ok) throw new QuarryError("not_found:run", `Run ${runId} is not running on thread ${threadId}.`);
  res.status(204).end();
}

async function getRun(req: Request, res: Response): Promise<void> {
  const { uid } = callerOf(req);
  const threadId = parse(ThreadIdParam, req.params.threadId, "path");
  const runId = parse(RunIdParam, req.params.runId, "path");
  const doc = await (await threadStore()).get(threadId, uid);
  const running = doc.run?.runId === runId && doc.run.expiresAt.toMillis() > Date.now();
  if (!running && doc.lastRunId !== runId) throw new QuarryError("not_found:run", `Run ${runId} not found.`);
  res.json({
    run_id: runId,
    thread_id: threadId,
    assistant_id: ASSISTANT_ID,
    status: running ? "running" : doc.status === "error" ? "error" : "success",
    metadata: {},
    multitask_strategy: "reject",
    created_at: doc.updatedAt.toDate().toISOString(),
    updated_at: doc.updatedAt.toDate().toISOString(),
  });
}

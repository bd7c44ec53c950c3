/**
 * Rejoining a run's stream from any instance (the SDK's `runs.joinStream`, its automatic reconnect
 * to the run's `Location`, and `threads.joinStream`): the events after `Last-Event-ID` are replayed
 * from the run's event log, then the live run is followed through a listener on the log until it
 * ends. Each event keeps the id it had in the original stream, so a client that reconnects any
 * number of times sees every event once, in order.
 */
import { Router, type Request, type Response } from "express";
import { z } from "zod";
import { STREAM_MODES, modeOfEvent } from "../../contract/protocol";
import { QuarryError } from "../../errors";
import { callerOf } from "../../access/caller";
import { runStore, threadStore } from "../../runs/runtime";
import { RunIdParam, ThreadIdParam, parse } from "../../runs/schemas";
import { leaseHolder, type ThreadDoc } from "../../runs/thread-doc";
import { followRunLog, type LoggedEvent } from "../../runs/event-log";
import { ensureKnownRun, untilReleased, watchRunHeld } from "../../runs/join";
import { SseWriter } from "../sse";

/** Run stream modes (`messages` is `messages-tuple`), and the thread stream's `run_modes` (all of the run's). */
const MODES: readonly string[] = [...STREAM_MODES, "messages", "run_modes"];

/** `stream_mode` as the SDK sends it in a query: one mode, a JSON array of modes, or the key repeated. */
const StreamModeQuery = z.union([z.string(), z.array(z.string())]).transform((v, ctx) => {
  const raw = [v].flat().flatMap((s) => {
    if (!s.startsWith("[")) return [s];
    try {
      return JSON.parse(s) as unknown[];
    } catch {
      ctx.addIssue({ code: "custom", message: "stream_mode is not a JSON array of modes" });
      return [];
    }
  });
  const bad = raw.filter((m) => typeof m !== "string" || !MODES.includes(m));
  if (bad.length) ctx.addIssue({ code: "custom", message: `unknown stream mode(s): ${bad.join(", ")}` });
  return raw as string[];
});

const JoinQuery = z.strictObject({
  stream_mode: StreamModeQuery.optional(),
  cancel_on_disconnect: z.enum(["true", "false", "0", "1"]).optional(),
  /**
   * The SDK's useStream sends the thread head it knows when it rejoins after a reload; the run's
   * log replays from the event id, so it is accepted and not needed.
   */
  checkpoint_id: z.string().max(200).optional(),
});

export function joinRoutes(): Router {
  const r = Router();
  r.get("/threads/:threadId/runs/:runId/stream", async (req, res) => {
    const threadId = parse(ThreadIdParam, req.params.threadId, "path");
    const runId = parse(RunIdParam, req.params.runId, "path");
    await join(req, res, threadId, () => runId);
  });
  // The thread's current run, if any (an idle thread's stream ends at once).
  r.get("/threads/:threadId/stream", async (req, res) => {
    const threadId = parse(ThreadIdParam, req.params.threadId, "path");
    await join(req, res, threadId, leaseHolder);
  });
  return r;
}

/**
 * `Last-Event-ID`: the id of the last event the client has. None, 0 or -1 (what the SDK's React
 * hook sends to replay a run from its start) mean from the start.
 */
function lastEventId(req: Request): number {
  const raw = req.header("last-event-id");
  if (raw === undefined || raw === "" || raw.trim() === "-1") return 0;
  if (!/^\d{1,12}$/.test(raw.trim())) {
    throw new QuarryError(
      "bad_request:params",
      `Last-Event-ID "${raw.slice(0, 40)}" is not an event id of this API (a whole number): send the id field of the last event received.`,
    );
  }
  return Number(raw.trim());
}

async function join(
  req: Request,
  res: Response,
  threadId: string,
  pick: (doc: ThreadDoc) => string | undefined,
): Promise<void> {
  const { uid } = callerOf(req);
  const q = parse(JoinQuery, req.query, "query");
  const after = lastEventId(req);
  const [store, runs] = await Promise.all([threadStore(), runStore()]);
  const doc = await store.get(threadId, uid); // 404 for a thread that is not the caller's
  const runId = pick(doc);
  const sse = new SseWriter(res);
  if (!runId) {
    sse.open({});
    sse.end();
    return;
  }
  await ensureKnownRun(runs, threadId, runId, doc);
  const log = runs.log(threadId, runId);
  const wanted =
    q.stream_mode?.length && !q.stream_mode.includes("run_modes")
      ? new Set(q.stream_mode.map((m) => (m === "messages" ? "messages-tuple" : m)))
      : undefined;
  const cancelOnDisconnect = q.cancel_on_disconnect === "true" || q.cancel_on_disconnect === "1";
  const ac = new AbortController();
  res.on("close", () => {
    if (res.writableEnded) return;
    ac.abort();
    if (cancelOnDisconnect) runs.requestCancel(threadId, uid, runId).catch(() => {});
  });
  const path = `/threads/${threadId}/runs/${runId}`;
  sse.open({ "Content-Location": path, Location: `${path}/stream` });
  const deliver = (e: LoggedEvent) => {
    // The run's last event says how it ended (runs/executor.ts), whatever modes were asked.
    const always = e.event === "metadata" || e.event === "error" || e.event === "end";
    if (always || !wanted || wanted.has(modeOfEvent(e.event))) sse.send(e.event, e.data, e.id);
  };
  const how = await followRunLog(log, {
    after,
    onEvent: deliver,
    watchRun: (gone) => watchRunHeld(runs, threadId, runId, gone),
    signal: ac.signal,
  });
  // The run writes its log's end marker before it releases the thread: a client that starts the
  // next run as soon as this stream ends must find the thread free.
  if (how !== "lost" && how !== "aborted") await untilReleased(runs, threadId, runId, ac.signal);
  if (how === "lost") {
    sse.send("error", {
      error: "unavailable:run",
      message:
        "This answer stopped before it finished (the server running it went away). Your question is saved: ask again.",
    });
  }
  sse.end();
}

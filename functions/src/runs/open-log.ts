/** Opening a run's event log: a new run's, or a continuation's place in it (event-log.ts). */
import * as logger from "firebase-functions/logger";
import { config } from "../config";
import { RunLogWriter } from "./event-log";
import type { RunStore } from "./run-store";

/** A new event log for the run (`threads/{id}/runs/{runId}/log`), or a continuation's place in it. */
export async function openRunLog(
  runs: RunStore,
  threadId: string,
  runId: string,
  continues?: { attempt: number; nextDoc: number },
): Promise<RunLogWriter> {
  const { Timestamp } = await import("firebase-admin/firestore");
  return new RunLogWriter(runs.log(threadId, runId), {
    ttlMs: config().runLogTtlMs,
    timestamp: Timestamp,
    ...(continues ? { continues } : {}),
    onError: (err) => logger.warn("run log write failed", { threadId, runId, err: String(err) }),
  });
}

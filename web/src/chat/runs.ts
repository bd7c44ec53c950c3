/**
 * The API calls of a run, through the SDK Client: start one and stream it, join a running one,
 * cancel it, and find where a turn was asked (to ask it again from there).
 */
import type { Client } from "@langchain/langgraph-sdk";
import { ASSISTANT_ID, STREAM_MODES } from "@quarry/functions/contract";
import type { Part } from "./connection";
import type { MessageDict } from "./model";

/** What a new run is given: a question (from a checkpoint, to ask a turn again), or an answer to the agent's question. */
export type RunBody =
  | { input: { messages: MessageDict[]; investigate?: boolean }; checkpointId?: string }
  | { command: { resume: string } };

/** Starts a run of the thread and streams it (resumable: a dropped connection does not stop the run). */
export function streamNewRun(
  client: Client,
  threadId: string,
  body: RunBody,
  signal: AbortSignal,
  onRunCreated: (runId: string) => void,
): AsyncIterable<Part> {
  return client.runs.stream(threadId, ASSISTANT_ID, {
    ...body,
    streamMode: [...STREAM_MODES],
    streamResumable: true,
    signal,
    onRunCreated: ({ run_id }) => onRunCreated(run_id),
  }) as AsyncIterable<Part>;
}

/** The thread's running answer from its first event (the page was reloaded mid-answer). */
export function joinThread(client: Client, threadId: string, signal: AbortSignal): AsyncIterable<Part> {
  return client.threads.joinStream(threadId, { signal }) as AsyncIterable<Part>;
}

/** A run's stream after the event with `lastEventId` (a rejoin after a lost connection). */
export function joinRun(
  client: Client,
  threadId: string,
  runId: string,
  lastEventId: string | undefined,
  signal: AbortSignal,
): AsyncIterable<Part> {
  return client.runs.joinStream(threadId, runId, {
    ...(lastEventId ? { lastEventId } : {}),
    streamMode: [...STREAM_MODES],
    signal,
  }) as AsyncIterable<Part>;
}

/**
 * Cancels a run and resolves once it has let go of the thread (`wait`), so the next run there is
 * not refused as busy. A run not yet named (stopped before the server answered): whatever the
 * thread runs. Never rejects: a run that already ended has nothing to cancel.
 */
export async function cancelRun(client: Client, threadId: string, runId: string | undefined): Promise<void> {
  const cancel = (id: string) => client.runs.cancel(threadId, id, true).catch(() => undefined);
  try {
    if (runId) await cancel(runId);
    else
      await Promise.all(
        (await client.runs.list(threadId, { status: "running" })).map((r) => cancel(r.run_id)),
      );
  } catch {
    // Nothing listed: nothing to wait for.
  }
}

/**
 * The checkpoint where the question with message id `key` was asked: its first, with the
 * question in place and the graph about to start (`ingress` next). Undefined when the thread's
 * recent history no longer has it.
 */
export async function askedAt(client: Client, threadId: string, key: string): Promise<string | undefined> {
  const history = await client.threads.getHistory(threadId, { limit: 100 });
  const state = history.find((s) => {
    const last = ((s.values as { messages?: { type: string; id?: string }[] }).messages ?? []).at(-1);
    return last?.type === "human" && last.id === key && s.next.includes("ingress");
  });
  return state?.checkpoint.checkpoint_id ?? undefined;
}

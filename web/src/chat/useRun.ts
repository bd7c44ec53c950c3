/**
 * The run and its stream: one run at a time, from its start (or a join of the thread's running
 * one) to its end, stop or failure, folded into the chat through `dispatch`. Streams are
 * resumable, so leaving one does not stop the run: Stop calls the cancel endpoint, which reaches
 * the run on any instance and answers once the run has let go of the thread. A run started on
 * that thread before then waits for that answer, so the server never finds the thread still busy.
 */
import { useCallback, useRef, useState, type Dispatch } from "react";
import type { Client } from "@langchain/langgraph-sdk";
import { follow, type RunStream } from "./connection";
import type { ChatAction } from "./reducer";
import { cancelRun, joinRun, joinThread, streamNewRun, type RunBody } from "./runs";

/** Where a run's events come from: a new run of the thread, or the thread's running one. */
type RunSource = { kind: "new"; body: RunBody } | { kind: "join" };

/** The run in progress: its thread once known, its id once the server named it. */
interface Active {
  ac: AbortController;
  /** The thread generation it belongs to: after a thread switch it no longer touches the state. */
  gen: number;
  threadId?: string;
  runId?: string;
}

export interface RunApi {
  streaming: boolean;
  /** Whether a run is in progress (a new one is not started then). */
  busy(): boolean;
  /**
   * Runs `begin` (which shows the turn and names the thread, creating it for a first question),
   * then streams the run from `source` into the last turn until it ends, is stopped or fails.
   */
  start(begin: () => Promise<string>, source: RunSource): Promise<void>;
  /** Joins the thread's running answer from its first event (the page was reloaded mid-answer). */
  join(threadId: string): void;
  stop(): void;
  /** The page moved to another thread: the run's stream is left and stops touching the state. */
  leave(): void;
}

/** The stream of the active run, as `follow` reads it. */
function runStream(
  client: Client,
  a: Active,
  threadId: string,
  source: RunSource,
  dispatch: Dispatch<ChatAction>,
  mine: () => boolean,
): RunStream {
  const { ac } = a;
  return {
    open: () =>
      source.kind === "join"
        ? joinThread(client, threadId, ac.signal)
        : streamNewRun(client, threadId, source.body, ac.signal, (runId) => {
            a.runId = runId;
            if (mine()) dispatch({ type: "run_created", runId });
          }),
    runId: () => a.runId,
    rejoin: (runId, lastEventId) => joinRun(client, threadId, runId, lastEventId, ac.signal),
    receive: (part) => {
      if (!mine()) return false;
      // The metadata event names the run too (the header may be hidden by a proxy).
      const runId = (part.data as { run_id?: unknown } | null)?.run_id;
      if (part.event === "metadata" && typeof runId === "string") a.runId = runId;
      dispatch({ type: "stream", event: part.event, data: part.data });
      return true;
    },
    lost: () => {
      if (mine()) dispatch({ type: "reconnecting" });
    },
  };
}

export function useRun(client: Client, dispatch: Dispatch<ChatAction>, onRunEnded: () => void): RunApi {
  const [streaming, setStreaming] = useState(false);
  const active = useRef<Active | null>(null);
  /** Bumped on every thread switch, so a stream of the previous thread stops touching the state. */
  const generation = useRef(0);
  /** A Stop still settling: the cancel of a thread's run, answered once the run let go of it. */
  const stopping = useRef<{ threadId: string; done: Promise<void> } | null>(null);

  const start = useCallback(
    async (begin: () => Promise<string>, source: RunSource) => {
      if (active.current) return;
      const a: Active = { ac: new AbortController(), gen: generation.current };
      active.current = a;
      const mine = () => a.gen === generation.current;
      setStreaming(true);
      try {
        const threadId = await begin();
        a.threadId = threadId;
        // The run stopped a moment ago may still hold the thread: its cancel says when it let go.
        if (stopping.current?.threadId === threadId) await stopping.current.done;
        if (!a.ac.signal.aborted)
          await follow(runStream(client, a, threadId, source, dispatch, mine), a.ac.signal);
        if (mine()) dispatch({ type: a.ac.signal.aborted ? "stopped" : "finished" });
      } catch (e) {
        if (mine()) dispatch(a.ac.signal.aborted ? { type: "stopped" } : { type: "failed", error: e });
      } finally {
        if (active.current === a) active.current = null;
        setStreaming(false);
        onRunEnded();
      }
    },
    [client, dispatch, onRunEnded],
  );

  const join = useCallback(
    (threadId: string) => {
      const begin = async () => {
        // The join replays the run from its start: the turn's live parts start afresh.
        dispatch({ type: "resumed" });
        return threadId;
      };
      void start(begin, { kind: "join" });
    },
    [start, dispatch],
  );

  const stop = useCallback(() => {
    const a = active.current;
    a?.ac.abort();
    if (!a?.threadId) return;
    const s = { threadId: a.threadId, done: cancelRun(client, a.threadId, a.runId) };
    stopping.current = s;
    void s.done.then(() => {
      if (stopping.current === s) stopping.current = null;
    });
  }, [client]);

  const leave = useCallback(() => {
    generation.current++;
    active.current?.ac.abort();
  }, []);

  const busy = useCallback(() => active.current !== null, []);

  return { streaming, busy, start, join, stop, leave };
}

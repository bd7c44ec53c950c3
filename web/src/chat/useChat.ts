/**
 * The chat's side effects around the pure reducer: load a thread's checkpointed state, stream a run
 * with the SDK Client, stop it. Stopping aborts the stream (the server cancels a run whose client
 * disconnects) and also calls the cancel endpoint, which reaches the run on any instance.
 */
import { useCallback, useEffect, useReducer, useRef, useState } from "react";
import type { Client } from "@langchain/langgraph-sdk";
import { ASSISTANT_ID, STREAM_MODES } from "../api/client";
import { errorInWords } from "../data/format";
import { chatReducer, EMPTY_CHAT, humanInput, type ChatState } from "./reducer";

/** How long after Stop a "thread busy" answer is taken as the stopped run still winding down. */
const STOP_GRACE_MS = 15_000;

interface Options {
  client: Client;
  threadId: string | null;
  /** A new thread was created for the first question: the page navigates to it. */
  onThreadCreated(id: string): void;
  /** A run ended (done, stopped, failed): thread titles and times may have changed. */
  onRunEnded(): void;
}

export interface ChatApi {
  state: ChatState;
  loading: boolean;
  loadError: string | null;
  streaming: boolean;
  submit(question: string): Promise<void>;
  /** Answers the clarifying question the last turn is waiting on (`command: { resume }`). */
  answer(text: string): Promise<void>;
  stop(): void;
}

export function useChat({ client, threadId, onThreadCreated, onRunEnded }: Options): ChatApi {
  const [state, dispatch] = useReducer(chatReducer, EMPTY_CHAT);
  const [loading, setLoading] = useState(false);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [streaming, setStreaming] = useState(false);
  const controller = useRef<AbortController | null>(null);
  const run = useRef<{ threadId: string; runId?: string } | null>(null);
  /** The thread this hook created for a first question: navigating to it must not reload it. */
  const created = useRef<string | null>(null);
  /** Bumped on every thread switch, so a stream of the previous thread stops touching the state. */
  const generation = useRef(0);
  /** When the person last pressed Stop. */
  const stoppedAt = useRef(0);

  useEffect(() => {
    if (threadId && threadId === created.current) {
      created.current = null;
      return;
    }
    generation.current++;
    controller.current?.abort();
    dispatch({ type: "loaded", values: null });
    setLoadError(null);
    if (!threadId) return;
    let current = true;
    setLoading(true);
    client.threads
      .getState(threadId)
      .then((s) => {
        if (current) dispatch({ type: "loaded", values: (s.values ?? null) as never });
      })
      .catch((e: unknown) => {
        if (current) setLoadError(errorInWords(e));
      })
      .finally(() => {
        if (current) setLoading(false);
      });
    return () => {
      current = false;
    };
  }, [client, threadId]);

  /**
   * Streams one run into the last turn: a new question (`input`), or the answer to the question the
   * turn is waiting on (`command.resume`). `begin` records it in the turn and, for a first question,
   * creates the thread.
   */
  const run_ = useCallback(
    async (
      begin: () => Promise<string>,
      body: { input: ReturnType<typeof humanInput> } | { command: { resume: string } },
    ) => {
      if (controller.current) return;
      const ac = new AbortController();
      controller.current = ac;
      const gen = generation.current;
      const mine = () => gen === generation.current;
      setStreaming(true);
      try {
        const id = await begin();
        run.current = { threadId: id };
        for (let attempt = 0; ; attempt++) {
          let received = false;
          try {
            const stream = client.runs.stream(id, ASSISTANT_ID, {
              ...body,
              streamMode: [...STREAM_MODES],
              signal: ac.signal,
              onRunCreated: ({ run_id }) => {
                if (run.current) run.current.runId = run_id;
                if (mine()) dispatch({ type: "run_created", runId: run_id });
              },
            });
            for await (const part of stream) {
              received = true;
              if (!mine()) break;
              // The metadata event names the run too (the header may be hidden by a proxy).
              const runId = (part.data as { run_id?: unknown } | null)?.run_id;
              if (part.event === "metadata" && typeof runId === "string" && run.current)
                run.current.runId = runId;
              dispatch({ type: "stream", event: part.event, data: part.data });
            }
            break;
          } catch (e) {
            // Right after Stop, the server may still be releasing the stopped run's lease (409):
            // wait a moment instead of telling the person the thread is busy.
            const justStopped = Date.now() - stoppedAt.current < STOP_GRACE_MS;
            if (received || !justStopped || (e as { status?: number }).status !== 409) throw e;
            await new Promise((r) => setTimeout(r, Math.min(500 * (attempt + 1), 2000)));
          }
        }
        if (mine()) dispatch({ type: ac.signal.aborted ? "stopped" : "finished" });
      } catch (e) {
        if (mine()) dispatch(ac.signal.aborted ? { type: "stopped" } : { type: "failed", error: e });
      } finally {
        if (controller.current === ac) controller.current = null;
        run.current = null;
        setStreaming(false);
        onRunEnded();
      }
    },
    [client, onRunEnded],
  );

  const submit = useCallback(
    async (question: string) => {
      const text = question.trim();
      if (!text || controller.current) return;
      // The question's message id, chosen here so the live turn and the stored message agree (feedback).
      const key = crypto.randomUUID();
      await run_(
        async () => {
          dispatch({ type: "submitted", key, question: text });
          if (threadId) return threadId;
          const t = await client.threads.create({ metadata: { title: text.slice(0, 80) } });
          created.current = t.thread_id;
          onThreadCreated(t.thread_id);
          return t.thread_id;
        },
        { input: humanInput(text, key) },
      );
    },
    [client, threadId, onThreadCreated, run_],
  );

  const answer = useCallback(
    async (reply: string) => {
      const text = reply.trim();
      if (!text || !threadId || controller.current) return;
      await run_(
        async () => {
          dispatch({ type: "answered", answer: text });
          return threadId;
        },
        { command: { resume: text } },
      );
    },
    [threadId, run_],
  );

  const stop = useCallback(() => {
    const r = run.current;
    stoppedAt.current = Date.now();
    controller.current?.abort();
    if (r?.runId) {
      // Best effort: the disconnect alone cancels the run; this also reaches it across instances.
      client.runs.cancel(r.threadId, r.runId).catch(() => undefined);
    }
  }, [client]);

  return { state, loading, loadError, streaming, submit, answer, stop };
}

/**
 * The chat's side effects around the pure reducer: load a thread's checkpointed state (and join an
 * answer still being written), stream a run with the SDK Client, rejoin it after a dropped
 * connection, stop it. Streams are resumable, so Stop calls the cancel endpoint, which reaches the
 * run on any instance.
 */
import { useCallback, useEffect, useReducer, useRef, useState } from "react";
import type { Client } from "@langchain/langgraph-sdk";
import { ASSISTANT_ID, STREAM_MODES, autoTitle } from "@quarry/functions/contract";
import { errorInWords } from "../data/format";
import { chatReducer, EMPTY_CHAT, humanInput, type ChatState } from "./reducer";
import { MAX_REJOINS, backOnline, lostConnection } from "./connection";

/** How long after Stop a "thread busy" answer is taken as the stopped run still winding down. */
const STOP_GRACE_MS = 15_000;
/** One stream event as the SDK yields it (with its SSE id). */
type Part = { id?: string; event: string; data: unknown };
/** What a run streams, given the run's thread: a stream opened after `lastEventId` (or from the start). */
type Open = (
  threadId: string,
  ac: AbortController,
  mine: () => boolean,
) => (lastEventId?: string) => AsyncIterable<Part>;
type RunBody =
  { input: ReturnType<typeof humanInput>; checkpointId?: string } | { command: { resume: string } };

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
  /** Asks a turn's question again from where it was asked: regenerate, or edit with new words. */
  askAgain(key: string, question: string): Promise<void>;
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

  /**
   * Feeds a run's stream into the last turn, rejoining it when the connection drops: the SDK
   * reconnects by itself for a while (the run's Location and Last-Event-ID); once it gives up —
   * offline for longer — the page waits until it is back online and rejoins after the last event
   * it has, so nothing is lost or shown twice.
   */
  const follow = useCallback(
    async (
      threadId: string,
      open: (lastEventId?: string) => AsyncIterable<Part>,
      ac: AbortController,
      mine: () => boolean,
    ) => {
      let lastEventId: string | undefined;
      for (let rejoins = 0; ; rejoins++) {
        try {
          for await (const part of open(lastEventId)) {
            if (!mine()) return;
            if (part.id) lastEventId = part.id;
            // The metadata event names the run too (the header may be hidden by a proxy).
            const runId = (part.data as { run_id?: unknown } | null)?.run_id;
            if (part.event === "metadata" && typeof runId === "string" && run.current)
              run.current.runId = runId;
            dispatch({ type: "stream", event: part.event, data: part.data });
          }
          return;
        } catch (e) {
          const runId = run.current?.runId;
          if (ac.signal.aborted || !runId || !lostConnection(e) || rejoins >= MAX_REJOINS) throw e;
          if (mine()) dispatch({ type: "reconnecting" });
          await backOnline(ac.signal);
          open = (id) =>
            client.runs.joinStream(threadId, runId, {
              ...(id ? { lastEventId: id } : {}),
              streamMode: [...STREAM_MODES],
              signal: ac.signal,
            });
        }
      }
    },
    [client],
  );

  /**
   * Streams one run into the last turn, from `begin` (which records it in the turn and names the
   * thread, creating it for a first question) to its end, stop or failure; `open` gives the stream
   * (a new run, or a join of a running one). Streams are resumable: a dropped connection does not
   * stop the run, and `follow` rejoins it.
   */
  const run_ = useCallback(
    async (begin: () => Promise<string>, open: Open) => {
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
          const source = open(id, ac, mine);
          try {
            await follow(
              id,
              async function* (lastEventId) {
                for await (const part of source(lastEventId)) {
                  received = true;
                  yield part;
                }
              },
              ac,
              mine,
            );
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
    [follow, onRunEnded],
  );

  /** A new run of the thread (a question, an answer to its question, or a turn asked again). */
  const newRun = useCallback(
    (body: RunBody): Open =>
      (id, ac, mine) =>
      () =>
        client.runs.stream(id, ASSISTANT_ID, {
          ...body,
          streamMode: [...STREAM_MODES],
          streamResumable: true,
          signal: ac.signal,
          onRunCreated: ({ run_id }) => {
            if (run.current) run.current.runId = run_id;
            if (mine()) dispatch({ type: "run_created", runId: run_id });
          },
        }) as AsyncIterable<Part>,
    [client],
  );

  /** Joins the thread's running answer from its first event (the page was reloaded mid-answer). */
  const rejoinLive = useCallback(
    (threadId: string) =>
      run_(
        async () => {
          dispatch({ type: "resumed" });
          return threadId;
        },
        (id, ac) => (lastEventId) =>
          client.threads.joinStream(id, {
            ...(lastEventId ? { lastEventId } : {}),
            signal: ac.signal,
          }) as AsyncIterable<Part>,
      ),
    [client, run_],
  );

  const rejoin = useRef(rejoinLive);
  rejoin.current = rejoinLive;

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
    Promise.all([client.threads.getState(threadId), client.threads.get(threadId)])
      .then(([s, t]) => {
        if (!current) return;
        dispatch({ type: "loaded", values: (s.values ?? null) as never });
        // An answer still being written (a reload, another tab): join it where it is.
        if (t.status === "busy") void rejoin.current(threadId);
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
          const t = await client.threads.create({ metadata: { title: autoTitle(text) } });
          created.current = t.thread_id;
          onThreadCreated(t.thread_id);
          return t.thread_id;
        },
        newRun({ input: humanInput(text, key) }),
      );
    },
    [client, threadId, onThreadCreated, run_, newRun],
  );

  /**
   * Asks a question of the conversation again — the same words (regenerate) or new ones (edit) —
   * from the point where it was asked: a run from that turn's first checkpoint (the question in
   * place, nothing after it), the message sent with the same id so it replaces the old one. The
   * turns after it leave the conversation's current branch.
   */
  const askAgain = useCallback(
    async (key: string, question: string) => {
      const text = question.trim();
      if (!text || !threadId || controller.current) return;
      let from: string | undefined;
      try {
        const history = await client.threads.getHistory(threadId, { limit: 100 });
        from =
          history.find((s) => {
            const last = ((s.values as { messages?: { type: string; id?: string }[] }).messages ?? []).at(-1);
            return last?.type === "human" && last.id === key && s.next.includes("ingress");
          })?.checkpoint.checkpoint_id ?? undefined;
      } catch (e) {
        setLoadError(errorInWords(e));
        return;
      }
      if (!from) {
        setLoadError(
          "This question can no longer be asked again from where it was: ask it as a new question.",
        );
        return;
      }
      await run_(
        async () => {
          dispatch({ type: "forked", key, question: text });
          return threadId;
        },
        newRun({ input: humanInput(text, key), checkpointId: from }),
      );
    },
    [client, threadId, run_, newRun],
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
        newRun({ command: { resume: text } }),
      );
    },
    [threadId, run_, newRun],
  );

  const stop = useCallback(() => {
    const r = run.current;
    stoppedAt.current = Date.now();
    controller.current?.abort();
    if (!r) return;
    // The stream is resumable, so leaving it does not stop the run: the cancel endpoint does, on
    // whichever instance runs it. Stopped before the run was named: cancel what the thread runs.
    const cancel = (runId: string) => client.runs.cancel(r.threadId, runId).catch(() => undefined);
    if (r.runId) void cancel(r.runId);
    else
      void client.runs
        .list(r.threadId, { status: "running" })
        .then((runs) => Promise.all(runs.map((x) => cancel(x.run_id))))
        .catch(() => undefined);
  }, [client]);

  return { state, loading, loadError, streaming, submit, answer, askAgain, stop };
}

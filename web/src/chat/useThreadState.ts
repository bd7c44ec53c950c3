/**
 * The open thread's state: its checkpointed messages, loaded whenever the page opens a thread
 * (`GET /threads/:id/state`), and an answer still being written there (a reload, another tab)
 * handed to `onBusy` to be joined where it is.
 */
import { useCallback, useEffect, useRef, useState, type Dispatch } from "react";
import type { Client } from "@langchain/langgraph-sdk";
import { errorInWords } from "../data/format";
import type { ChatAction } from "./reducer";

interface Options {
  client: Client;
  threadId: string | null;
  dispatch: Dispatch<ChatAction>;
  /** The page opens another thread: whatever streams into the current one must stop. */
  onLeave(): void;
  /** The thread is answering now: join the answer. */
  onBusy(threadId: string): void;
}

export interface ThreadStateApi {
  loading: boolean;
  loadError: string | null;
  /** Shows a problem where a load error shows (a turn that cannot be asked again). */
  setLoadError(error: string | null): void;
  /** A thread this page just created for a first question: opening it must not reload it. */
  adopt(threadId: string): void;
}

export function useThreadState({ client, threadId, dispatch, onLeave, onBusy }: Options): ThreadStateApi {
  const [loading, setLoading] = useState(false);
  const [loadError, setLoadError] = useState<string | null>(null);
  const created = useRef<string | null>(null);
  // The latest callbacks, so that only a change of thread (or client) reloads the state.
  const on = useRef({ onLeave, onBusy });
  on.current = { onLeave, onBusy };

  useEffect(() => {
    if (threadId && threadId === created.current) {
      created.current = null;
      return;
    }
    on.current.onLeave();
    dispatch({ type: "loaded", values: null });
    setLoadError(null);
    if (!threadId) return;
    let current = true;
    setLoading(true);
    Promise.all([client.threads.getState(threadId), client.threads.get(threadId)])
      .then(([s, t]) => {
        if (!current) return;
        const waiting =
          t.status === "interrupted" ? s.tasks.flatMap((k) => k.interrupts.map((i) => i.value)) : [];
        dispatch({ type: "loaded", values: (s.values ?? null) as never, waiting });
        if (t.status === "busy") on.current.onBusy(threadId);
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
  }, [client, threadId, dispatch]);

  const adopt = useCallback((id: string) => {
    created.current = id;
  }, []);

  return { loading, loadError, setLoadError, adopt };
}

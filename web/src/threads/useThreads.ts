/**
 * The signed-in user's threads, newest first. Live from Firestore (`threads` where owner == uid;
 * the rules allow exactly this query), so titles and new threads appear without polling. When the
 * listener cannot run (rules not deployed, index building), it falls back to `POST /threads/search`
 * and refreshes after each change the page makes.
 */
import { useCallback, useEffect, useState } from "react";
import type { Client } from "@langchain/langgraph-sdk";
import { collection, limit, onSnapshot, orderBy, query, where, type Firestore } from "firebase/firestore";

export interface ThreadSummary {
  id: string;
  title: string;
  status: string;
  /** Milliseconds since the epoch. */
  updatedAt: number;
}

const MAX_THREADS = 100;

function millis(v: unknown): number {
  if (typeof v === "string") return Date.parse(v) || 0;
  if (v && typeof (v as { toMillis?: unknown }).toMillis === "function")
    return (v as { toMillis(): number }).toMillis();
  return 0;
}

export function useThreads(db: Firestore, client: Client, uid: string) {
  const [threads, setThreads] = useState<ThreadSummary[] | null>(null);
  const [live, setLive] = useState(true);
  const [error, setError] = useState<string | null>(null);

  const search = useCallback(async () => {
    try {
      const found = await client.threads.search({
        limit: MAX_THREADS,
        sortBy: "updated_at",
        sortOrder: "desc",
      });
      setThreads(
        found.map((t) => ({
          id: t.thread_id,
          title: String((t.metadata as { title?: unknown } | null)?.title ?? ""),
          status: t.status,
          updatedAt: millis(t.updated_at),
        })),
      );
      setError(null);
    } catch (e) {
      setError(`Could not load your conversations: ${(e as Error).message}`);
    }
  }, [client]);

  useEffect(() => {
    if (!live) {
      void search();
      return;
    }
    const q = query(
      collection(db, "threads"),
      where("owner", "==", uid),
      orderBy("updatedAt", "desc"),
      limit(MAX_THREADS),
    );
    return onSnapshot(
      q,
      (snap) => {
        setThreads(
          snap.docs.map((d) => ({
            id: d.id,
            title: String(d.get("title") ?? ""),
            status: String(d.get("status") ?? "idle"),
            updatedAt: millis(d.get("updatedAt")),
          })),
        );
      },
      () => setLive(false),
    );
  }, [db, uid, live, search]);

  /** After the page changed a thread: a no-op when live (the listener sees it), a search otherwise. */
  const refresh = useCallback(async () => {
    if (!live) await search();
  }, [live, search]);

  return { threads, error, refresh, live };
}

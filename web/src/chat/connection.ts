/**
 * The browser's connection, as the chat sees it: what counts as a lost connection, waiting to be
 * back, and following a run's stream across drops.
 */

/** One stream event as the SDK yields it (with its SSE id). */
export type Part = { id?: string; event: string; data: unknown };

/** Rejoins of one answer after the SDK's own reconnects gave up (each waits to be back online). */
const MAX_REJOINS = 5;

/** A failure of the connection (not an answer from the server): worth rejoining the run. */
function lostConnection(e: unknown): boolean {
  const err = e as { name?: string; message?: string; status?: number } | undefined;
  if (err?.status !== undefined) return false;
  return (
    err instanceof TypeError ||
    err?.name === "MaxReconnectAttemptsError" ||
    /network|fetch|connection|socket/i.test(err?.message ?? "")
  );
}

/** Resolves once the browser is online (at once if it is), after a short pause between tries. */
function backOnline(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const go = () => {
      window.removeEventListener("online", go);
      signal.removeEventListener("abort", go);
      setTimeout(resolve, 500);
    };
    if (navigator.onLine || signal.aborted) return go();
    window.addEventListener("online", go);
    signal.addEventListener("abort", go);
  });
}

/** A run's stream, as `follow` reads it. */
export interface RunStream {
  /** The stream from its start: a new run, or a join of the thread's running one. */
  open(): AsyncIterable<Part>;
  /** The run's id once the server named it (a run can only be rejoined by its id). */
  runId(): string | undefined;
  /** The run's stream after the event with `lastEventId` (from its start without one). */
  rejoin(runId: string, lastEventId: string | undefined): AsyncIterable<Part>;
  /** Takes one event; false once the page no longer wants the stream (it moved to another thread). */
  receive(part: Part): boolean;
  /** The connection dropped: the page waits to be back online and rejoins. */
  lost(): void;
}

/**
 * Reads a run's stream to its end, rejoining it when the connection drops: the SDK reconnects by
 * itself for a while (the run's Location and Last-Event-ID); once it gives up — offline for
 * longer — this waits until the browser is back online and rejoins after the last event it has,
 * so nothing is lost or shown twice. Throws what ended the stream otherwise.
 */
export async function follow(stream: RunStream, signal: AbortSignal): Promise<void> {
  let lastEventId: string | undefined;
  let parts = stream.open();
  for (let rejoins = 0; ; rejoins++) {
    try {
      for await (const part of parts) {
        if (part.id) lastEventId = part.id;
        if (!stream.receive(part)) return;
      }
      return;
    } catch (e) {
      const runId = stream.runId();
      if (signal.aborted || !runId || !lostConnection(e) || rejoins >= MAX_REJOINS) throw e;
      stream.lost();
      await backOnline(signal);
      parts = stream.rejoin(runId, lastEventId);
    }
  }
}

/** The browser's connection, as the chat sees it: what counts as a lost connection, and waiting to be back. */
/** Rejoins of one answer after the SDK's own reconnects gave up (each waits to be back online). */
export const MAX_REJOINS = 5;

/** A failure of the connection (not an answer from the server): worth rejoining the run. */
export function lostConnection(e: unknown): boolean {
  const err = e as { name?: string; message?: string; status?: number } | undefined;
  if (err?.status !== undefined) return false;
  return (
    err instanceof TypeError ||
    err?.name === "MaxReconnectAttemptsError" ||
    /network|fetch|connection|socket/i.test(err?.message ?? "")
  );
}

/** Resolves once the browser is online (at once if it is), after a short pause between tries. */
export function backOnline(signal: AbortSignal): Promise<void> {
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

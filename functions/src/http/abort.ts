/**
 * Why a run stopped early. LangChain's streaming model calls can leave a promise that rejects with
 * the abort reason after the run has already handled the abort (an unhandled rejection that would
 * crash the instance and every other run on it), so the reason has its own class that the process
 * guard recognises and drops.
 */
export class RunAbortedError extends Error {
  constructor(readonly why: "cancelled" | "disconnected" | "lease-lost" | "storage-lost" | "not-started") {
    super(`run ${why}`);
    this.name = "RunAbortedError";
  }
}

let installed = false;

/**
 * Keeps one run's stray rejection from killing the instance: our own abort reasons are dropped,
 * anything else is logged as an error (with a stack) instead of crashing concurrent runs.
 */
export function installProcessGuards(log: (message: string, data: Record<string, unknown>) => void): void {
  if (installed) return;
  installed = true;
  process.on("unhandledRejection", (reason) => {
    if (reason instanceof RunAbortedError) return;
    log("Unhandled promise rejection", { err: String((reason as Error)?.stack ?? reason) });
  });
}

/**
 * Why a run stopped early. LangChain's streaming model calls can leave a promise that rejects with
 * the abort reason after the run has already handled the abort (an unhandled rejection that would
 * crash the instance and every other run on it), so the reason has its own class that the process
 * guard recognises and drops.
 */
class RunAbortedError extends Error {
  constructor(
    readonly why:
      | "cancelled"
      | "disconnected"
      | "lease-lost"
      | "storage-lost"
      | "not-started"
      /** Let go on purpose (its client left for good): a task continues it (runs/continuation.ts). */
      | "handed-over",
  ) {
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

/** Why a run stopped early. */
export type StopReason = RunAbortedError["why"];

/**
 * A run's stop: the first reason given wins and is the only one (a later stop changes nothing).
 * `signal` aborts the graph (the model request, the BigQuery job); `stopped` rejects once it does,
 * for racing a wait that must not outlive the run.
 */
export class RunStop {
  private readonly ac = new AbortController();
  readonly signal = this.ac.signal;
  readonly stopped: Promise<never>;

  constructor() {
    this.stopped = new Promise<never>((_, reject) =>
      this.signal.addEventListener("abort", () => reject(this.signal.reason as Error), { once: true }),
    );
    this.stopped.catch(() => {}); // observed through race()
  }

  stop(why: StopReason): void {
    if (!this.signal.aborted) this.ac.abort(new RunAbortedError(why));
  }

  /** Why the run stopped, if it did. */
  get why(): StopReason | undefined {
    return this.signal.aborted ? (this.signal.reason as RunAbortedError).why : undefined;
  }

  /** Whether the person stopped it (Stop, or leaving a stream that cancels on disconnect). */
  get byPerson(): boolean {
    return this.why === "cancelled" || this.why === "disconnected";
  }

  /** `p`, or a rejection as soon as the run stops. */
  race<T>(p: Promise<T>): Promise<T> {
    return Promise.race([p, this.stopped]);
  }
}

/** Where threads, checkpoints and runs are kept, and how long a run's records live. */
import { docsOf, flag, int, readAll, textOr, type Env } from "./define";

/** The run and thread settings (part of `RuntimeConfig`). */
export interface RunsConfig {
  /** Root collection of thread metadata. */
  threadsCollection: string;
  /** Root collection of the FirestoreCheckpointer. */
  checkpointsCollection: string;
  /** Days after which checkpoint documents expire (Firestore TTL field); 0 = never. */
  checkpointTtlDays: number;
  /** A run's event log (for rejoining its stream) is kept this long (`expireAt`, a TTL policy). */
  runLogTtlHours: number;
  /** Keep the event log at all (QUARRY_RUN_LOG=off: streams cannot be rejoined; for comparison). */
  runLog: boolean;
  /** A run's lease on its thread; renewed every third of it, so a crashed run frees the thread this fast. */
  runLeaseSeconds: number;
  /** The same lease in milliseconds: the one conversion every wait on a run uses. */
  runLeaseMs: number;
  /** `runLogTtlHours` in milliseconds: how long a run's log and kept body live. */
  runLogTtlMs: number;
  /** Largest image or PDF a question may carry, in MB (runs/attachments.ts). */
  attachmentMaxMb: number;
  /** How many times a run whose instance stopped is continued from its checkpoint (0: never; runs/continuation.ts). */
  runContinuations: number;
  /** How often a run's watchdog task looks again while the run holds its lease. */
  runWatchdogSeconds: number;
  /**
   * How long after its lease ran out a run with continuations left still counts as running (its
   * watchdog takes it over within this): readers wait, new runs on the thread are refused. 0 when
   * continuations are off.
   */
  runOrphanMs: number;
}

const concern = "runs";

const RUNS_SETTINGS = {
  threadsCollection: textOr("QUARRY_THREADS_COLLECTION", {
    concern,
    default: "threads",
    description: "Firestore collection of thread metadata.",
  }),
  checkpointsCollection: textOr("QUARRY_CHECKPOINTS_COLLECTION", {
    concern,
    default: "checkpoints",
    description: "Root collection of the FirestoreCheckpointer.",
  }),
  checkpointTtlDays: int("QUARRY_CHECKPOINT_TTL_DAYS", {
    concern,
    default: 0,
    defaultText: "`0` (never)",
    description: "Sets an `expireAt` field on checkpoint documents for a Firestore TTL policy.",
  }),
  runLogTtlHours: int("QUARRY_RUN_LOG_TTL_HOURS", {
    concern,
    default: 24,
    description: "How long a run's event log (for rejoining its stream) is kept (`expireAt`, TTL policy).",
  }),
  runLog: flag("QUARRY_RUN_LOG", {
    concern,
    default: true,
    on: "on",
    off: "off",
    description: "`off` keeps no event log: streams cannot be rejoined (for comparison in the bench).",
  }),
  runLeaseSeconds: int("QUARRY_RUN_LEASE_SECONDS", {
    concern,
    default: 60,
    min: 1,
    description: "A run's lease on its thread; a crashed run frees the thread after this.",
  }),
  attachmentMaxMb: int("QUARRY_ATTACHMENT_MAX_MB", {
    concern,
    default: 10,
    min: 1,
    max: 20,
    description:
      "Largest image or PDF one question may carry, in MB (at most 5 per question; a request to start a run is then at most 31 MiB, under Cloud Functions' 32 MiB).",
  }),
  runContinuations: int("QUARRY_RUN_CONTINUATIONS", {
    concern,
    default: 2,
    min: 0,
    max: 10,
    description:
      "How many times a run whose instance stopped (crash, scale-in, deploy, a client gone for good) is continued from its last checkpoint by a task; after that it ends with `unavailable:run`. `0` turns durable runs off.",
  }),
  runWatchdogSeconds: int("QUARRY_RUN_WATCHDOG_SECONDS", {
    concern,
    default: 10,
    min: 1,
    max: 300,
    description:
      "How often a run's watchdog task looks again while the run still holds its lease: a stopped run is continued at most this long after its lease ran out.",
  }),
} as const;

/** The run and thread settings from an environment. */
export function readRunsConfig(env: Env): RunsConfig {
  const read = readAll(RUNS_SETTINGS, env);
  const runLeaseMs = read.runLeaseSeconds * 1000;
  // The watchdog looks every P while the lease is held: a lapsed lease is seen within P, taken over
  // in one transaction; twice P more covers a slow delivery before readers give the run up.
  const runOrphanMs = read.runContinuations > 0 ? runLeaseMs + 3 * read.runWatchdogSeconds * 1000 : 0;
  return { ...read, runLeaseMs, runOrphanMs, runLogTtlMs: read.runLogTtlHours * 3_600_000 };
}

export const RUNS_DOCS = docsOf(RUNS_SETTINGS);

/**
 * How the run watchdog's task queue retries (runs/continuation.ts): a delivery that finds its run
 * still holding the lease fails on purpose and is delivered again one watchdog interval later, for
 * as long as a run and its continuations may last (`timeoutSeconds` each).
 */
export function watchdogRetryOf(env: Env, timeoutSeconds: number) {
  const { runLeaseSeconds, runWatchdogSeconds, runContinuations } = readAll(RUNS_SETTINGS, env);
  const seconds = (runContinuations + 1) * (timeoutSeconds + runLeaseSeconds) + 60;
  return {
    maxAttempts: Math.ceil(seconds / runWatchdogSeconds) + 2,
    minBackoffSeconds: runWatchdogSeconds,
    maxBackoffSeconds: runWatchdogSeconds,
    maxDoublings: 0,
    maxRetrySeconds: seconds,
  };
}

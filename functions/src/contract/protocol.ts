/**
 * The run API's protocol facts, in one place: the graph's id, the stream modes served, run and
 * thread statuses and how a run's outcome maps onto them, the run object's shape, and what `/info`
 * reports. Routes, the executor, join, background runs and the page all import them from here.
 */

/** The one graph (assistant) the API serves. */
export const ASSISTANT_ID = "quarry";

/**
 * Stream modes a run serves, as a client names them. The SDK's `messages-tuple` is LangGraph's
 * `messages` mode on the wire (`messages` events of `[chunk, metadata]`). The page asks for all of
 * them; a background run logs all of them for whoever joins it.
 */
export const STREAM_MODES = ["values", "updates", "messages-tuple", "custom"] as const;
export type StreamMode = (typeof STREAM_MODES)[number];

/** LangGraph's stream mode behind each protocol stream mode. */
export const GRAPH_MODE: Record<StreamMode, "values" | "updates" | "messages" | "custom"> = {
  values: "values",
  updates: "updates",
  "messages-tuple": "messages",
  custom: "custom",
};

/** The protocol stream mode an SSE event belongs to (`messages` and `messages/*` events are `messages-tuple`). */
export function modeOfEvent(event: string): string {
  const base = event.split("|")[0];
  return base === "messages" || base.startsWith("messages/") ? "messages-tuple" : base;
}

/** A thread's status, as the Agent Server reports it. */
export const THREAD_STATUSES = ["idle", "busy", "interrupted", "error"] as const;
export type ThreadStatus = (typeof THREAD_STATUSES)[number];

/** A run's status, as the Agent Server reports it (there is no "cancelled": a stopped run is "interrupted"). */
export const RUN_STATUSES = ["pending", "running", "error", "success", "timeout", "interrupted"] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/**
 * How a run that started ended, as Quarry records it (the log's end marker, a background run's
 * document): `interrupted` stopped at a question to the user, `cancelled` was stopped (Stop, a
 * disconnect, another run's multitask strategy).
 */
export type RunOutcome = "success" | "error" | "interrupted" | "cancelled";

/** A run's protocol status from its recorded outcome. */
export function runStatusOf(outcome: RunOutcome): RunStatus {
  return outcome === "cancelled" ? "interrupted" : outcome;
}

/** The thread's status once a run with this outcome has let it go. */
export function threadStatusAfter(outcome: RunOutcome): ThreadStatus {
  return outcome === "error" ? "error" : outcome === "interrupted" ? "interrupted" : "idle";
}

/** What a busy thread does with a new run. `enqueue` is not served. */
export const MULTITASK_STRATEGIES = ["reject", "interrupt", "rollback"] as const;
export type MultitaskStrategy = (typeof MULTITASK_STRATEGIES)[number];

/** The Agent Server's run object. */
export interface RunObject {
  run_id: string;
  thread_id: string;
  assistant_id: string;
  status: RunStatus;
  metadata: Record<string, unknown>;
  multitask_strategy: MultitaskStrategy | null;
  created_at: string;
  updated_at: string;
}

export function runObject(
  threadId: string,
  runId: string,
  status: RunStatus,
  opts: { at?: Date; strategy?: MultitaskStrategy | null } = {},
): RunObject {
  const at = (opts.at ?? new Date()).toISOString();
  return {
    run_id: runId,
    thread_id: threadId,
    assistant_id: ASSISTANT_ID,
    status,
    metadata: {},
    multitask_strategy: opts.strategy ?? null,
    created_at: at,
    updated_at: at,
  };
}

/** `GET /info`: which of the protocol's features this server has. */
/** The v2 commands Quarry answers (docs/streaming-v2.md). */
export const V2_COMMANDS = [
  "run.start",
  "input.respond",
  "state.get",
  "state.listCheckpoints",
  "state.fork",
  "agent.getTree",
] as const;

export function serverInfo(served: { resumableStreams: boolean }) {
  return {
    version: "quarry-0.1.0",
    /**
     * The wire protocols served: the Agent Protocol's runs API (v1: `runs/stream`, the SDK client,
     * `useStream` ≤ 0.x, agent-chat-ui) and the Agent Streaming Protocol v2 over HTTP/SSE
     * (`/threads/:id/commands`, `/threads/:id/stream/events`: `@langchain/react` 1.x).
     */
    protocols: {
      v1: { runs_stream: true },
      // v2 streams are read from the runs' event log: served only with it.
      ...(served.resumableStreams ? { v2: { transports: ["sse-http"], commands: V2_COMMANDS } } : {}),
    },
    flags: {
      assistants: true,
      crons: false,
      langsmith: false,
      store: false,
      resumable_streams: served.resumableStreams,
      background_runs: true,
      interrupts: true,
    },
  };
}

/**
 * The graph's output channels: what its `values` stream carries (and `invoke` returns) — the
 * conversation and its usage. The turn's scratch state stays in the checkpoints.
 */
export const OUTPUT_CHANNELS = ["messages", "usage"] as const;

/**
 * From graph chunks to protocol events, as a pure step: what a run sends for each chunk LangGraph
 * streams, and what the run has shown so far — its usage, whether it stopped at a question to the
 * user, the answer's text streamed so far (kept if the run is stopped), and its phase boundaries.
 * No I/O: the executor consumes it.
 */
import type { QuarryEvent, Usage } from "../contract/events";
import type { StreamMode } from "../contract/protocol";
import { OUTPUT_CHANNELS } from "../contract/protocol";
import { toPlain } from "./serialize";

/** One chunk of `graph.stream` with several stream modes: `[langgraphMode, data]`. */
export type Chunk = [string, unknown];

/** What the executor does for a chunk, in order. */
export type Step =
  /** Send this event to the client and the run's log. */
  | { send: string; data: unknown }
  /**
   * A phase boundary (not `ingress` nor `done`): what the run sent so far goes to its log now, with
   * the run's progress (`step`: LangGraph's step starting).
   */
  | { boundary: true; step?: number };

/** The run name of the generator's model call (model-call.ts: `quarry_<node>`), on its tokens' metadata. */
export const GENERATOR_CALL = "quarry_generator";

/**
 * Whether a `messages` item is a streamed AI token (a chunk), not a node's finished message. Duck
 * typed: in the compiled (CommonJS) function, a provider loaded as ESM makes its chunks with the
 * other build of @langchain/core, whose classes `AIMessageChunk.isInstance` does not recognise.
 */
function isAiChunk(m: unknown): m is { id?: string; content: unknown } {
  const x = m as { type?: unknown; _getType?: () => string; concat?: unknown } | null;
  if (!x || typeof x !== "object" || typeof x.concat !== "function") return false;
  return x.type === "ai" || x._getType?.() === "ai";
}

/**
 * The metadata a `messages` event carries: what clients read of it — the node and step it came
 * from, its checkpoint namespace (the SDK tells subgraph messages by it), the call's name and
 * tags, the run and thread. LangGraph's scheduling details (triggers, task path) and the person's
 * id stay on the server.
 */
const STREAM_METADATA = [
  "langgraph_node",
  "langgraph_step",
  "langgraph_checkpoint_ns",
  "name",
  "tags",
  "run_id",
  "thread_id",
] as const;

function streamMetadata(meta: Record<string, unknown> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of STREAM_METADATA) if (meta?.[k] !== undefined) out[k] = toPlain(meta[k]);
  return out;
}

export class RunTranscript {
  /** The turn's usage (the last `usage` event), plus the run itself. */
  usage: Partial<Usage & { runs: number }> = { runs: 1 };
  /** The run stopped at a question to the user: the thread waits for the answer. */
  asking = false;
  /** The answer's tokens streamed so far; cleared once the answer is in the state. */
  answerSoFar: { id?: string; text: string } | undefined;

  /** The thread's messages as of the run's latest step (for the thread's values). */
  conversation: unknown[] | undefined;
  /** The output channels of the last `values` event sent. */
  private sentValues: Record<string, unknown> | undefined;

  /** `modes`: the protocol stream modes the client asked for. */
  constructor(private readonly modes: readonly StreamMode[]) {}

  /**
   * The graph's stream modes this run needs: the client's, plus `custom`, `updates` (interrupts
   * show there) and `values` (the conversation, for the thread's values).
   */
  static graphModes(modes: readonly StreamMode[], graphMode: Record<StreamMode, string>): string[] {
    return [...new Set(modes.map((m) => graphMode[m]).concat("custom", "updates", "values"))];
  }

  /** The steps for one chunk. */
  *steps([mode, data]: Chunk): Generator<Step> {
    if (mode === "custom") yield* this.custom(data as QuarryEvent | undefined);
    else if (mode === "messages") yield* this.message(data as [unknown, Record<string, unknown> | undefined]);
    else yield* this.state(mode, data);
  }

  private *custom(ev: QuarryEvent | undefined): Generator<Step> {
    if (ev?.type === "usage") this.usage = { ...ev.turn, runs: 1 };
    if (this.modes.includes("custom")) yield { send: "custom", data: toPlain(ev) };
    // Neither the first phase nor the last is a boundary: before `ingress` the run has done nothing
    // its question's checkpoint does not hold, and after `done` its end follows at once, whose
    // writes carry what it sent.
    if (ev?.type === "phase" && ev.phase !== "ingress" && ev.phase !== "done")
      yield { boundary: true, ...(ev.step !== undefined ? { step: ev.step } : {}) };
  }

  private *message(data: [unknown, Record<string, unknown> | undefined]): Generator<Step> {
    // Nodes' finished messages come through this mode too (named after the node); the answer's
    // tokens carry the generator's model-call name.
    const [msg, meta] = data;
    if (isAiChunk(msg) && meta?.name === GENERATOR_CALL) {
      if (typeof msg.content === "string") {
        this.answerSoFar = {
          id: msg.id ?? this.answerSoFar?.id,
          text: (this.answerSoFar?.text ?? "") + msg.content,
        };
      }
    }
    yield { send: "messages", data: [toPlain(msg, true), streamMetadata(meta)] };
  }

  private *state(mode: string, data: unknown): Generator<Step> {
    if (mode === "values") return yield* this.values(data as Record<string, unknown> | undefined);
    const update = mode === "updates" && data && typeof data === "object" ? data : undefined;
    if (update && "__interrupt__" in update) {
      this.asking = true;
    }
    // The answer is in the state now: a stop from here on has nothing partial to keep.
    if (update && "generator" in update) this.answerSoFar = undefined;
    if (this.modes.includes(mode as StreamMode)) yield { send: mode, data: toPlain(data) };
  }

  /**
   * A `values` event carries the graph's output channels (OUTPUT_CHANNELS: the messages and the usage),
   * plus the interrupt when the run stops at a question (QuarryOutput in agent/state.ts declares the
   * same channels); a step that changed none of them sends
   * nothing, as LangGraph does for a graph's output. LangGraph.js streams every channel of the
   * state in this mode; the turn's scratch state stays in the thread's checkpoints.
   */
  private *values(data: Record<string, unknown> | undefined): Generator<Step> {
    if (Array.isArray(data?.messages)) this.conversation = data.messages;
    if (!this.modes.includes("values") || !data) return;
    const out: Record<string, unknown> = {};
    let changed = "__interrupt__" in data;
    for (const k of OUTPUT_CHANNELS) {
      if (!(k in data)) continue;
      out[k] = data[k];
      // Channels hand out the same object until a step writes them.
      if (this.sentValues?.[k] !== data[k]) changed = true;
    }
    if ("__interrupt__" in data) out.__interrupt__ = data.__interrupt__;
    if (!changed) return;
    this.sentValues = out;
    yield { send: "values", data: toPlain(out) };
  }
}

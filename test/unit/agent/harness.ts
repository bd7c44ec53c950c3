/**
 * Shared set-up for the agent tests: the real graph with a MemorySaver, a scripted model, and the
 * real warehouse tools over DuckDB's sample dataset (or any tools), streamed the way the HTTP
 * layer streams it.
 */
import type { KnowledgeBase } from "../../../functions/src/context";
import { HumanMessage, type BaseMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { MemorySaver, type BaseCheckpointSaver } from "@langchain/langgraph";
import { readConfig, type RuntimeConfig } from "../../../functions/src/config";
import { createAgentGraph, type QuarryEvent } from "../../../functions/src/agent";
import { createWarehouseTools, getWarehouse } from "../../../functions/src/tools";
import type { QueryContext, Warehouse } from "../../../functions/src/tools/types";
import { ScriptedChatModel } from "../../support/scripted-model";
import type { Script } from "../../support/scripted-model-script";
import { personConfig } from "../../support/person";

export function testConfig(env: Record<string, string> = {}): RuntimeConfig {
  return readConfig({ GOOGLE_CLOUD_PROJECT: "demo-quarry", ...env });
}

/** The real tools over the DuckDB sample dataset. */
export async function duckTools(cfg = testConfig()): Promise<StructuredToolInterface[]> {
  return createWarehouseTools(await getWarehouse(cfg.warehouse));
}

export interface Harness {
  graph: Awaited<ReturnType<typeof createAgentGraph>>;
  model: ScriptedChatModel;
  checkpointer: BaseCheckpointSaver;
}

export async function harness(
  script: Script,
  opts: {
    tools?: StructuredToolInterface[];
    /** The dry run of the warehouse behind `tools` (default: the DuckDB sample's, with its tools). */
    dryRun?: Warehouse["dryRun"];
    env?: Record<string, string>;
    toolTimeoutMs?: number;
    checkpointer?: BaseCheckpointSaver;
    /** The team's context (with tools given, the graph loads none itself). */
    knowledge?: KnowledgeBase;
    /** The graph's clock (default: a fixed instant). */
    now?: () => Date;
  } = {},
): Promise<Harness> {
  const cfg = testConfig(opts.env);
  const model = new ScriptedChatModel(script);
  const checkpointer = opts.checkpointer ?? new MemorySaver();
  const duck = opts.tools ? undefined : await getWarehouse(cfg.warehouse);
  const dryRun =
    opts.dryRun ?? (duck ? (sql: string, ctx: QueryContext) => duck.dryRun(sql, ctx) : undefined);
  const graph = await createAgentGraph({
    checkpointer,
    model,
    tools: opts.tools ?? createWarehouseTools(duck!),
    ...(dryRun ? { dryRun } : {}),
    config: cfg,
    toolTimeoutMs: opts.toolTimeoutMs,
    ...(opts.knowledge ? { knowledge: opts.knowledge } : {}),
    now: opts.now ?? (() => new Date("2026-01-15T10:00:00Z")),
  });
  return { graph, model, checkpointer };
}

export interface TurnOutput {
  custom: QuarryEvent[];
  /** `messages` mode chunks: the message and LangGraph's metadata (langgraph_node, tags). */
  messages: { message: BaseMessage; metadata: Record<string, unknown> }[];
  updates: Record<string, unknown>[];
  values: Record<string, unknown>[];
  /** Everything in arrival order, for ordering assertions. */
  all: [string, unknown][];
  error?: unknown;
}

/** Streams one turn like the HTTP layer does and collects every chunk by mode. */
export async function runTurn(
  h: Harness,
  threadId: string,
  /** The question: text, or content blocks (text with images and PDFs). */
  text: string | ({ type: "text"; text: string } | Record<string, unknown>)[],
  signal?: AbortSignal,
): Promise<TurnOutput> {
  const out: TurnOutput = { custom: [], messages: [], updates: [], values: [], all: [] };
  try {
    const stream = await h.graph.stream(
      { messages: [new HumanMessage({ content: text as HumanMessage["content"] })] },
      {
        configurable: {
          thread_id: threadId,
          user_id: "user-1",
          run_id: `run-${Math.random()}`,
          ...personConfig(),
        },
        streamMode: ["values", "updates", "messages", "custom"],
        signal,
      },
    );
    for await (const [mode, chunk] of stream as AsyncIterable<[string, unknown]>) {
      out.all.push([mode, chunk]);
      if (mode === "custom") out.custom.push(chunk as QuarryEvent);
      else if (mode === "messages") {
        const [message, metadata] = chunk as [BaseMessage, Record<string, unknown>];
        out.messages.push({ message, metadata });
      } else if (mode === "updates") out.updates.push(chunk as Record<string, unknown>);
      else if (mode === "values") out.values.push(chunk as Record<string, unknown>);
    }
  } catch (err) {
    out.error = err;
  }
  return out;
}

/**
 * Chunks the `messages` mode got from a model's token callbacks (metadata `name` is the model
 * call's run name, `quarry_<node>`), as opposed to whole messages a node returned (name = node).
 */
export function tokenChunks(out: TurnOutput) {
  return out.messages
    .filter((m) => String(m.metadata.name ?? "").startsWith("quarry_"))
    .map((m) => ({ node: m.metadata.langgraph_node as string, text: String(m.message.content) }));
}

export function toolCallsOf(h: Harness): string[] {
  return h.model.calls.flatMap((c) => (c.reply.toolCalls ?? []).map((t) => t.name));
}

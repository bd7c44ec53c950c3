/**
 * Quarry's agent: `createAgentGraph` compiles the graph (ingress → planner → executor → verifier →
 * generator → summarizer) with a checkpointer. The HTTP layer streams it with
 * `streamMode: ["values", "updates", "messages", "custom"]`; custom chunks are `QuarryEvent`s.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import { config as runtimeConfig, type RuntimeConfig } from "../config";
import type { AgentDeps } from "./deps";
import { buildGraph, type QuarryGraph } from "./graph";

export { turnInput } from "./graph";
import { createChatModel } from "./model";

export type { QuarryEvent, Phase, Usage } from "./events";
export type { QuarryGraph } from "./graph";
export type { QuarryStateType, UserContext } from "./state";
export { createChatModel, preflightVertex, ModelConfigError } from "./model";
export { NOSTREAM_TAG } from "./model-call";

export interface CreateAgentGraphOptions {
  checkpointer: BaseCheckpointSaver;
  /** Defaults to ChatVertexAI from config (or the stand-in named by VERTEX_AI_EMULATOR_HOST). */
  model?: BaseChatModel;
  /** Defaults to the warehouse tools from config (DuckDB sample locally, BigQuery in production). */
  tools?: StructuredToolInterface[];
  config?: RuntimeConfig;
  /** A tool call running longer becomes a `timeout` tool error; defaults to the query timeout + 15 s. */
  toolTimeoutMs?: number;
  /** Clock for prompts (tests pin it). */
  now?: () => Date;
}

const DIALECTS = {
  duckdb: { name: "DuckDB SQL", note: "Tables are named schema.table." },
  bigquery: { name: "BigQuery GoogleSQL", note: "Name tables as `project.dataset.table` in backticks." },
} as const;

/** Compiles Quarry's graph with the given checkpointer; model and tools default to production ones from config. */
export async function createAgentGraph(opts: CreateAgentGraphOptions): Promise<QuarryGraph> {
  return (await createGraphFactory(opts))(opts.checkpointer);
}

/**
 * Builds the model and tools once and returns a function that compiles the graph for a
 * checkpointer (cheap: a server compiles one per run to give each run its own checkpointer front).
 */
export async function createGraphFactory(
  opts: Omit<CreateAgentGraphOptions, "checkpointer">,
): Promise<(checkpointer: BaseCheckpointSaver) => QuarryGraph> {
  const cfg = opts.config ?? runtimeConfig();
  let dialect: { name: string; note: string } = DIALECTS[cfg.warehouse.engine];
  let tools: StructuredToolInterface[];
  if (opts.tools) {
    tools = opts.tools;
  } else {
    const { getWarehouse, createWarehouseTools } = await import("../tools/index.js");
    const warehouse = await getWarehouse(cfg.warehouse);
    tools = createWarehouseTools(warehouse, {
      previewRows: cfg.warehouse.previewRows,
      previewChars: cfg.warehouse.previewChars,
    });
    dialect = {
      name: DIALECTS[warehouse.dialect as keyof typeof DIALECTS].name,
      note: warehouse.dialectNote,
    };
  }
  const model = opts.model ?? (await createChatModel(cfg.model));
  const deps: AgentDeps = {
    model,
    tools,
    agent: cfg.agent,
    toolTimeoutMs: opts.toolTimeoutMs ?? cfg.warehouse.bigquery.timeoutMs + 15_000,
    digestChars: cfg.warehouse.previewChars,
    dialect,
    now: opts.now ?? (() => new Date()),
  };
  return (checkpointer) => buildGraph(deps, checkpointer);
}

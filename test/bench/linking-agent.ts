/**
 * The linking bench's measures through the real graph: the planner's prompt tokens for a question
 * (the prompt recorded, no model called), and model calls for a first question about a table not
 * yet described (scripted model, real tools).
 */
import { MemorySaver } from "@langchain/langgraph";
import { PromptRecorder } from "../../scripts/prompt-recorder";
import { createAgentGraph, turnInput } from "../../functions/src/agent";
import { estimateTokens } from "../../functions/src/agent/prompt-inputs/history";
import type { readConfig } from "../../functions/src/config";
import { CatalogCache, type Catalog } from "../../functions/src/context";
import { getWarehouse } from "../../functions/src/tools";
import { ScriptedChatModel } from "../support/scripted-model";
import { currentTurnOf } from "../support/scripted-model-script";
import { personConfig } from "../support/person";

/** The planner's prompt tokens; with `tools` given the graph lists every table (the old way, no catalog). */
export async function plannerTokens(
  cfg: ReturnType<typeof readConfig>,
  question: string,
  opts: { tools?: Awaited<ReturnType<typeof toolsFor>>; catalog?: Catalog } = {},
): Promise<number> {
  const recorder = new PromptRecorder({});
  const graph = await createAgentGraph({
    checkpointer: new MemorySaver(),
    model: recorder,
    config: cfg,
    ...(opts.tools ? { tools: opts.tools } : {}),
    // The catalog measured above, not a second build of it.
    ...(opts.catalog ? { catalog: new CatalogCache(async () => opts.catalog!, { maxAgeMs: Infinity }) } : {}),
  });
  await graph
    .invoke(turnInput({ type: "human", content: question, id: "q" }) as never, {
      configurable: { thread_id: "t", ...personConfig() },
    })
    .catch(() => undefined);
  return estimateTokens(recorder.prompt ?? []);
}

/** Planner that queries at once when the prompt shows the column it needs, else describes the table first. */
export async function callsForUnseenTable(
  cfg: ReturnType<typeof readConfig>,
  tools?: Awaited<ReturnType<typeof toolsFor>>,
) {
  const model = new ScriptedChatModel((req) => {
    if (req.role !== "planner") return { text: "There are 210 products." };
    const turn = currentTurnOf(req);
    if (turn.some((t) => t.role === "tool" && t.toolName === "bq_query")) return { text: "done" };
    const knowsColumns = /launched_on/.test(req.system) || turn.some((t) => t.toolName === "describe_table");
    return knowsColumns
      ? {
          toolCalls: [
            {
              name: "bq_query",
              args: { sql: "SELECT COUNT(*) AS n FROM shop.products WHERE year(launched_on) = 2025" },
            },
          ],
        }
      : { toolCalls: [{ name: "describe_table", args: { table: "shop.products" } }] };
  });
  const graph = await createAgentGraph({
    checkpointer: new MemorySaver(),
    model,
    config: cfg,
    ...(tools ? { tools } : {}),
  });
  await graph.invoke(
    turnInput({ type: "human", content: "How many products were launched in 2025?", id: "q" }) as never,
    {
      configurable: { thread_id: "t", ...personConfig() },
    },
  );
  return model.calls.length;
}

export async function toolsFor(cfg: ReturnType<typeof readConfig>) {
  const { createWarehouseTools } = await import("../../functions/src/tools");
  return createWarehouseTools(await getWarehouse(cfg.warehouse));
}

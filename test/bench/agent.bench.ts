/**
 * Agent budget: model calls and tool calls per question type (greeting, one query, one retry,
 * retries exhausted) on the real graph with the real DuckDB tools, driven by scripted replies.
 * Each type runs through two model drivers measured in the same run: the in-process scripted model
 * (baseline) and the real ChatVertexAI over HTTPS against the loopback Vertex AI stand-in, so the
 * table also shows what the adapter and the wire add per turn. Budgets (ARCHITECTURE §2): greeting
 * ≤ 2 model calls, one query ≤ 3. "one query + follow-ups" is "one query" whose answer ends with
 * three follow-up questions (as the generator is now asked to write): the suggestions cost no
 * model call, only the output tokens the table shows beside the same answer without them.
 */
import { HumanMessage } from "@langchain/core/messages";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { MemorySaver } from "@langchain/langgraph";
import { createAgentGraph, type QuarryEvent } from "../../functions/src/agent";
import { createChatModel } from "../../functions/src/agent/model";
import { readConfig } from "../../functions/src/config";
import { closeWarehouses, createWarehouseTools, getWarehouse } from "../../functions/src/tools";
import { ScriptedChatModel } from "../support/scripted-model";
import { byRole, type Script } from "../support/scripted-model-script";
import { FOLLOW_UPS_MARKER } from "../../functions/src/contract/follow-ups";
import { startVertexStandin } from "../support/vertex-standin";
import { personConfig } from "../support/person";

const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const q = (sql: string) => ({ toolCalls: [{ name: "bq_query", args: { sql } }] });

const CASES: { name: string; question: string; budget: string; script: () => Script }[] = [
  {
    name: "greeting",
    question: "Hello!",
    budget: "≤ 2",
    script: () =>
      byRole({
        planner: [{ text: "no data needed" }],
        generator: [{ text: "Hello! Ask me about your data." }],
      }),
  },
  {
    name: "one query",
    question: "How many orders per status?",
    budget: "≤ 3",
    script: () =>
      byRole({
        planner: [q("SELECT status, COUNT(*) AS n FROM shop.orders GROUP BY status")],
        generator: [{ text: "Five statuses; most orders are delivered." }],
      }),
  },
  {
    name: "one query + follow-ups",
    question: "How many orders per status?",
    budget: "≤ 3",
    script: () =>
      byRole({
        planner: [q("SELECT status, COUNT(*) AS n FROM shop.orders GROUP BY status")],
        generator: [
          {
            text: [
              "Five statuses; most orders are delivered.",
              FOLLOW_UPS_MARKER,
              "- How many orders per status by channel?",
              "- How did orders per status compare with last year?",
              "- Which customers have the most cancelled orders?",
            ].join("\n"),
          },
        ],
      }),
  },
  {
    name: "schema + query",
    question: "How many orders per channel?",
    budget: "≤ 3",
    script: () =>
      byRole({
        planner: [
          { toolCalls: [{ name: "describe_table", args: { table: "shop.orders" } }] },
          q("SELECT channel, COUNT(*) AS n FROM shop.orders GROUP BY channel"),
        ],
        generator: [{ text: "Three channels." }],
      }),
  },
  {
    name: "one retry",
    question: "Show three product ids",
    budget: "—",
    script: () =>
      byRole({
        planner: [
          q("SELECT prodct_id FROM shop.products LIMIT 3"),
          q("SELECT product_id FROM shop.products LIMIT 3"),
        ],
        generator: [{ text: "Three ids." }],
      }),
  },
  {
    name: "retries exhausted",
    question: "Orders placed by fax?",
    budget: "—",
    script: () =>
      byRole({
        planner: [q("SELECT order_id FROM shop.orders WHERE channel = 'fax'")],
        generator: [{ text: "No orders by fax." }],
      }),
  },
];

interface Row {
  driver: string;
  type: string;
  modelCalls: number;
  toolCalls: number;
  outputTokens: number;
  suggestions: number;
  retries: number;
  budget: string;
  medianMs: number;
}

async function main() {
  const cfg = readConfig({ GOOGLE_CLOUD_PROJECT: "demo-quarry" });
  const tools = createWarehouseTools(await getWarehouse(cfg.warehouse));
  const standin = await startVertexStandin({ trust: true });
  const vertexCfg = readConfig({
    GOOGLE_CLOUD_PROJECT: "demo-quarry",
    VERTEX_AI_EMULATOR_HOST: standin.host,
  });
  const noCreds = { credentialsFileExists: false, adcFileExists: false, onGoogleCloud: false };

  const drivers: { name: string; model: (script: Script) => Promise<BaseChatModel> }[] = [
    { name: "scripted (baseline)", model: async (script) => new ScriptedChatModel(script) },
    {
      name: "ChatVertexAI + stand-in",
      model: async (script) => {
        standin.setScript(script);
        return createChatModel(vertexCfg.model, noCreds);
      },
    },
  ];

  const rows: Row[] = [];
  for (const driver of drivers) {
    for (const c of CASES) {
      const times: number[] = [];
      let last: QuarryEvent[] = [];
      for (let i = 0; i < RUNS; i++) {
        const model = await driver.model(c.script());
        const graph = await createAgentGraph({ checkpointer: new MemorySaver(), model, tools, config: cfg });
        const events: QuarryEvent[] = [];
        const t0 = performance.now();
        const stream = await graph.stream(
          { messages: [new HumanMessage(c.question)] },
          {
            configurable: { thread_id: `b${i}`, user_id: "bench", run_id: `r${i}`, ...personConfig("bench") },
            streamMode: ["custom", "messages"],
          },
        );
        for await (const [mode, chunk] of stream as AsyncIterable<[string, unknown]>) {
          if (mode === "custom") events.push(chunk as QuarryEvent);
        }
        times.push(performance.now() - t0);
        last = events;
      }
      const usage = last.filter((e) => e.type === "usage").at(-1);
      if (usage?.type !== "usage") throw new Error(`${c.name}: no usage event`);
      times.sort((a, b) => a - b);
      rows.push({
        driver: driver.name,
        type: c.name,
        modelCalls: usage.turn.modelCalls,
        toolCalls: usage.turn.toolCalls,
        outputTokens: usage.turn.outputTokens,
        suggestions: last
          .filter((e) => e.type === "suggestions")
          .reduce((n, e) => n + (e.type === "suggestions" ? e.questions.length : 0), 0),
        retries: last.filter((e) => e.type === "retry").length,
        budget: c.budget,
        medianMs: Math.round(times[Math.floor(times.length / 2)] * 10) / 10,
      });
    }
  }
  await standin.stop();
  await closeWarehouses();

  console.log(`Agent turns on DuckDB's sample dataset, median of ${RUNS} runs per row\n`);
  console.table(
    rows.map((r) => ({
      driver: r.driver,
      "question type": r.type,
      "model calls": r.modelCalls,
      "budget (model calls)": r.budget,
      "tool calls": r.toolCalls,
      "output tokens": r.outputTokens,
      "follow-ups": r.suggestions,
      retries: r.retries,
      "median ms/turn": r.medianMs,
    })),
  );
  const over = rows.filter((r) => r.budget.startsWith("≤") && r.modelCalls > Number(r.budget.slice(2)));
  if (over.length) {
    console.error(`Over budget: ${over.map((r) => `${r.driver}/${r.type}`).join(", ")}`);
    process.exitCode = 1;
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

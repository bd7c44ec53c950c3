/**
 * One investigation against the same questions asked one by one, on the real graph (MemorySaver)
 * with the real DuckDB tools over the planted-cause table `retail.sales`, measured in the same run:
 * - investigation: "Why did revenue fall in March 2025?" with `investigate: true` — the plan (one
 *   model call), the review answered "run", the plan's four steps in parallel, the report;
 * - one by one: the four steps' questions as four ordinary turns of one thread, each a planner
 *   call with the step's SQL, a planner call that stops, and an answer.
 * The model is scripted; tokens are estimated as characters / 4 of what each call was sent and
 * answered, so they measure the prompts Quarry builds. DuckDB bills no bytes (BigQuery would bill
 * the same queries in both columns). Wall time is the median of BENCH_RUNS runs (default 5).
 */
import { HumanMessage } from "@langchain/core/messages";
import { Command, MemorySaver } from "@langchain/langgraph";
import { createAgentGraph } from "../../functions/src/agent";
import { stepSql } from "../../functions/src/agent/investigation/sql";
import { readConfig } from "../../functions/src/config";
import { closeWarehouses, createWarehouseTools, getWarehouse } from "../../functions/src/tools";
import { PLANTED_PLAN, RETAIL_FILES, investigationScript } from "../support/investigation-script";
import { personConfig } from "../support/person";
import { ScriptedChatModel } from "../support/scripted-model";
import { currentTurnOf, questionOf, type Script, type ScriptRequest } from "../support/scripted-model-script";

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const QUESTIONS = PLANTED_PLAN.steps.map((s) => ({
  question: `${s.title}?`,
  sql: stepSql(PLANTED_PLAN, s, "duckdb"),
}));

/** Usage as characters / 4 of the request and the reply. */
function measured(script: Script): Script {
  return async (req) => {
    const reply = await script(req);
    const sent = req.system.length + JSON.stringify(req.turns).length;
    const answered = (reply.text ?? "").length + JSON.stringify(reply.toolCalls ?? []).length;
    return { ...reply, usage: { input: Math.ceil(sent / 4), output: Math.ceil(answered / 4) } };
  };
}

/** One question at a time: the step's SQL, then stop, then a short answer. */
function oneByOne(req: ScriptRequest) {
  const q = QUESTIONS.find((x) => questionOf(req).startsWith(x.question))!;
  if (req.role === "planner") {
    const ran = currentTurnOf(req).some((t) => t.role === "tool");
    return ran
      ? { text: "The result answers it." }
      : { toolCalls: [{ name: "bq_query", args: { sql: q.sql } }] };
  }
  if (req.role === "generator") return { text: `Here is ${q.question.toLowerCase()} from the result.` };
  return { text: "OK" };
}

interface Row {
  modelCalls: number;
  inputTokens: number;
  outputTokens: number;
  queries: number;
  ms: number;
}

async function graphWith(script: Script) {
  const cfg = readConfig({ GOOGLE_CLOUD_PROJECT: "demo-quarry", QUARRY_DUCKDB_FILES: RETAIL_FILES });
  const model = new ScriptedChatModel(measured(script));
  const warehouse = await getWarehouse(cfg.warehouse);
  const tools = createWarehouseTools(warehouse);
  const dryRun = warehouse.dryRun.bind(warehouse); // steps reserve their bytes and run in parallel
  const graph = await createAgentGraph({
    checkpointer: new MemorySaver(),
    model,
    tools,
    dryRun,
    config: cfg,
  });
  return { graph, model };
}

const config = (thread: string) => ({
  configurable: { thread_id: thread, user_id: "bench", run_id: `run-${thread}`, ...personConfig() },
});

async function usageOf(graph: Awaited<ReturnType<typeof graphWith>>["graph"], thread: string) {
  const state = await graph.getState(config(thread));
  return state.values.usage as {
    inputTokens: number;
    outputTokens: number;
    modelCalls: number;
    toolCalls: number;
  };
}

/** What one thread's questions cost, from its usage, and how long they took. */
async function rowOf(
  graph: Awaited<ReturnType<typeof graphWith>>["graph"],
  thread: string,
  ms: number,
): Promise<Row> {
  const u = await usageOf(graph, thread);
  return {
    modelCalls: u.modelCalls,
    inputTokens: u.inputTokens,
    outputTokens: u.outputTokens,
    queries: u.toolCalls,
    ms,
  };
}

async function investigation(i: number): Promise<Row> {
  const { graph } = await graphWith(investigationScript());
  const thread = `inv-${i}`;
  const started = performance.now();
  const q = new HumanMessage("Why did revenue fall in March 2025? [investigation:good]");
  await graph.invoke({ messages: [q], investigate: true }, config(thread));
  await graph.invoke(new Command({ resume: "run" }), config(thread));
  return rowOf(graph, thread, performance.now() - started);
}

async function separately(i: number): Promise<Row> {
  const { graph } = await graphWith(oneByOne);
  const thread = `one-${i}`;
  const started = performance.now();
  for (const { question } of QUESTIONS)
    await graph.invoke({ messages: [new HumanMessage(question)] }, config(thread));
  return rowOf(graph, thread, performance.now() - started);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  await investigation(-1); // warm: the DuckDB workers start, the fixture is read
  await separately(-1);
  const a: Row[] = [];
  const b: Row[] = [];
  for (let i = 0; i < RUNS; i++) {
    a.push(await investigation(i));
    b.push(await separately(i));
  }
  const col = (rows: Row[]) => ({
    "model calls": rows[0].modelCalls,
    "input tokens (est.)": rows[0].inputTokens,
    "output tokens (est.)": rows[0].outputTokens,
    queries: rows[0].queries,
    "bytes billed": 0,
    "wall ms (median)": Math.round(median(rows.map((r) => r.ms))),
  });
  console.log(`investigation bench: ${PLANTED_PLAN.steps.length} steps, ${RUNS} runs each, same process`);
  console.table({ "one investigation": col(a), "the 4 questions one by one": col(b) });
  await closeWarehouses();
}

void main();

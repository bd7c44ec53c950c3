/**
 * `npm run eval -- --questions eval/questions/shop.jsonl [--out report.json] [--limit N] [--only id,id]`
 *
 * Runs each question through Quarry's graph with the configured model and warehouse (the same
 * settings as the function: GEMINI_API_KEY / QUARRY_OPENAI_BASE_URL / Vertex AI, QUARRY_WAREHOUSE,
 * QUARRY_DUCKDB_PATH, the context files), executes the gold and the generated SQL on the same
 * warehouse, prints a table and writes a JSON report.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { MemorySaver } from "@langchain/langgraph";
import { createAgentGraph, describeModel, resolveModel } from "../functions/src/agent";
import { readConfig } from "../functions/src/config";
import { closeWarehouses, getWarehouse } from "../functions/src/tools";
import { runCommand } from "../scripts/cli";
import { parseQuestions, runEval } from "./harness";

function args(argv: string[]): { questions?: string; out?: string; limit?: number; only?: string[] } {
  const out: ReturnType<typeof args> = {};
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split("=", 2);
    const value = inline ?? argv[++i];
    if (flag === "--questions") out.questions = value;
    else if (flag === "--out") out.out = value;
    else if (flag === "--limit") out.limit = Number(value);
    else if (flag === "--only") out.only = value.split(",");
    else
      throw new Error(
        `Unknown argument ${argv[i]}. Use --questions FILE [--out FILE] [--limit N] [--only id,id].`,
      );
  }
  return out;
}

async function main(): Promise<number> {
  const opts = args(process.argv.slice(2));
  if (!opts.questions) {
    console.error(
      "Usage: npm run eval -- --questions eval/questions/shop.jsonl [--out report.json] [--limit N]",
    );
    return 2;
  }
  let questions = parseQuestions(readFileSync(opts.questions, "utf8"), opts.questions);
  if (opts.only) questions = questions.filter((q) => opts.only!.includes(q.id));
  if (opts.limit) questions = questions.slice(0, opts.limit);
  const cfg = readConfig({ GOOGLE_CLOUD_PROJECT: "demo-quarry", ...process.env });
  const status = resolveModel(cfg.model);
  if (!status.ready) {
    console.error(`[eval] ${describeModel(status)}`);
    return 2;
  }
  console.log(`[eval] Model: ${describeModel(status)}`);
  console.log(
    `[eval] ${questions.length} questions from ${opts.questions}, warehouse ${cfg.warehouse.engine}`,
  );
  const warehouse = await getWarehouse(cfg.warehouse);
  const graph = await createAgentGraph({ checkpointer: new MemorySaver(), config: cfg });
  const report = await runEval(graph, warehouse, questions, (r) =>
    console.log(`[eval] ${r.correct ? "✓" : "✗"} ${r.id} (${r.ms} ms)${r.error ? ` — ${r.error}` : ""}`),
  );
  console.table(
    report.questions.map((r) => ({
      id: r.id,
      correct: r.correct ? "✓" : "✗",
      modelCalls: r.modelCalls,
      tokens: r.tokens,
      bytes: r.bytesBilled,
      ms: r.ms,
      asked: r.asked ? "yes" : "",
      error: r.error?.slice(0, 60) ?? "",
    })),
  );
  const pct = (100 * report.executionAccuracy).toFixed(1);
  console.log(`[eval] Execution accuracy: ${report.correct}/${report.total} = ${pct}%`);
  console.log(`[eval] Clarifying questions asked: ${report.asked} of ${report.total}`);
  const out =
    opts.out ?? path.join("eval", "reports", `report-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify(report, null, 2));
  console.log(`[eval] Report: ${out}`);
  await closeWarehouses();
  return 0;
}

runCommand("eval", main);

/**
 * Schema linking at warehouse scale. Two real DuckDB warehouses: the 5-table sample, and the same
 * 5 tables among 1,000+ look-alike distractors in other schemas (archive, staging, regional
 * copies, backups — same table and column names, some with the same rows and values). For the 62
 * eval questions (needed tables = the tables the gold SQL reads) it prints:
 * - recall of the needed tables in what the planner gets, with the authored context's hints and
 *   without them (baseline: plain BM25 top-6 over names);
 * - the planner's prompt tokens (estimated, from the real graph's prompt) at 5 and at 1,000+
 *   tables, against today's baseline that lists every table;
 * - model calls for a first question about a table the conversation has not seen: with its schema
 *   linked into the prompt vs the table list alone (scripted model, real tools).
 */
import { mkdirSync, readFileSync, rmSync, existsSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { MemorySaver } from "@langchain/langgraph";
import { PromptRecorder } from "../../scripts/prompt-recorder";
import { parseQuestions } from "../../eval/harness";
import { createAgentGraph, turnInput } from "../../functions/src/agent";
import { estimateTokens } from "../../functions/src/agent/context/history";
import { readConfig } from "../../functions/src/config";
import {
  CatalogCache,
  buildCatalog,
  linkSchema,
  loadKnowledge,
  type Catalog,
} from "../../functions/src/context";
import { closeWarehouses, getWarehouse, type Warehouse } from "../../functions/src/tools";
import { ensureSampleDb } from "../../functions/src/tools/duckdb/sample-db";
import { ScriptedChatModel } from "../support/scripted-model";
import { currentTurnOf } from "../support/scripted-model-script";

const ROOT = path.resolve(__dirname, "../..");
const SCHEMAS = [
  "archive",
  "staging",
  "sales_eu",
  "sales_us",
  "marketing",
  "finance",
  "legacy",
  "tmp",
  "backup",
  "analytics",
  "ops",
  "crm",
];
const SHOP = ["orders", "order_items", "customers", "products", "web_events"];
const OTHER = [
  "invoices",
  "payments",
  "refunds",
  "shipments",
  "suppliers",
  "warehouses",
  "employees",
  "tickets",
  "campaigns",
  "ad_spend",
  "budgets",
  "forecasts",
  "leads",
  "contracts",
  "subscriptions",
  "coupons",
  "reviews",
  "carts",
  "sessions",
  "pageviews",
  "returns",
  "stock_levels",
  "price_history",
  "vendors",
  "accounts",
  "ledger",
  "payroll",
  "regions",
  "stores",
  "categories",
  "brands",
  "promotions",
  "loyalty_points",
  "emails",
  "clicks",
  "impressions",
  "experiments",
  "surveys",
  "nps_scores",
  "tasks",
  "deliveries",
  "couriers",
  "taxes",
  "currencies",
  "fx_rates",
  "audit_log",
  "users",
  "roles",
  "permissions",
  "devices",
  "app_installs",
  "push_notifications",
  "partners",
  "affiliates",
  "commissions",
  "chargebacks",
  "disputes",
  "quotes",
  "opportunities",
  "territories",
  "targets",
  "kpis",
  "snapshots",
  "events_raw",
  "events_clean",
  "dim_date",
  "dim_customer",
  "dim_product",
  "fact_sales",
  "fact_orders",
  "fact_inventory",
  "etl_runs",
  "jobs",
  "alerts",
  "incidents",
];

/** Builds (once) a DuckDB file with the sample's 5 tables in `main` and 1,000+ distractors. */
async function buildBigWarehouse(): Promise<string> {
  const dir = path.join(os.tmpdir(), "quarry-bench-linking-v1");
  const file = path.join(dir, "shop.duckdb");
  if (existsSync(file)) return file;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const sample = await ensureSampleDb();
  const db = await DuckDBInstance.create(file);
  const conn = await db.connect();
  await conn.run(`ATTACH '${sample}' AS s (READ_ONLY)`);
  for (const t of SHOP) {
    await conn.run(`CREATE TABLE main.${t} AS SELECT * FROM s.main.${t}`);
    const c = await conn.runAndReadAll(
      `SELECT comment FROM duckdb_tables() WHERE database_name = 's' AND table_name = '${t}'`,
    );
    const comment = (c.getRows()[0]?.[0] as string | null) ?? "";
    await conn.run(`COMMENT ON TABLE main.${t} IS '${comment.replaceAll("'", "''")}'`);
    const cols = await conn.runAndReadAll(
      `SELECT column_name, comment FROM duckdb_columns() WHERE database_name = 's' AND table_name = '${t}'`,
    );
    for (const [name, note] of cols.getRows() as [string, string | null][]) {
      if (note) await conn.run(`COMMENT ON COLUMN main.${t}."${name}" IS '${note.replaceAll("'", "''")}'`);
    }
  }
  let n = 0;
  for (const schema of SCHEMAS) {
    await conn.run(`CREATE SCHEMA ${schema}`);
    // Look-alikes of the shop's tables: same names and columns, some with the same rows.
    for (const t of SHOP) {
      for (const suffix of ["", "_2019", "_raw", "_backup", "_v2"]) {
        const rows = (n++ % 3) * 50;
        await conn.run(`CREATE TABLE ${schema}.${t}${suffix} AS SELECT * FROM s.main.${t} LIMIT ${rows}`);
      }
    }
    for (const t of OTHER) {
      await conn.run(
        `CREATE TABLE ${schema}.${t} AS SELECT range AS ${t.replace(/s$/, "")}_id, range % 97 AS customer_id, ` +
          `'status_' || (range % 4) AS status, range * 1.5 AS amount, DATE '2024-01-01' + CAST(range AS INTEGER) AS created_on ` +
          `FROM range(${n++ % 4 === 0 ? 0 : 20})`,
      );
    }
  }
  await conn.run("DETACH s");
  await conn.run("CHECKPOINT");
  conn.closeSync();
  db.closeSync();
  return file;
}

const ids = (sql: string) => [...new Set([...sql.matchAll(/\bshop\.(\w+)/g)].map((m) => `shop.${m[1]}`))];

function recallOf(
  catalog: Catalog,
  questions: ReturnType<typeof parseQuestions>,
  hints: (q: string) => string[],
  maxTables?: number,
) {
  let needed = 0;
  let found = 0;
  const misses: string[] = [];
  for (const q of questions) {
    const linked = new Set(
      linkSchema(catalog, q.question, { hints: hints(q.question), maxTables }).tables.map((t) => t.id),
    );
    for (const id of ids(q.sql)) {
      needed++;
      if (linked.has(id)) found++;
      else misses.push(`${q.id}:${id}`);
    }
  }
  return { recall: found / needed, misses };
}

/** The planner's prompt tokens; with `tools` given the graph lists every table (the old way, no catalog). */
async function plannerTokens(
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
      configurable: { thread_id: "t" },
    })
    .catch(() => undefined);
  return estimateTokens(recorder.prompt ?? []);
}

/** Planner that queries at once when the prompt shows the column it needs, else describes the table first. */
async function callsForUnseenTable(
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
      configurable: { thread_id: "t" },
    },
  );
  return model.calls.length;
}

async function toolsFor(cfg: ReturnType<typeof readConfig>) {
  const { createWarehouseTools } = await import("../../functions/src/tools");
  return createWarehouseTools(await getWarehouse(cfg.warehouse));
}

async function main() {
  const questions = parseQuestions(
    readFileSync(path.join(ROOT, "eval/questions/shop.jsonl"), "utf8"),
    "shop.jsonl",
  );
  const small = readConfig({ GOOGLE_CLOUD_PROJECT: "demo-quarry" });
  const bigFile = await buildBigWarehouse();
  const big = readConfig({ GOOGLE_CLOUD_PROJECT: "demo-quarry", QUARRY_DUCKDB_PATH: bigFile });
  const rows: Record<string, unknown>[] = [];
  for (const [label, cfg] of [
    ["sample (5 tables)", small],
    ["sample + distractors", big],
  ] as const) {
    const warehouse: Warehouse = await getWarehouse(cfg.warehouse);
    const { knowledge } = await loadKnowledge(cfg.contextDir, warehouse);
    const t0 = Date.now();
    const catalog = await buildCatalog(warehouse, knowledge.allNotes());
    const buildMs = Date.now() - t0;
    const hints = (q: string) => {
      const k = knowledge.forQuestion(q);
      return [...k.glossary.map((g) => g.sql ?? ""), ...k.examples.map((e) => e.sql)];
    };
    const withContext = recallOf(catalog, questions, hints);
    const noContext = recallOf(catalog, questions, () => []);
    const tokens = await plannerTokens(cfg, "What was revenue by month in 2025?", { catalog });
    rows.push({
      warehouse: label,
      tables: catalog.tables.length,
      "catalog build ms": buildMs,
      "recall (linking + context)": withContext.recall.toFixed(3),
      "recall (linking alone)": noContext.recall.toFixed(3),
      "planner prompt tokens": tokens,
      "baseline tokens: every table listed (no schemas, no context)": await plannerTokens(
        cfg,
        "What was revenue by month in 2025?",
        { tools: await toolsFor(cfg) },
      ),
    });
    if (withContext.misses.length) console.log(`${label}: missed ${withContext.misses.join(", ")}`);
  }
  console.log("Schema linking: recall of the tables the gold SQL reads (62 questions), prompt size");
  console.table(rows);
  const ratio = (rows[1]["planner prompt tokens"] as number) / (rows[0]["planner prompt tokens"] as number);
  const recall = Number(rows[1]["recall (linking + context)"]);
  console.log(
    `goal: recall ≥ 0.95 at 1,000+ tables: ${recall >= 0.95 ? "met" : "NOT met"} (${recall.toFixed(3)})`,
  );
  console.log(
    `goal: prompt tokens at 1,000+ tables ≤ 1.5× those at 5: ${ratio <= 1.5 ? "met" : "NOT met"} (${ratio.toFixed(2)}×)`,
  );

  const linked = await callsForUnseenTable(small);
  const listOnly = await callsForUnseenTable(small, await toolsFor(small));
  console.log("Model calls for a first question about a table not yet described");
  console.table([
    { prompt: "linked schemas (now)", "model calls": linked },
    { prompt: "table list only (baseline)", "model calls": listOnly },
  ]);
  await closeWarehouses();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

/**
 * Schema linking at warehouse scale. Three real DuckDB warehouses: the 5-table sample; the same 5
 * tables among 1,200 look-alike copies (archive, staging, regional copies, backups — the same
 * table and column names, some with the same rows and values); and the same 5 tables among 1,045
 * tables of other businesses (fixtures/other-domains.ts: CRM, billing, bank, hotel, wholesale… in
 * regional variants, sharing column names such as customer_id, country, segment, signup_date,
 * line_total). Two question sets, needed tables = the tables the gold SQL reads:
 * - development: the 62 eval questions (eval/questions/shop.jsonl), which the heuristics were
 *   developed with;
 * - held-out: 55 questions written apart from them (fixtures/linking-heldout.jsonl), as a person
 *   asks — column concepts (where customers live, when they signed up, which segment), filters by
 *   value, measures without a table's name; their gold SQL is checked on the sample first (it runs,
 *   and the engine reads exactly the gold tables). The heuristics are not tuned on them.
 * For each it prints:
 * - recall of the needed tables in what the planner gets, with the authored context (its notes in
 *   the catalog, its glossary SQL and examples as hints, its dataset as home) and by linking alone
 *   (none of it: the warehouse's own names, comments and values), for the linking now and before
 *   issue #20 (fixtures/linking-before.ts, same run);
 * - the planner's prompt tokens (estimated, from the real graph's prompt) per question, with and
 *   without authored context, against the same question at 5 tables, and against the old way that
 *   lists every table;
 * - model calls for a first question about a table the conversation has not seen: with its schema
 *   linked into the prompt vs the table list alone (scripted model, real tools).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, existsSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { DuckDBInstance, type DuckDBConnection } from "@duckdb/node-api";
import { MemorySaver } from "@langchain/langgraph";
import { PromptRecorder } from "../../scripts/prompt-recorder";
import { parseQuestions } from "../../eval/harness";
import { createAgentGraph, turnInput } from "../../functions/src/agent";
import { estimateTokens } from "../../functions/src/agent/prompt-inputs/history";
import { readConfig } from "../../functions/src/config";
import {
  CatalogCache,
  buildCatalog,
  linkHints,
  linkSchema,
  loadKnowledge,
  type Catalog,
} from "../../functions/src/context";
import { closeWarehouses, getWarehouse, type Warehouse } from "../../functions/src/tools";
import { ensureSampleDb } from "../../functions/src/tools/duckdb/sample-db";
import { ScriptedChatModel } from "../support/scripted-model";
import { linkSchemaBefore } from "./fixtures/linking-before";
import { createOtherDomains } from "./fixtures/other-domains";
import { currentTurnOf } from "../support/scripted-model-script";
import { FULL_SCOPE } from "../../functions/src/tools/scope";
import { personConfig } from "../support/person";

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

/** Copies the sample's 5 tables (with their comments) into `main` of the open database. */
async function copyShop(conn: DuckDBConnection): Promise<void> {
  const sample = await ensureSampleDb();
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
}

/** The first distractors: copies of the shop's tables in 12 schemas, and 75 generic tables in each. */
async function createCopies(conn: DuckDBConnection): Promise<void> {
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
}

/**
 * Builds (once) a DuckDB file with the sample's 5 tables in `main` and 1,000+ distractors around
 * them: `copies` (the first warehouse) or `domains` (other businesses' schemas, fixtures/other-domains.ts).
 */
async function buildBigWarehouse(kind: "copies" | "domains"): Promise<string> {
  const dir = path.join(
    os.tmpdir(),
    kind === "copies" ? "quarry-bench-linking-v1" : "quarry-bench-linking-domains-v1",
  );
  const file = path.join(dir, "shop.duckdb");
  if (existsSync(file)) return file;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const db = await DuckDBInstance.create(file);
  const conn = await db.connect();
  await copyShop(conn);
  if (kind === "copies") await createCopies(conn);
  else await createOtherDomains(conn);
  await conn.run("DETACH s");
  await conn.run("CHECKPOINT");
  conn.closeSync();
  db.closeSync();
  return file;
}

const ids = (sql: string) => [...new Set([...sql.matchAll(/\bshop\.(\w+)/g)].map((m) => `shop.${m[1]}`))];

type Questions = ReturnType<typeof parseQuestions>;
type Hints = { hints: string[]; home?: string[] };
type Link = (catalog: Catalog, question: string, opts: Hints) => { tables: { id: string }[] };

function recallOf(catalog: Catalog, questions: Questions, hints: (q: string) => Hints, link: Link) {
  let needed = 0;
  let found = 0;
  const misses: string[] = [];
  let ms = 0;
  for (const q of questions) {
    const start = performance.now();
    const tables = link(catalog, q.question, hints(q.question)).tables;
    ms += performance.now() - start;
    const linked = new Set(tables.map((t) => t.id));
    for (const id of ids(q.sql)) {
      needed++;
      if (linked.has(id)) found++;
      else misses.push(`${q.id}:${id}`);
    }
  }
  // Time per question includes the first question's index build on this catalog (once per instance).
  return { recall: found / needed, misses, msPerQuestion: ms / questions.length };
}

/**
 * Checks the held-out questions' gold SQL on the sample: each runs, and the tables the engine says
 * it reads are the gold tables the bench counts.
 */
async function checkGold(warehouse: Warehouse, questions: Questions): Promise<void> {
  const ctx = { userId: "bench", threadId: "bench", runId: "bench", bytesBilledSoFar: 0, scope: FULL_SCOPE };
  for (const q of questions) {
    const dry = await warehouse.dryRun(q.sql, ctx);
    const read = dry.referencedTables.map((t) => t.replace(/^shop\.main\./, "shop.")).sort();
    const gold = ids(q.sql).sort();
    if (read.join() !== gold.join()) throw new Error(`${q.id}: reads ${read.join()}, gold ${gold.join()}`);
    const res = await warehouse.query(q.sql, ctx);
    if (!res.rows.length) throw new Error(`${q.id}: the gold SQL returns no rows`);
  }
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
      configurable: { thread_id: "t", ...personConfig() },
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
      configurable: { thread_id: "t", ...personConfig() },
    },
  );
  return model.calls.length;
}

async function toolsFor(cfg: ReturnType<typeof readConfig>) {
  const { createWarehouseTools } = await import("../../functions/src/tools");
  return createWarehouseTools(await getWarehouse(cfg.warehouse));
}

async function main() {
  const read = (file: string) => parseQuestions(readFileSync(path.join(ROOT, file), "utf8"), file);
  const sets: [string, Questions][] = [
    ["development", read("eval/questions/shop.jsonl")],
    ["held-out", read("test/bench/fixtures/linking-heldout.jsonl")],
  ];
  const noContext = mkdtempSync(path.join(os.tmpdir(), "quarry-no-context-"));
  const small = readConfig({ GOOGLE_CLOUD_PROJECT: "demo-quarry" });
  await checkGold(await getWarehouse(small.warehouse), sets[1][1]);
  const warehouses = [
    ["sample", small],
    ["sample + copies", await bigConfig("copies")],
    ["sample + other domains", await bigConfig("domains")],
  ] as const;
  const rows: Record<string, unknown>[] = [];
  const goals: string[] = [];
  const smallTokens = new Map<string, { context: number[]; alone: number[] }>();
  for (const [label, cfg] of warehouses) {
    const warehouse: Warehouse = await getWarehouse(cfg.warehouse);
    const { knowledge } = await loadKnowledge(cfg.contextDir, warehouse);
    // With authored context: its notes in the catalog, its glossary SQL and examples as hints, its
    // dataset as home. Linking alone: none of it — the warehouse's own names, comments and values.
    const catalog = await buildCatalog(warehouse, knowledge.allNotes());
    const bare = await buildCatalog(warehouse);
    const aloneCfg = { ...cfg, contextDir: noContext };
    const hints = (q: string) => linkHints(knowledge.forQuestion(q));
    for (const [set, questions] of sets) {
      const now = recallOf(catalog, questions, hints, linkSchema);
      const alone = recallOf(bare, questions, () => ({ hints: [] }), linkSchema);
      const before = recallOf(catalog, questions, hints, linkSchemaBefore);
      const beforeAlone = recallOf(bare, questions, () => ({ hints: [] }), linkSchemaBefore);
      const tokens = { context: [] as number[], alone: [] as number[] };
      for (const q of questions) {
        tokens.context.push(await plannerTokens(cfg, q.question, { catalog }));
        tokens.alone.push(await plannerTokens(aloneCfg, q.question, { catalog: bare }));
      }
      if (cfg === small) smallTokens.set(set, tokens);
      const ratio = (k: "context" | "alone") => {
        const base = smallTokens.get(set)![k];
        const each = tokens[k].map((t, i) => t / base[i]);
        return { mean: mean(tokens[k]) / mean(base), max: Math.max(...each) };
      };
      const [rc, ra] = [ratio("context"), ratio("alone")];
      rows.push({
        warehouse: label,
        tables: catalog.tables.length,
        questions: `${set} (${questions.length})`,
        "recall, authored context: now (before)": `${now.recall.toFixed(3)} (${before.recall.toFixed(3)})`,
        "recall, linking alone: now (before)": `${alone.recall.toFixed(3)} (${beforeAlone.recall.toFixed(3)})`,
        "linking ms per question: context; alone": `${now.msPerQuestion.toFixed(1)}; ${alone.msPerQuestion.toFixed(1)}`,
        "planner prompt tokens, mean: context; alone": `${Math.round(mean(tokens.context))}; ${Math.round(mean(tokens.alone))}`,
        "× the 5-table prompt, context (mean; max)": `${rc.mean.toFixed(2)}×; ${rc.max.toFixed(2)}×`,
        "× the 5-table prompt, alone (mean; max)": `${ra.mean.toFixed(2)}×; ${ra.max.toFixed(2)}×`,
      });
      if (now.misses.length) console.log(`${label}, ${set}, with context: missed ${now.misses.join(", ")}`);
      if (alone.misses.length) console.log(`${label}, ${set}, alone: missed ${alone.misses.join(", ")}`);
      if (set === "held-out" && cfg !== small) {
        const met = (ok: boolean) => (ok ? "met" : "NOT met");
        goals.push(
          `${label}: recall with authored context ≥ 0.95: ${met(now.recall >= 0.95)} (${now.recall.toFixed(3)}); ` +
            `linking alone ≥ 0.85: ${met(alone.recall >= 0.85)} (${alone.recall.toFixed(3)}); ` +
            `prompt tokens ≤ 1.5× of 5 tables: with context ${met(rc.mean <= 1.5)} (${rc.mean.toFixed(2)}×), ` +
            `alone ${met(ra.mean <= 1.5)} (${ra.mean.toFixed(2)}×)`,
        );
      }
    }
    rows.push({
      warehouse: label,
      tables: catalog.tables.length,
      questions: "baseline: every table listed, no schemas (tokens, one question)",
      "planner prompt tokens, mean: context; alone": await plannerTokens(
        cfg,
        "What was revenue by month in 2025?",
        {
          tools: await toolsFor(cfg),
        },
      ),
    });
  }
  console.log(
    "Schema linking: recall of the tables the gold SQL reads, now and (before) issue #20's changes; planner prompt size",
  );
  console.table(rows);
  console.log("Goals on the held-out questions at 1,000+ tables:");
  for (const g of goals) console.log(`  ${g}`);

  const linked = await callsForUnseenTable(small);
  const listOnly = await callsForUnseenTable(small, await toolsFor(small));
  console.log("Model calls for a first question about a table not yet described");
  console.table([
    { prompt: "linked schemas (now)", "model calls": linked },
    { prompt: "table list only (baseline)", "model calls": listOnly },
  ]);
  await closeWarehouses();
  rmSync(noContext, { recursive: true, force: true });
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

async function bigConfig(kind: "copies" | "domains") {
  return readConfig({
    GOOGLE_CLOUD_PROJECT: "demo-quarry",
    QUARRY_DUCKDB_PATH: await buildBigWarehouse(kind),
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

/**
 * Schema linking at warehouse scale. Three real DuckDB warehouses: the 5-table sample; the same 5
 * tables among 1,200 look-alike copies (archive, staging, regional copies, backups — the same
 * table and column names, some with the same rows and values); and the same 5 tables among 1,045
 * tables of other businesses (fixtures/other-domains.ts: CRM, billing, bank, hotel, wholesale… in
 * regional variants, sharing column names such as customer_id, country, segment, signup_date,
 * line_total); built by fixtures/linking-warehouses.ts. Two question sets, needed tables = the
 * tables the gold SQL reads:
 * - development: the 62 eval questions (eval/questions/shop.jsonl), which the heuristics were
 *   developed with;
 * - held-out: 55 questions written apart from them (fixtures/linking-heldout.jsonl), as a person
 *   asks — column concepts (where customers live, when they signed up, which segment), filters by
 *   value, measures without a table's name; their gold SQL is checked on the sample first (it runs,
 *   and the engine reads exactly the gold tables). The heuristics are not tuned on them.
 * Each warehouse is linked twice in the same run: unscoped (every table) and for a member scoped
 * to one dataset (`shop`: `linkSchema(scopedCatalog(catalog, scope), …)`, as the ingress node
 * does); a scoped recall counts the questions whose gold tables are inside the scope. For each it
 * prints:
 * - recall of the needed tables in what the planner gets, with the authored context (its notes in
 *   the catalog, its glossary SQL and examples as hints, its dataset as home) and by linking alone
 *   (none of it: the warehouse's own names, comments and values), for the linking now and before
 *   issue #20 (fixtures/linking-before.ts, same run);
 * - the planner's prompt tokens (estimated, from the real graph's prompt) per question, with and
 *   without authored context, against the same question at 5 tables, and against the old way that
 *   lists every table;
 * - time per question (`linkSchema` in-process, warm: one pass over every question builds the
 *   catalog's indexes and is not counted, then `BENCH_LINK_PASSES` passes, default 3): p50 and
 *   p95, and the first question on a new catalog object (its indexes built);
 * - model calls for a first question about a table the conversation has not seen: with its schema
 *   linked into the prompt vs the table list alone (scripted model, real tools).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseQuestions } from "../../eval/harness";
import { readConfig } from "../../functions/src/config";
import {
  buildCatalog,
  linkHints,
  linkSchema,
  loadKnowledge,
  type Catalog,
} from "../../functions/src/context";
import { scopedCatalog } from "../../functions/src/context/scoped";
import { closeWarehouses, getWarehouse, type Warehouse } from "../../functions/src/tools";
import { FULL_SCOPE, inScope, limitedScope, type Scope } from "../../functions/src/tools/scope";
import { linkSchemaBefore } from "./fixtures/linking-before";
import { callsForUnseenTable, plannerTokens, toolsFor } from "./linking-agent";
import { bigConfig } from "./fixtures/linking-warehouses";

const ROOT = path.resolve(__dirname, "../..");
const ids = (sql: string) => [...new Set([...sql.matchAll(/\bshop\.(\w+)/g)].map((m) => `shop.${m[1]}`))];

type Questions = ReturnType<typeof parseQuestions>;
type Hints = { hints: string[]; home?: string[] };
type Link = (catalog: Catalog, question: string, opts: Hints) => { tables: { id: string }[] };

function recallOf(catalog: Catalog, questions: Questions, hints: (q: string) => Hints, link: Link) {
  let needed = 0;
  let found = 0;
  const misses: string[] = [];
  for (const q of questions) {
    const linked = new Set(link(catalog, q.question, hints(q.question)).tables.map((t) => t.id));
    for (const id of ids(q.sql)) {
      needed++;
      if (linked.has(id)) found++;
      else misses.push(`${q.id}:${id}`);
    }
  }
  return { recall: found / needed, misses };
}

const PASSES = Number(process.env.BENCH_LINK_PASSES ?? 3);

/**
 * Time per question on a warm catalog: the first question (on a catalog object not linked before:
 * its indexes are built), then one pass over the rest that is not counted, then `PASSES` passes.
 */
function timeOf(catalog: Catalog, questions: Questions, hints: (q: string) => Hints, link: Link) {
  const timed = (q: Questions[number]) => {
    const start = performance.now();
    link(catalog, q.question, hints(q.question));
    return performance.now() - start;
  };
  const first = timed(questions[0]);
  for (const q of questions.slice(1)) timed(q);
  const ms: number[] = [];
  for (let pass = 0; pass < PASSES; pass++) for (const q of questions) ms.push(timed(q));
  ms.sort((a, b) => a - b);
  const at = (p: number) => ms[Math.min(ms.length - 1, Math.ceil(p * ms.length) - 1)];
  return { first, p50: at(0.5), p95: at(0.95) };
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

/** A member scoped to one dataset (the shop's), against every table, in the same run. */
const SCOPES: [string, Scope][] = [
  ["unscoped", FULL_SCOPE],
  ["member: shop", limitedScope(["shop"])],
];

/** One warehouse as the bench links it: with the authored context, and alone (none of it). */
interface Bench {
  label: string;
  cfg: ReturnType<typeof readConfig>;
  aloneCfg: ReturnType<typeof readConfig>;
  catalog: Catalog;
  bare: Catalog;
  hints: (q: string) => Hints;
  small: boolean;
}
type Row = Record<string, unknown>;
type Tokens = { context: number[]; alone: number[] };

const noHints = () => ({ hints: [] });
const met = (ok: boolean) => (ok ? "met" : "NOT met");
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
/** Linking as a person of `scope` gets it: over the catalog they may see. */
const scoped =
  (scope: Scope, link: Link): Link =>
  (catalog, question, opts) =>
    link(scopedCatalog(catalog, scope), question, opts);

/** Time per question, unscoped and scoped, on all questions; goals on time at 1,000+ tables. */
function timeRows(b: Bench, questions: Questions, goals: string[]): Row[] {
  const rows: Row[] = [];
  const p95 = new Map<string, number>();
  for (const [scopeLabel, scope] of SCOPES) {
    const context = timeOf(b.catalog, questions, b.hints, scoped(scope, linkSchema));
    const alone = timeOf(b.bare, questions, noHints, scoped(scope, linkSchema));
    p95.set(scopeLabel, Math.max(context.p95, alone.p95));
    const ms = (x: number) => x.toFixed(1);
    rows.push({
      warehouse: b.label,
      scope: scopeLabel,
      tables: scopedCatalog(b.catalog, scope).tables.length,
      "ms per question, warm, p50: context; alone": `${ms(context.p50)}; ${ms(alone.p50)}`,
      "p95: context; alone": `${ms(context.p95)}; ${ms(alone.p95)}`,
      "first question on a new catalog (indexes built): context; alone": `${ms(context.first)}; ${ms(alone.first)}`,
    });
  }
  if (!b.small) {
    const [all, member] = [p95.get(SCOPES[0][0])!, p95.get(SCOPES[1][0])!];
    goals.push(
      `${b.label}: time per question p95 ≤ 100 ms (unscoped): ${met(all <= 100)} (${all.toFixed(1)} ms); ` +
        `scoped no slower than unscoped: ${met(member <= all)} (p95 ${member.toFixed(1)} vs ${all.toFixed(1)} ms)`,
    );
  }
  return rows;
}

/** Recall and prompt tokens for one scope and question set; recall goals on the held-out set. */
async function recallRow(
  b: Bench,
  [scopeLabel, scope]: [string, Scope],
  [set, all]: [string, Questions],
  smallTokens: Map<string, { context: number; alone: number }>,
  goals: string[],
): Promise<Row> {
  // A scoped recall counts the questions whose gold tables the person may see.
  const questions = all.filter((q) => ids(q.sql).every((id) => inScope(scope, id)));
  const [link, before] = [scoped(scope, linkSchema), scoped(scope, linkSchemaBefore)];
  const now = recallOf(b.catalog, questions, b.hints, link);
  const alone = recallOf(b.bare, questions, noHints, link);
  const was = recallOf(b.catalog, questions, b.hints, before);
  const wasAlone = recallOf(b.bare, questions, noHints, before);
  const tokens: Tokens = { context: [], alone: [] };
  for (const q of questions) {
    tokens.context.push(await plannerTokens(b.cfg, q.question, { catalog: scopedCatalog(b.catalog, scope) }));
    tokens.alone.push(await plannerTokens(b.aloneCfg, q.question, { catalog: scopedCatalog(b.bare, scope) }));
  }
  if (b.small && scope.all) {
    questions.forEach((q, i) =>
      smallTokens.set(q.id, { context: tokens.context[i], alone: tokens.alone[i] }),
    );
  }
  const ratio = (k: "context" | "alone") => {
    const base = questions.map((q) => smallTokens.get(q.id)![k]);
    return { mean: mean(tokens[k]) / mean(base), max: Math.max(...tokens[k].map((t, i) => t / base[i])) };
  };
  const [rc, ra] = [ratio("context"), ratio("alone")];
  const where = `${b.label}, ${scopeLabel}, ${set}`;
  if (now.misses.length) console.log(`${where}, with context: missed ${now.misses.join(", ")}`);
  if (alone.misses.length) console.log(`${where}, alone: missed ${alone.misses.join(", ")}`);
  if (set === "held-out" && !b.small) {
    goals.push(
      `${b.label}, ${scopeLabel}: recall with authored context ≥ 0.95: ${met(now.recall >= 0.95)} (${now.recall.toFixed(3)}); ` +
        `linking alone ≥ 0.85: ${met(alone.recall >= 0.85)} (${alone.recall.toFixed(3)}); ` +
        `prompt tokens ≤ 1.5× of 5 tables: with context ${met(rc.mean <= 1.5)} (${rc.mean.toFixed(2)}×), ` +
        `alone ${met(ra.mean <= 1.5)} (${ra.mean.toFixed(2)}×)`,
    );
  }
  return {
    warehouse: b.label,
    scope: scopeLabel,
    tables: scopedCatalog(b.catalog, scope).tables.length,
    questions: `${set} (${questions.length})`,
    "recall, authored context: now (before)": `${now.recall.toFixed(3)} (${was.recall.toFixed(3)})`,
    "recall, linking alone: now (before)": `${alone.recall.toFixed(3)} (${wasAlone.recall.toFixed(3)})`,
    "planner prompt tokens, mean: context; alone": `${Math.round(mean(tokens.context))}; ${Math.round(mean(tokens.alone))}`,
    "× the 5-table prompt, context (mean; max)": `${rc.mean.toFixed(2)}×; ${rc.max.toFixed(2)}×`,
    "× the 5-table prompt, alone (mean; max)": `${ra.mean.toFixed(2)}×; ${ra.max.toFixed(2)}×`,
  };
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
  const [rows, times, goals, timeGoals]: [Row[], Row[], string[], string[]] = [[], [], [], []];
  const smallTokens = new Map<string, { context: number; alone: number }>();
  for (const [label, cfg] of warehouses) {
    const warehouse: Warehouse = await getWarehouse(cfg.warehouse);
    const { knowledge } = await loadKnowledge(cfg.contextDir, warehouse);
    // With authored context: its notes in the catalog, its glossary SQL and examples as hints, its
    // dataset as home. Linking alone: none of it — the warehouse's own names, comments and values.
    const b: Bench = {
      label,
      cfg,
      aloneCfg: { ...cfg, contextDir: noContext },
      catalog: await buildCatalog(warehouse, knowledge.allNotes()),
      bare: await buildCatalog(warehouse),
      hints: (q: string) => linkHints(knowledge.forQuestion(q)),
      small: cfg === small,
    };
    // Timed first, so that the first question meets catalogs not linked before.
    times.push(
      ...timeRows(
        b,
        sets.flatMap(([, qs]) => qs),
        timeGoals,
      ),
    );
    for (const scope of SCOPES)
      for (const set of sets) rows.push(await recallRow(b, scope, set, smallTokens, goals));
    rows.push({
      warehouse: label,
      tables: b.catalog.tables.length,
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
  console.log(`Time per question (linkSchema in-process, warm, ${PASSES} passes over all questions)`);
  console.table(times);
  console.log("Goals on time at 1,000+ tables (p95, the slower of context and alone):");
  for (const g of timeGoals) console.log(`  ${g}`);

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

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

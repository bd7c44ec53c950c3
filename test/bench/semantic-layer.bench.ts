/**
 * What importing a team's semantic layer buys schema linking and the planner, in the same run:
 * two public projects (Looker's thelook in LookML, dbt Labs' jaffle-shop as dbt artifacts, the
 * test fixtures) on real DuckDB beside the 5-table sample, and 14 questions written against their
 * definitions (fixtures/semantic-layer-questions.jsonl; kept apart from the projects' own saved
 * queries), each with the tables it needs and the team metric that answers it. For each question,
 * with no context and with both imports active, it measures:
 * - table recall: the needed tables among those the planner is given (`linkSchema`, as the ingress
 *   node runs it, on a catalog built with the imports' declared joins or without);
 * - definition hits: the question's team metric among the glossary terms the planner gets, with SQL;
 * - planner prompt tokens, from the real graph's prompt (a recorder in the model's place).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { readConfig } from "../../functions/src/config";
import { buildCatalog, linkHints, linkSchema, loadKnowledge } from "../../functions/src/context";
import { importDbtProject, importLookmlProject } from "../../functions/src/context/imports/project";
import { writeActiveImport } from "../../functions/src/context/imports/store";
import { closeWarehouses, getWarehouse } from "../../functions/src/tools";
import { plannerTokens } from "./linking-agent";

const ROOT = path.resolve(__dirname, "../..");
const FIX = path.join(ROOT, "test/fixtures");
const THELOOK = ["order_items", "users", "inventory_items", "products", "distribution_centers"];
const JAFFLE = ["orders", "order_items", "customers", "products", "locations", "supplies"];
const FILES = [
  ...THELOOK.map((t) => `thelook.${t}=${path.join(FIX, "lookml/thelook-data", `${t}.csv`)}`),
  ...JAFFLE.map((t) => `jaffle.${t}=${path.join(FIX, "dbt/jaffle-data", `${t}.csv`)}`),
].join(",");

interface Question {
  project: string;
  question: string;
  tables: string[];
  metric: string;
}

async function measure(contextDir: string, questions: Question[]) {
  const cfg = readConfig({
    GOOGLE_CLOUD_PROJECT: "demo-quarry",
    QUARRY_DUCKDB_FILES: FILES,
    QUARRY_CONTEXT_DIR: contextDir,
  });
  const warehouse = await getWarehouse(cfg.warehouse);
  const { knowledge } = await loadKnowledge(contextDir, warehouse, { strict: true });
  const catalog = await buildCatalog(warehouse, knowledge.allNotes(), { joins: knowledge.declaredJoins() });
  let needed = 0;
  let found = 0;
  let hits = 0;
  let tokens = 0;
  for (const q of questions) {
    const chosen = knowledge.forQuestion(q.question);
    const linked = new Set(linkSchema(catalog, q.question, linkHints(chosen)).tables.map((t) => t.id));
    needed += q.tables.length;
    found += q.tables.filter((t) => linked.has(t)).length;
    if (chosen.glossary.some((g) => g.term === q.metric && g.sql)) hits++;
    tokens += await plannerTokens(cfg, q.question, { catalog });
  }
  return {
    recall: `${((100 * found) / needed).toFixed(1)} % (${found}/${needed})`,
    definitions: `${hits}/${questions.length}`,
    tokens: Math.round(tokens / questions.length),
  };
}

async function main() {
  const questions = readFileSync(path.join(__dirname, "fixtures/semantic-layer-questions.jsonl"), "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Question);
  const bare = mkdtempSync(path.join(os.tmpdir(), "quarry-bench-ctx-"));
  const imported = mkdtempSync(path.join(os.tmpdir(), "quarry-bench-ctx-"));
  try {
    const cfg = readConfig({ GOOGLE_CLOUD_PROJECT: "demo-quarry", QUARRY_DUCKDB_FILES: FILES });
    const warehouse = await getWarehouse(cfg.warehouse);
    writeActiveImport(
      imported,
      await importLookmlProject(path.join(FIX, "lookml/thelook"), warehouse, {
        map: { "looker-private-demo.ecomm": "thelook" },
      }),
    );
    writeActiveImport(
      imported,
      await importDbtProject(path.join(FIX, "dbt/jaffle-shop"), warehouse, { map: { main: "jaffle" } }),
    );
    const rows = [];
    for (const [label, dir] of [
      ["no context (baseline)", bare],
      ["thelook + jaffle-shop imported", imported],
    ] as const) {
      for (const project of ["thelook", "jaffle"]) {
        const set = questions.filter((q) => q.project === project);
        rows.push({ context: label, project, questions: set.length, ...(await measure(dir, set)) });
      }
    }
    console.log(
      `Semantic layer import, ${new Date().toISOString().slice(0, 10)} (recall of needed tables; team metric among the glossary terms with SQL; mean planner prompt tokens)`,
    );
    console.table(rows);
  } finally {
    await closeWarehouses();
    rmSync(bare, { recursive: true, force: true });
    rmSync(imported, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

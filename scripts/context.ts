/**
 * `npm run context -- "<question>" [--json]`: what the planner would be given for a question — the
 * tables, the team's rules, the glossary terms, table notes and verified examples chosen from the
 * authored context, and the prompt's estimated tokens. It runs the real graph (same settings as the
 * function: QUARRY_WAREHOUSE, QUARRY_DUCKDB_PATH, QUARRY_CONTEXT_DIR) up to the planner's model
 * call and prints that call's prompt, so the command and the agent cannot disagree. No model is
 * called: a recorder takes the planner's place and stops the turn. With a Firestore to read
 * (FIRESTORE_EMULATOR_HOST, or production credentials) the verified queries approved in the admin
 * page are merged in as the agent merges them, read fresh each time: an approval shows at once.
 * `--as <email>` shows what that person's planner gets: only the data of their scope (their
 * groups, read from Firestore as the function reads them); without it, the whole allowed data.
 */
import { MemorySaver } from "@langchain/langgraph";
import { commandFirestore, runCommand } from "./cli";
import { importCommand } from "./context-import";
import { PromptCaptured, PromptRecorder } from "./prompt-recorder";
import { createAgentGraph, turnInput } from "../functions/src/agent";
import { estimateTokens } from "../functions/src/agent/prompt-inputs/history";
import { readConfig } from "../functions/src/config";
import {
  CatalogCache,
  KNOWLEDGE_HEADINGS,
  buildCatalog,
  linkHints,
  linkSchema,
  loadKnowledge,
} from "../functions/src/context";
import { ApprovedQueries } from "../functions/src/context/approved";
import type { VerifiedQueryItem } from "../functions/src/context/authored";
import type { RuntimeConfig } from "../functions/src/config";
import { closeWarehouses, getWarehouse } from "../functions/src/tools";
import { PERSON_KEY, type RunPerson } from "../functions/src/tools/person";
import { FULL_SCOPE, datasetNamesOf, type Scope } from "../functions/src/tools/scope";
import { scopedCatalog } from "../functions/src/context/scoped";
import { scopedKnowledge } from "../functions/src/context/scoped-knowledge";
import { scopeOfEmail } from "../functions/src/access/scope";
import { GroupStore } from "../functions/src/access/groups";
import { MemberStore } from "../functions/src/access/members";

/** The person's scope as the function decides it: their role and groups, read from Firestore. */
async function personScope(cfg: RuntimeConfig, email: string): Promise<Scope> {
  const db = commandFirestore(cfg);
  try {
    const { allowedDomains, admins, contact, localOpen, cacheMs } = cfg.access;
    const { scope } = await scopeOfEmail(
      email,
      { allowedDomains, admins, contact, localOpen },
      {
        members: new MemberStore(db as never, "members", cacheMs),
        groups: new GroupStore(db as never, "groups", cacheMs),
      },
    );
    return scope;
  } finally {
    await db.terminate();
  }
}

/**
 * The verified queries approved in the admin page (Firestore `approved_queries`), or none, said on
 * stderr, when there is no Firestore to read.
 */
async function approvedQueries(cfg: RuntimeConfig): Promise<readonly VerifiedQueryItem[]> {
  let db;
  try {
    db = commandFirestore(cfg);
  } catch (err) {
    console.error(`[context] approved queries not merged: ${(err as Error).message}`);
    return [];
  }
  try {
    return await new ApprovedQueries(db).current();
  } finally {
    await db.terminate();
  }
}

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  if (argv[0] === "import") return importCommand(argv.slice(1));
  const json = argv.includes("--json");
  const at = argv.indexOf("--as");
  const as = at >= 0 ? argv[at + 1] : undefined;
  const question = argv
    .filter((a, i) => a !== "--json" && (at < 0 || (i !== at && i !== at + 1)))
    .join(" ")
    .trim();
  if (!question || (at >= 0 && !as?.includes("@"))) {
    console.error('Usage: npm run context -- "<question>" [--json] [--as <email>]');
    return 2;
  }
  const cfg = readConfig({ GOOGLE_CLOUD_PROJECT: "demo-quarry", ...process.env });
  const scope = as ? await personScope(cfg, as) : FULL_SCOPE;
  const warehouse = await getWarehouse(cfg.warehouse);
  const loaded = await loadKnowledge(cfg.contextDir, warehouse);
  const { report } = loaded;
  const approved = await approvedQueries(cfg);
  // The files' knowledge with the approved queries, as the ingress node merges them (for the summary).
  const knowledge = loaded.knowledge.withExamples(approved);
  for (const err of report.failed) console.error(`[context] not used: ${err.message}`);
  // One catalog for the graph and for the summary below, so both link the same tables.
  const catalog = await buildCatalog(warehouse, knowledge.allNotes(), { joins: knowledge.declaredJoins() });
  const recorder = new PromptRecorder({});
  const graph = await createAgentGraph({
    checkpointer: new MemorySaver(),
    model: recorder,
    config: cfg,
    // The graph merges the approved queries itself (the ingress node), as in the function.
    knowledge: loaded.knowledge,
    approvedQueries: () => Promise.resolve(approved),
    catalog: new CatalogCache(async () => catalog, { maxAgeMs: Infinity }),
  });
  try {
    await graph.invoke(turnInput({ type: "human", content: question, id: "q" }) as never, {
      configurable: {
        thread_id: "context",
        user_id: "context",
        [PERSON_KEY]: { uid: as ?? "context", email: as ?? null, scope } satisfies RunPerson,
      },
    });
  } catch (err) {
    if (!(err instanceof PromptCaptured) && !String(err).includes("prompt captured")) throw err;
  }
  if (!recorder.prompt)
    throw new Error("The turn ended before the planner's model call (the question was refused?).");
  const system = String(recorder.prompt[0].content);
  // The same knowledge and linking the ingress node chose, on the same catalog, for the summary fields.
  const datasets = [...new Set(catalog.tables.flatMap((t) => datasetNamesOf(t.id)))];
  const scoped = scopedKnowledge(knowledge, scope, datasets);
  const chosen = scoped.forQuestion(question);
  const linked = linkSchema(scopedCatalog(catalog, scope), question, linkHints(chosen));
  const out = {
    tables: linked.tables.map((t) => t.id),
    columns: [...new Set([...linked.columns, ...linked.values.map((v) => `${v.table}.${v.column}`)])],
    glossary: chosen.glossary.map((g) => g.term),
    rules: chosen.rules,
    examples: chosen.examples.map((e) => e.question),
    values: linked.values.map((v) => `${v.text} → ${v.table}.${v.column} = '${v.value}'`),
    promptTokens: estimateTokens(recorder.prompt),
  };
  if (json) {
    console.log(JSON.stringify(out, null, 2));
  } else {
    console.log(`Question: ${question}`);
    console.log(
      `As: ${as ? `${as} (${scope.all ? "every allowed dataset" : scope.entries.join(", ") || "no data"})` : "the whole allowed data (no --as)"}`,
    );
    // With --as, only the files about data the person sees (the paths would name other datasets).
    const files = as
      ? `${
          scoped
            .parts()
            .files.map((f) => f.dataset)
            .join(", ") || "(none)"
        } (the files about data in scope)`
      : `${report.loaded.join(", ") || "(none)"} (${cfg.contextDir})`;
    console.log(`Context files: ${files}`);
    console.log(
      `Approved in the admin page: ${approved.length} verified quer${approved.length === 1 ? "y" : "ies"}`,
    );
    console.log(
      `Tables in the prompt (best first): ${out.tables.join(", ")}` +
        (linked.all
          ? ` — all ${linked.total}: the catalog is small enough`
          : ` — ${linked.total} in the catalog`),
    );
    console.log(`Values named: ${out.values.join("; ") || "(none)"}`);
    console.log(`Glossary terms: ${out.glossary.join(", ") || "(none)"}`);
    console.log(`Verified examples: ${out.examples.join(" | ") || "(none)"}`);
    console.log(`Planner prompt: ~${out.promptTokens} tokens (estimated)\n`);
    console.log("--- the planner's system prompt ---");
    console.log(system);
    if (!system.includes(KNOWLEDGE_HEADINGS.rules) && chosen.rules.length) {
      throw new Error(
        "The planner's prompt lacks the rules the context chose: the command and the agent disagree.",
      );
    }
  }
  await closeWarehouses();
  return 0;
}

runCommand("context", main);

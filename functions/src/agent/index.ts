/**
 * Quarry's agent: `createAgentGraph` compiles the graph (ingress → planner → executor → verifier →
 * generator → summarizer) with a checkpointer. The HTTP layer streams it with
 * `streamMode: ["values", "updates", "messages", "custom"]`; custom chunks are `QuarryEvent`s.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import { config as runtimeConfig, type RuntimeConfig } from "../config";
import { teamContext, type AgentDeps } from "./deps";
import type { VerifiedQueryItem } from "../context/authored";
import { KnowledgeBase, type Knowledge } from "../context/knowledge";
import type { QueryRecord } from "../tools/types";
import type { CatalogCache } from "../context/catalog";
import type { CatalogStore } from "../context/catalog-store";
import type { SemanticTables } from "../context/linking/semantic";
import type { StoredImports } from "../context/live";
import type { CredentialSource, Warehouse } from "../tools/types";
import { buildGraph, type QuarryGraph } from "./graph";
import type { FirstScreen } from "../contract/events";

export { resumeInput, turnInput } from "./graph";
import { QuarryError } from "../errors";
import { ModelConfigError, createModel, type CredentialFacts, type ModelInfo } from "./model";
import { scopedCatalog } from "../context/scoped";
import { scopedKnowledge } from "../context/scoped-knowledge";
import { datasetNamesOf, type Scope } from "../tools/scope";

export type { QuarryEvent, Usage } from "./events";
export type { QuarryGraph } from "./graph";
export { describeModel, resolveModel } from "./model";

export interface CreateAgentGraphOptions {
  checkpointer: BaseCheckpointSaver;
  /** Defaults to the provider chosen from config (Vertex AI, Gemini API key, OpenAI-compatible server). */
  model?: BaseChatModel;
  /** What `model` is, for error messages; defaults to what config describes. */
  modelInfo?: ModelInfo;
  /** Where Google credentials could come from; defaults to looking at this machine. */
  credentialFacts?: CredentialFacts;
  /** Defaults to the warehouse tools from config (DuckDB sample locally, BigQuery in production). */
  tools?: StructuredToolInterface[];
  /** The dry run of the warehouse behind `tools` (with tools given; else the configured warehouse's). */
  dryRun?: Warehouse["dryRun"];
  config?: RuntimeConfig;
  /** A tool call running longer becomes a `timeout` tool error; defaults to the query timeout + 15 s. */
  toolTimeoutMs?: number;
  /** Clock for prompts (tests pin it). */
  now?: () => Date;
  /** The team's authored context; defaults to the files in `config.contextDir` that fit the warehouse. */
  knowledge?: KnowledgeBase;
  /** Verified queries approved in the admin page, merged with the context files' own per question. */
  approvedQueries?: () => Promise<readonly VerifiedQueryItem[]>;
  /**
   * The imports applied in the admin page (Firestore), merged with the files' per question; the
   * knowledge is rebuilt when their version changes. Unused when `knowledge` is given.
   */
  storedImports?: StoredImports;
  /**
   * User identity mode (QUARRY_BQ_IDENTITY=user): where BigQuery gets each person's access token
   * (the server's credential broker). Absent: the service account runs everything.
   */
  credentials?: CredentialSource;
  /** Called after every query the warehouse tools run or refuse (the server's audit log). */
  onQuery?: (record: QueryRecord) => void;
  /** Shares the schema catalog across instances (the server passes a Firestore store). */
  catalogStore?: CatalogStore;
  /** The schema catalog to link questions against; defaults to one built from the warehouse's metadata. */
  catalog?: CatalogCache;
  /**
   * The embedding retriever that helps schema linking; defaults to one over `QUARRY_EMBEDDING_MODEL`
   * of the chat model's provider, or none (lexical linking only).
   */
  semantic?: SemanticTables;
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
): Promise<GraphFactory> {
  const cfg = opts.config ?? runtimeConfig();
  let dialect: { name: string; note: string } = DIALECTS[cfg.warehouse.engine];
  let tools: StructuredToolInterface[];
  let dryRun: Warehouse["dryRun"] | undefined;
  let knowledge = opts.knowledge;
  let catalog = opts.catalog;
  let live: AgentDeps["live"];
  // The model client loads (main-thread work) while the warehouse opens (a fresh instance waits on
  // DuckDB's worker processes there): a fresh instance's first answer does not wait for one, then the other.
  const model = modelDeps(opts, cfg);
  model.catch(() => {}); // awaited below; observed now so a failure while the warehouse opens is not "unhandled"
  if (opts.tools) {
    tools = opts.tools;
    dryRun = opts.dryRun;
  } else {
    const { auditedWarehouse, getWarehouse, createWarehouseTools } = await import("../tools/index.js");
    const plain = await getWarehouse(cfg.warehouse, opts.credentials);
    const warehouse = opts.onQuery ? auditedWarehouse(plain, opts.onQuery) : plain;
    dryRun = (sql, ctx) => warehouse.dryRun(sql, ctx);
    const catalogOf = await catalogMaker(cfg, warehouse, opts.catalogStore);
    if (knowledge) catalog ??= catalogOf(knowledge);
    else if (!catalog) live = await liveContext(cfg.contextDir, warehouse, catalogOf, opts.storedImports);
    else knowledge = (await loadTeamContext(cfg.contextDir, warehouse)).knowledge;
    tools = createWarehouseTools(warehouse, {
      previewRows: cfg.warehouse.previewRows,
      previewChars: cfg.warehouse.previewChars,
    });
    dialect = {
      name: DIALECTS[warehouse.dialect as keyof typeof DIALECTS].name,
      note: warehouse.dialectNote,
    };
  }
  const deps: AgentDeps = {
    ...(await model),
    tools,
    ...(dryRun ? { dryRun } : {}),
    agent: cfg.agent,
    toolTimeoutMs: opts.toolTimeoutMs ?? cfg.warehouse.bigquery.timeoutMs + 15_000,
    digestChars: cfg.warehouse.previewChars,
    dialect,
    now: opts.now ?? (() => new Date()),
    ...(knowledge && !knowledge.empty ? { knowledge } : {}),
    ...(live ? { live } : {}),
    ...(opts.approvedQueries ? { approvedQueries: opts.approvedQueries } : {}),
    ...(catalog ? { catalog } : {}),
    ...(catalog || live ? await semanticDeps(opts, cfg) : {}),
  };
  return Object.assign((checkpointer: BaseCheckpointSaver) => buildGraph(deps, checkpointer), {
    firstScreen: (scope: Scope) => firstScreen(deps, scope),
    tools: deps.tools,
    searchContext: (scope: Scope, query: string) => searchContext(deps, scope, query),
    ...(dryRun ? { dryRun } : {}),
  });
}

/** Compiles the graph for a checkpointer; also answers what an empty conversation offers. */
export type GraphFactory = ((checkpointer: BaseCheckpointSaver) => QuarryGraph) & {
  /** What an empty conversation offers this person: only their scope's datasets and starters. */
  firstScreen(scope: Scope): Promise<Omit<FirstScreen, "startersFrom">>;
  /** The warehouse tools the planner calls (audited, scoped by the run's person), for MCP's own tools. */
  tools: readonly StructuredToolInterface[];
  /** The authored context a question matches, as `scope` may see it (MCP's `search_context`). */
  searchContext(scope: Scope, query: string): Promise<Knowledge>;
  /** The warehouse's dry run (scope, read-only, estimate; nothing billed); absent with tools given directly. */
  dryRun?: Warehouse["dryRun"];
};

/**
 * The rules, glossary entries and verified queries (approved ones included) `query` matches, chosen
 * as the planner's are, from what `scope` may see only.
 */
async function searchContext(deps: AgentDeps, scope: Scope, query: string): Promise<Knowledge> {
  const approved = deps.approvedQueries ? await deps.approvedQueries() : [];
  const team = await teamContext(deps);
  const all = (team.knowledge ?? new KnowledgeBase([])).withExamples(approved);
  if (scope.all) return all.forQuestion(query);
  const full = team.catalog ? await team.catalog.get() : undefined;
  const datasets = [...new Set(full?.tables.flatMap((t) => datasetNamesOf(t.id)) ?? [])];
  return scopedKnowledge(all, scope, datasets).forQuestion(query);
}

/** The context files' starter questions and the datasets (with tables) of the catalog, as `scope` sees them. */
async function firstScreen(deps: AgentDeps, scope: Scope): Promise<Omit<FirstScreen, "startersFrom">> {
  const team = await teamContext(deps);
  const full = team.catalog ? await team.catalog.get() : undefined;
  const tables = full ? scopedCatalog(full, scope).tables.map((t) => t.id) : [];
  const datasets = [...new Set(full?.tables.flatMap((t) => datasetNamesOf(t.id)) ?? [])];
  const knowledge = team.knowledge && scopedKnowledge(team.knowledge, scope, datasets);
  const byDataset = new Map<string, string[]>();
  for (const id of tables) {
    const parts = id.split(".");
    const dataset = parts.slice(0, -1).join(".") || id;
    byDataset.set(dataset, [...(byDataset.get(dataset) ?? []), parts[parts.length - 1]]);
  }
  return {
    starters: knowledge?.starters() ?? [],
    datasets: [...byDataset].map(([name, t]) => ({ name, tables: t.sort() })),
  };
}

/**
 * The model, or why there is none. A missing model does not stop the graph from compiling: the
 * turn stores the user's question and its first model call ends the run with `model:not_configured`
 * and what to set, an error the page shows as it is (never a 5xx the SDK would retry).
 */
async function modelDeps(
  opts: Pick<CreateAgentGraphOptions, "model" | "modelInfo" | "credentialFacts">,
  cfg: RuntimeConfig,
): Promise<Pick<AgentDeps, "model" | "modelInfo" | "modelUnavailable">> {
  if (opts.model)
    return { model: opts.model, modelInfo: opts.modelInfo ?? { model: cfg.model.model ?? "model" } };
  try {
    const { model, info } = await createModel(cfg.model, opts.credentialFacts);
    return { model, modelInfo: info };
  } catch (err) {
    if (!(err instanceof ModelConfigError)) throw err;
    return {
      modelInfo: { model: cfg.model.model ?? "none" },
      modelUnavailable: new QuarryError("model:not_configured", err.message),
    };
  }
}

/** The embedding retriever, when embeddings are given or configured (see `model/embeddings.ts`). */
async function semanticDeps(
  opts: Pick<CreateAgentGraphOptions, "semantic" | "credentialFacts">,
  cfg: RuntimeConfig,
): Promise<Pick<AgentDeps, "semantic">> {
  if (opts.semantic) return { semantic: opts.semantic };
  if (!cfg.model.embeddingModel) return {};
  const { createEmbeddingModel } = await import("./model/embeddings.js");
  const embeddings = (await createEmbeddingModel(cfg.model, opts.credentialFacts))?.embeddings;
  if (!embeddings) return {};
  const { SemanticTables } = await import("../context/linking/semantic.js");
  const logger = await import("firebase-functions/logger");
  return {
    semantic: new SemanticTables(embeddings, {
      onError: (err) => logger.warn("embedding failed; linking lexically", { err: String(err) }),
    }),
  };
}

/** The context files that fit this warehouse; a bad file is logged with its lines and left out. */
async function loadTeamContext(dir: string, warehouse: Warehouse) {
  const { loadContextFiles, withImports } = await import("../context/index.js");
  const files = await loadContextFiles(dir, warehouse);
  const logger = await import("firebase-functions/logger");
  const { report } = files;
  for (const err of report.failed) logger.error(`Authored context not used. ${err.message}`);
  if (report.loaded.length) logger.info(`Authored context loaded: ${report.loaded.join(", ")}`);
  if (report.imported.length) logger.info(`Imported semantic layers loaded: ${report.imported.join(", ")}`);
  return { files, knowledge: await withImports(files, [], warehouse) };
}

/**
 * The team's context as it is now: the files read once, the imports applied in the admin page
 * since merged in when they change (context/live.ts).
 */
async function liveContext(
  dir: string,
  warehouse: Warehouse,
  catalogOf: (k: KnowledgeBase) => CatalogCache,
  stored: StoredImports | undefined,
): Promise<AgentDeps["live"]> {
  const [{ files }, { LiveContext }, logger] = await Promise.all([
    loadTeamContext(dir, warehouse),
    import("../context/live.js"),
    import("firebase-functions/logger"),
  ]);
  const ctx = new LiveContext(files, warehouse, catalogOf, stored, (err) =>
    logger.error("imported context not rebuilt; serving the last one", { err: String(err) }),
  );
  // Built now, so the first question does not wait on it (and a bad start shows in the log).
  await ctx.current();
  return () => ctx.current();
}

/** The schema catalog for a knowledge's notes and joins: one per distinct set, shared across instances. */
async function catalogMaker(
  cfg: RuntimeConfig,
  warehouse: Warehouse,
  store: CatalogStore | undefined,
): Promise<(k: KnowledgeBase) => CatalogCache> {
  const { CatalogCache, buildCatalog, warehouseCatalogKey } = await import("../context/index.js");
  const logger = await import("firebase-functions/logger");
  const made = new Map<string, CatalogCache>();
  return (knowledge) => {
    const notes = knowledge.allNotes();
    const joins = knowledge.declaredJoins();
    const key = warehouseCatalogKey(cfg.warehouse, notes, joins);
    let c = made.get(key);
    if (!c) {
      c = new CatalogCache(() => buildCatalog(warehouse, notes, { joins }), {
        maxAgeMs: cfg.catalogMaxAgeMinutes * 60_000,
        ...(store ? { store, key } : {}),
        onStoreError: (err) =>
          logger.warn("catalog store unavailable; built the catalog here", { err: String(err) }),
      });
      made.set(key, c);
    }
    return c;
  };
}

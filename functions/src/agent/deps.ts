/** What the nodes need besides state: the model, the tools and the agent's settings. */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { AgentConfig } from "../config";
import type { QuarryError } from "../errors";
import type { ModelInfo } from "./model/errors";
import type { VerifiedQueryItem } from "../context/authored";
import type { KnowledgeBase } from "../context/knowledge";
import type { CatalogCache } from "../context/catalog";
import type { SemanticTables } from "../context/linking/semantic";
import type { Warehouse } from "../tools/types";

export interface AgentDeps {
  /** Unset when no model can run: every model call then fails with `modelUnavailable`. */
  model?: BaseChatModel;
  /** What the model is, for error messages that say what to change. */
  modelInfo: ModelInfo;
  /** Why there is no model (`model:not_configured`, saying what to set). */
  modelUnavailable?: QuarryError;
  tools: StructuredToolInterface[];
  /**
   * The warehouse's dry run (scope, read-only, estimate; nothing billed), through which an
   * investigation reserves each step's bytes before it runs. Absent (tools given without one): an
   * investigation with a byte budget runs its steps one at a time.
   */
  dryRun?: Warehouse["dryRun"];
  agent: AgentConfig;
  /** A tool call running longer than this becomes a `timeout` tool error. */
  toolTimeoutMs: number;
  /** Characters of tool results the generator sees. */
  digestChars: number;
  /** SQL dialect the prompt names, and the warehouse's note on it. */
  dialect: { name: string; note: string };
  /** The schema catalog for linking; absent when the graph was given tools (tests): all tables are listed. */
  catalog?: CatalogCache;
  /** The optional embedding retriever that helps linking (QUARRY_EMBEDDING_MODEL); absent = lexical only. */
  semantic?: SemanticTables;
  /** The team's authored context (glossary, rules, notes, verified queries); absent when none. */
  knowledge?: KnowledgeBase;
  /**
   * The team's context as it is now, when it can change while the instance runs (imports applied
   * in the admin page): wins over `knowledge` and `catalog`. Read through `teamContext(deps)`.
   */
  live?: () => Promise<{ knowledge: KnowledgeBase; catalog: CatalogCache }>;
  /** Verified queries approved in the admin page (Firestore), merged with the files' own per question. */
  approvedQueries?: () => Promise<readonly VerifiedQueryItem[]>;
  /** Clock, injectable so prompts are reproducible in tests. */
  now: () => Date;
}

/** The knowledge and catalog to use now: the live ones when the context can change, else the fixed ones. */
export async function teamContext(
  deps: Pick<AgentDeps, "knowledge" | "catalog" | "live">,
): Promise<{ knowledge?: KnowledgeBase; catalog?: CatalogCache }> {
  if (!deps.live) return { knowledge: deps.knowledge, catalog: deps.catalog };
  const { knowledge, catalog } = await deps.live();
  return { ...(knowledge.empty ? {} : { knowledge }), catalog };
}

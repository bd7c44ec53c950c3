/**
 * `ingress`: checks the turn's input, resets the per-turn state and builds the system context once.
 * It makes no model call, so the checkpoint written after it holds the user's message even when
 * the model fails later.
 */
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { z } from "zod";
import { teamContext, type AgentDeps } from "../deps";
import { emitPhase } from "../emit";
import { buildSystemContext } from "../prompt-inputs/system-context";
import { KnowledgeBase, linkHints, renderKnowledge, type Knowledge } from "../../context/knowledge";
import { linkSchema, renderLinkedTables } from "../../context/linking";
import type { Catalog } from "../../context/catalog";
import { scopedCatalog } from "../../context/scoped";
import { scopedKnowledge } from "../../context/scoped-knowledge";
import { runPersonOf } from "../../tools/person";
import { datasetNamesOf, limitedScope, type Scope } from "../../tools/scope";
import { messageText, turnStartIndex } from "../prompt-inputs/history";
import type { QuarryStateType, QuarryUpdate, SystemContext, UserContext } from "../state";
import type { TableInfo, ToolArtifact } from "../../tools/types";
import type { SemanticTables } from "../../context/linking/semantic";
import { MAX_QUESTION_CHARS } from "../../contract/limits";

// Quarry is read-only; a request phrased as a write statement is refused before any model sees it.
const WRITE_STATEMENT =
  /\b(drop|truncate|alter)\s+(table|schema|database|view|dataset)\b|\bdelete\s+from\b|\binsert\s+into\b|\bupdate\s+[\w.`"]+\s+set\b|\bgrant\s+\w+\s+on\b/i;

const UserContextSchema = z
  .object({
    displayName: z.string().max(200).optional(),
    preferences: z.string().max(2_000).optional(),
    timezone: z.string().max(100).optional(),
  })
  .catch({});

/** Why this input is refused, or null when it is fine. Pure, exported for tests. */
export function refusalFor(messages: BaseMessage[]): string | null {
  const i = turnStartIndex(messages);
  if (i < 0 || i !== messages.length - 1) return "Please send a question as a message.";
  const text = messageText(messages[i]).trim();
  if (!text)
    return "Your message was empty. Ask a question about your data, e.g. “How many orders were placed last month?”";
  if (text.length > MAX_QUESTION_CHARS) {
    return `Your message is ${text.length} characters long; please keep questions under ${MAX_QUESTION_CHARS} characters.`;
  }
  if (WRITE_STATEMENT.test(text)) {
    return "Quarry only reads data: it cannot change, delete or create tables. Ask a question about the data instead.";
  }
  return null;
}

export function makeIngress(deps: AgentDeps) {
  return async function ingress(
    state: QuarryStateType,
    config: LangGraphRunnableConfig,
  ): Promise<QuarryUpdate> {
    emitPhase(config, "ingress");
    const configurable = (config.configurable ?? {}) as Record<string, unknown>;
    const reset: QuarryUpdate = {
      userId: typeof configurable.user_id === "string" ? configurable.user_id : state.userId,
      threadId: typeof configurable.thread_id === "string" ? configurable.thread_id : state.threadId,
      userContext: UserContextSchema.parse(configurable.user_context ?? state.userContext) as UserContext,
      phase: "ingress",
      turnResults: [],
      retryCount: 0,
      modelCalls: 0,
      verdict: null,
      clarified: false,
      investigation: null,
      refusal: null,
      finalAnswer: "",
      usageAtTurnStart: state.usage,
    };
    const refusal = refusalFor(state.messages);
    if (refusal) {
      return { ...reset, refusal, finalAnswer: refusal, messages: [new AIMessage(refusal)] };
    }
    const question = messageText(state.messages[state.messages.length - 1]);
    // Everything below is what this person may see: a run that carries no person sees nothing.
    const person = runPersonOf(config.configurable);
    const scope = person?.scope ?? limitedScope([]);
    const team = await teamContext(deps);
    const full = team.catalog ? await team.catalog.get().catch(() => undefined) : undefined;
    const catalog = full ? scopedCatalog(full, scope) : undefined;
    const knowledge = await knowledgeFor(deps, team.knowledge, scope, full);
    const chosen = knowledge?.forQuestion(question);
    const linked = catalog
      ? await linkedTables(
          catalog,
          state.messages,
          question,
          chosen,
          deps.semantic && { semantic: deps.semantic, full: full! },
        )
      : undefined;
    return {
      ...reset,
      systemContext: {
        ...buildSystemContext({
          now: deps.now(),
          dialect: deps.dialect.name,
          dialectNote: deps.dialect.note,
          tables: linked ? [] : await listTables(deps, config),
          ...(linked ? { tableLines: linked } : {}),
          knowledge: chosen ? renderKnowledge(chosen) : "",
          ...(person?.uploads?.length ? { uploads: person.uploads } : {}),
        }),
        ...definitionsOf(chosen),
      },
    };
  };
}

/**
 * The files' knowledge with the verified queries approved in the admin page since, as the person
 * may see it (only what is about data in their scope).
 */
async function knowledgeFor(
  deps: AgentDeps,
  team: KnowledgeBase | undefined,
  scope: Scope,
  full: Catalog | undefined,
): Promise<KnowledgeBase | undefined> {
  const approved = deps.approvedQueries ? await deps.approvedQueries() : [];
  const all = approved.length ? (team ?? new KnowledgeBase([])).withExamples(approved) : team;
  if (!all || scope.all) return all;
  // Every dataset name of the whole catalog: a query naming one outside the scope is left out.
  const datasets = [...new Set(full?.tables.flatMap((t) => datasetNamesOf(t.id)) ?? [])];
  return scopedKnowledge(all, scope, datasets);
}

/**
 * The tables this question needs, with their full schemas (schema linking over the catalog, helped
 * by the earlier questions of the conversation and the tables the chosen authored context names).
 * A catalog that cannot be read falls back to the plain list.
 */
async function linkedTables(
  c: Catalog,
  messages: BaseMessage[],
  question: string,
  chosen: Knowledge | undefined,
  embedded: { semantic: SemanticTables; full: Catalog } | undefined,
): Promise<string[] | undefined> {
  try {
    const recent = messages
      .slice(0, -1)
      .filter((m) => m.getType() === "human")
      .slice(-2)
      .map(messageText);
    const { hints, home } = chosen ? linkHints(chosen) : { hints: [], home: [] };
    // The embedding retriever (if any) reads the question with the turn before it, for follow-ups.
    const text = [...recent.slice(-1), question].join("\n");
    const visible = new Set(c.tables.map((t) => t.id));
    const near = embedded
      ? await embedded.semantic.rank(embedded.full, text, (id) => visible.has(id))
      : undefined;
    return renderLinkedTables(
      c,
      linkSchema(c, question, { recent, hints, home, ...(near ? { semantic: near } : {}) }),
    );
  } catch {
    return undefined;
  }
}

/**
 * The dataset list for the system prompt, read through the same `list_tables` tool the model has
 * (the graph only knows tools, not the warehouse). A failure leaves the list empty: the planner can
 * still call list_tables itself.
 */
async function listTables(deps: AgentDeps, config: LangGraphRunnableConfig): Promise<TableInfo[]> {
  const tool = deps.tools.find((t) => t.name === "list_tables");
  if (!tool) return [];
  try {
    const msg = (await tool.invoke(
      { id: "ingress_list_tables", name: "list_tables", args: {}, type: "tool_call" },
      { signal: config.signal, configurable: config.configurable },
    )) as { artifact?: ToolArtifact };
    return msg.artifact?.kind === "tables" ? msg.artifact.tables : [];
  } catch {
    return [];
  }
}

/** The chosen terms that can be named as used (with SQL and a known origin), and the chosen verified queries. */
function definitionsOf(
  chosen: Knowledge | undefined,
): Pick<SystemContext, "definitions" | "verifiedQueries"> {
  const definitions = (chosen?.glossary ?? []).flatMap((g) =>
    g.sql && g.origin ? [{ term: g.term, sql: g.sql, origin: g.origin }] : [],
  );
  const verifiedQueries = (chosen?.examples ?? []).map((e) => ({ question: e.question, sql: e.sql }));
  return {
    ...(definitions.length ? { definitions } : {}),
    ...(verifiedQueries.length ? { verifiedQueries } : {}),
  };
}

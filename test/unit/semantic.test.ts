/**
 * The optional embedding retriever for schema linking: the real `OpenAIEmbeddings` client (made by
 * `createEmbeddingModel` from QUARRY_EMBEDDING_MODEL) against the loopback OpenAI-compatible
 * stand-in's `/v1/embeddings`, whose small fixed meaning space puts "clients" next to `customers`.
 * It finds a table words alone miss, embeds the tables once per catalog, and never breaks or holds
 * up linking when the embedding service fails.
 */
import { MemorySaver } from "@langchain/langgraph";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createAgentGraph } from "../../functions/src/agent";
import { createEmbeddingModel } from "../../functions/src/agent/model/embeddings";
import {
  CatalogCache,
  SemanticTables,
  linkSchema,
  type Catalog,
  type CatalogTable,
} from "../../functions/src/context";
import { closeWarehouses } from "../../functions/src/tools";
import type { EmbeddingsInterface } from "@langchain/core/embeddings";
import { startOpenAIStandin, type OpenAIStandin } from "../support/openai-standin";
import { ScriptedChatModel } from "../support/scripted-model";
import { byRole } from "../support/scripted-model-script";
import { duckTools, testConfig } from "./agent/harness";
import { personConfig } from "../support/person";

let standin: OpenAIStandin;
let broken: OpenAIStandin;

beforeAll(async () => {
  standin = await startOpenAIStandin();
  broken = await startOpenAIStandin({
    embeddingError: { status: 404, message: 'model "nomic-embed-text" not found' },
  });
});

afterAll(async () => {
  await standin?.stop();
  await broken?.stop();
  await closeWarehouses();
});

const env = (baseUrl: string) => ({
  QUARRY_OPENAI_BASE_URL: baseUrl,
  QUARRY_MODEL: "llama3.1",
  QUARRY_EMBEDDING_MODEL: "nomic-embed-text",
});

async function embeddingsAt(baseUrl: string): Promise<EmbeddingsInterface> {
  const made = await createEmbeddingModel(testConfig(env(baseUrl)).model);
  expect(made).toMatchObject({ provider: "openai", model: "nomic-embed-text" });
  return made!.embeddings;
}

/** The shop among look-alikes in other datasets: 4 + 5 × 4 × 3 = 64 tables. */
function catalog(): Catalog {
  const col = (name: string, type = "INTEGER") => ({ name, type });
  const shop: CatalogTable[] = [
    {
      id: "shop.orders",
      rowCount: 43_000,
      columns: [col("order_id"), col("customer_id"), col("status", "VARCHAR"), col("order_date", "DATE")],
    },
    {
      id: "shop.order_items",
      rowCount: 100_000,
      columns: [col("order_id"), col("product_id"), col("line_total")],
    },
    { id: "shop.products", rowCount: 210, columns: [col("product_id"), col("category", "VARCHAR")] },
    { id: "shop.customers", rowCount: 6000, columns: [col("customer_id"), col("created_at", "TIMESTAMP")] },
  ];
  const tables = [...shop];
  for (const ds of ["archive", "staging", "sales_eu", "legacy", "tmp"]) {
    for (const t of shop) {
      for (const suffix of ["", "_2019", "_raw"]) {
        tables.push({ ...t, id: `${ds}.${t.id.split(".")[1]}${suffix}`, rowCount: 50 });
      }
    }
  }
  return { tables, builtAt: Date.now() };
}

const QUESTION = "How many clients signed up each month?";

describe("the embedding retriever", () => {
  it("finds the table a question names in other words, which lexical linking misses", async () => {
    const c = catalog();
    const semantic = new SemanticTables(await embeddingsAt(standin.baseUrl), {
      batchSize: 25,
      waitMs: 60_000,
    });
    const before = standin.embeddingRequests();
    const near = await semantic.rank(c, QUESTION);
    // 64 tables in batches of 25 (3 requests) and the question (1).
    expect(standin.embeddingRequests() - before).toBe(4);
    expect(near[0].id.endsWith("customers")).toBe(true);

    const lexical = linkSchema(c, QUESTION).tables.map((t) => t.id);
    expect(lexical).not.toContain("shop.customers");
    const helped = linkSchema(c, QUESTION, { semantic: near }).tables.map((t) => t.id);
    expect(helped[0]).toBe("shop.customers"); // the real table, not a copy of it
    expect(helped.filter((id) => id.endsWith(".customers"))).toEqual(["shop.customers"]);

    // The tables are embedded once per catalog: a second question costs one request.
    await semantic.rank(c, "What did shoppers buy?");
    expect(standin.embeddingRequests() - before).toBe(5);
  });

  it("a failing embedding model leaves linking lexical and says why, every time it is asked", async () => {
    const errors: unknown[] = [];
    const semantic = new SemanticTables(await embeddingsAt(broken.baseUrl), {
      onError: (e) => errors.push(e),
    });
    const c = catalog();
    expect(await semantic.rank(c, QUESTION)).toEqual([]);
    expect(String(errors[0])).toMatch(/nomic-embed-text" not found/);
    // Not remembered as failed: the next question tries the tables again.
    expect(await semantic.rank(c, QUESTION)).toEqual([]);
    expect(broken.embeddingRequests()).toBeGreaterThanOrEqual(4);
    const lexical = linkSchema(c, "How many orders?", { semantic: [] }).tables.map((t) => t.id);
    expect(lexical[0]).toBe("shop.orders");
  });

  it("does not hold up a question while the tables are still being embedded", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const real = await embeddingsAt(standin.baseUrl);
    // Table embedding held until the test says so; the question's embedding answers at once.
    const held: EmbeddingsInterface = {
      embedQuery: (t) => real.embedQuery(t),
      embedDocuments: async (ts) => {
        await gate;
        return real.embedDocuments(ts);
      },
    };
    // The tables never arrive before the release, so the short wait decides, whatever the speed.
    const semantic = new SemanticTables(held, { waitMs: 200 });
    const c = catalog();
    expect(await semantic.rank(c, QUESTION)).toEqual([]); // lexical for now
    release();
    await semantic.warm(c);
    expect((await semantic.rank(c, QUESTION))[0].id.endsWith("customers")).toBe(true);
  });

  it("is made from QUARRY_EMBEDDING_MODEL and asked once per question by the graph", async () => {
    const cfg = testConfig(env(standin.baseUrl));
    const model = new ScriptedChatModel(
      byRole({ planner: [{ text: "No data needed." }], generator: [{ text: "ok" }] }),
    );
    const graph = await createAgentGraph({
      checkpointer: new MemorySaver(),
      model,
      tools: await duckTools(cfg),
      config: cfg,
      catalog: new CatalogCache(async () => catalog()),
    });
    const before = standin.embeddingRequests();
    await ask(graph, "t-cfg", QUESTION);
    // The question, and the catalog's tables (64: one batch), whenever they arrive.
    await vi.waitFor(() => expect(standin.embeddingRequests() - before).toBe(2), { timeout: 30_000 });
    await ask(graph, "t-cfg", "And shoppers?");
    await vi.waitFor(() => expect(standin.embeddingRequests() - before).toBe(3), { timeout: 30_000 });
  });

  it("puts the table it found in the planner's prompt; without it the prompt lacks it", async () => {
    const c = catalog();
    // A generous wait: the question's embedding must arrive, however busy the machine.
    const semantic = new SemanticTables(await embeddingsAt(standin.baseUrl), { waitMs: 60_000 });
    await semantic.warm(c); // the tables' vectors are ready, so the first question uses them
    const prompts: string[] = [];
    for (const withRetriever of [true, false]) {
      const model = new ScriptedChatModel(
        byRole({ planner: [{ text: "No data needed." }], generator: [{ text: "ok" }] }),
      );
      const graph = await createAgentGraph({
        checkpointer: new MemorySaver(),
        model,
        tools: await duckTools(testConfig()),
        config: testConfig(),
        catalog: new CatalogCache(async () => c),
        ...(withRetriever ? { semantic } : {}),
      });
      await ask(graph, `t-${withRetriever}`, QUESTION);
      prompts.push(model.callsBy("planner")[0].request.system);
    }
    expect(prompts[0]).toMatch(/shop\.customers/);
    expect(prompts[1]).not.toMatch(/shop\.customers/);
  });
});

async function ask(graph: Awaited<ReturnType<typeof createAgentGraph>>, thread: string, question: string) {
  const stream = await graph.stream(
    { messages: [{ type: "human", content: question }] } as never,
    { configurable: { thread_id: thread, ...personConfig() }, streamMode: ["values"] } as never,
  );
  for await (const chunk of stream as AsyncIterable<unknown>) void chunk;
}

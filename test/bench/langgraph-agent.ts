/**
 * The graph LangGraph's own Agent Server serves in the run-cost and cold-start benches: what a
 * LangGraph user would deploy instead of Quarry, at its simplest — a `createReactAgent` over
 * ChatVertexAI (pointed at the bench's Vertex AI stand-in, VERTEX_AI_EMULATOR_HOST, as Quarry's is)
 * with one read-only SQL tool over the same DuckDB sample warehouse (Quarry's compiled warehouse
 * engine, so the query runs in the same worker processes under the same caps: the rows are the
 * same, and so is what the warehouse costs). No linking, context, access, quota or audit.
 * Loaded by `@langchain/langgraph-api`'s server by path (`langgraph-agent.ts:graph`), under Node's
 * own type stripping.
 */
import { randomUUID } from "node:crypto";
import { createRequire } from "node:module";
import path from "node:path";
import { tool } from "@langchain/core/tools";
import { ChatVertexAI } from "@langchain/google-vertexai";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { z } from "zod";

const root = path.resolve(import.meta.dirname, "../..");
const require = createRequire(path.join(root, "functions/package.json"));
const lib = path.join(root, "functions/lib");
const { config } = require(path.join(lib, "config/index.js"));
const { getWarehouse } = require(path.join(lib, "tools/index.js"));
const { FULL_SCOPE } = require(path.join(lib, "tools/scope.js"));

interface Rows {
  rows: Record<string, unknown>[];
}
type Warehouse = { query(sql: string, ctx: Record<string, unknown>): Promise<Rows> };

const sqlQuery = tool(
  async ({ sql }: { sql: string }) => {
    const warehouse = (await getWarehouse(config().warehouse)) as Warehouse;
    const result = await warehouse.query(sql, {
      userId: "langgraph",
      threadId: "langgraph",
      runId: randomUUID(),
      bytesBilledSoFar: 0,
      scope: FULL_SCOPE,
    });
    return JSON.stringify(result.rows);
  },
  {
    // The stand-in's script answers a model call that binds this tool as this agent (run-cost-measure.ts).
    name: "sql_query",
    description: "Runs one read-only SELECT over the shop dataset (DuckDB SQL) and returns its rows as JSON.",
    schema: z.object({ sql: z.string().describe("One SELECT statement.") }),
  },
);

const model = config().model as { project: string; location: string };

/**
 * The stand-in needs no token: an auth client whose fetch is plain fetch (as Quarry's vertex.ts
 * does) — but one that sends a request again, up to twice, when it failed before any answer because
 * the pooled connection it was written on had been closed (the stand-in closes idle connections
 * after 1 s, as servers do): ChatVertexAI alone never retries an error without an HTTP status, and
 * the run would fail (Quarry's model client retries these too, agent/model/transport.ts).
 */
async function retryingFetch(url: string, init?: RequestInit): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fetch(url, init);
    } catch (err) {
      const code = (err as { cause?: { code?: string } }).cause?.code;
      if (attempt >= 2 || (code !== "UND_ERR_SOCKET" && code !== "ECONNRESET")) throw err;
    }
  }
}
const authClient = { fetch: retryingFetch };

export const graph = createReactAgent({
  llm: new ChatVertexAI({
    model: "gemini-2.5-flash",
    location: model.location,
    apiKey: "",
    endpoint: process.env.VERTEX_AI_EMULATOR_HOST,
    authOptions: { projectId: model.project, authClient: authClient as never },
  }),
  tools: [sqlQuery],
  prompt:
    "You are a data analyst. Answer questions about the shop's data (DuckDB: shop.orders, " +
    "shop.order_items, shop.customers, shop.products) by running SQL with the sql_query tool.",
});

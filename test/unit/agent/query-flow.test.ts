/** The data path on the real DuckDB tools: one query, did-you-mean, empty results, exhausted retries. */
import { afterAll, describe, expect, it } from "vitest";
import { closeWarehouses } from "../../../functions/src/tools";
import { byRole } from "../../support/scripted-model-script";
import { harness, runTurn, toolCallsOf } from "./harness";

afterAll(() => closeWarehouses());

const COUNT_SQL = "SELECT status, COUNT(*) AS orders FROM shop.orders GROUP BY status ORDER BY status";

describe("a question needing one query", () => {
  it("looks up the schema, queries, verifies and answers in at most 3 model calls", async () => {
    const h = await harness(
      byRole({
        planner: [
          { toolCalls: [{ name: "describe_table", args: { table: "shop.orders" } }] },
          { toolCalls: [{ name: "bq_query", args: { sql: COUNT_SQL } }] },
        ],
        generator: [{ text: "Orders by status are in the table." }],
      }),
    );
    const out = await runTurn(h, "t-one", "How many orders per status?");
    expect(out.error).toBeUndefined();
    expect(h.model.calls.length).toBeLessThanOrEqual(3);
    expect(toolCallsOf(h)).toEqual(["describe_table", "bq_query"]);
    const result = out.custom.find((e) => e.type === "result");
    expect(result).toMatchObject({ type: "result", sql: COUNT_SQL, totalRows: 5 });
    // The generator wrote its answer from the verified result.
    expect(h.model.callsBy("generator")[0].request.system).toContain("SQL: " + COUNT_SQL);
    expect(out.custom.some((e) => e.type === "retry")).toBe(false);
    const state = await h.graph.getState({ configurable: { thread_id: "t-one" } });
    expect(state.values.finalAnswer).toBe("Orders by status are in the table.");
  });
});

describe("an unknown column", () => {
  it("re-plans with the engine's suggestion and answers with corrected SQL", async () => {
    const h = await harness(
      byRole({
        planner: [
          { toolCalls: [{ name: "bq_query", args: { sql: "SELECT prodct_id FROM shop.products LIMIT 3" } }] },
          {
            toolCalls: [{ name: "bq_query", args: { sql: "SELECT product_id FROM shop.products LIMIT 3" } }],
          },
        ],
        generator: [{ text: "Three product ids." }],
      }),
    );
    const out = await runTurn(h, "t-dym", "Show three product ids");
    expect(out.error).toBeUndefined();
    const retry = out.custom.find((e) => e.type === "retry");
    expect(retry).toMatchObject({ attempt: 1, maxRetries: 2 });
    expect(retry && retry.type === "retry" && retry.reason).toMatch(
      /prodct_id does not exist; the engine suggests product_id/,
    );
    // The second planner call got the refinement and the failed tool message.
    const second = h.model.callsBy("planner")[1].request;
    expect(second.system).toContain("Rewrite the SQL using product_id");
    expect(second.turns.some((t) => t.role === "tool" && t.text.startsWith("Error (invalid_query)"))).toBe(
      true,
    );
    expect(out.custom.filter((e) => e.type === "result")).toHaveLength(1);
    expect(out.custom.find((e) => e.type === "tool_error")).toMatchObject({
      tool: "bq_query",
      category: "invalid_query",
    });
    expect(h.model.calls).toHaveLength(3);
  });
});

describe("an empty result", () => {
  it("re-plans with a refinement, then answers", async () => {
    const h = await harness(
      byRole({
        planner: [
          {
            toolCalls: [
              {
                name: "bq_query",
                args: { sql: "SELECT order_id FROM shop.orders WHERE status = 'Delivered'" },
              },
            ],
          },
          {
            toolCalls: [
              {
                name: "bq_query",
                args: { sql: "SELECT COUNT(*) AS n FROM shop.orders WHERE status = 'delivered'" },
              },
            ],
          },
        ],
        generator: [{ text: "Delivered orders counted." }],
      }),
    );
    const out = await runTurn(h, "t-empty", "How many delivered orders?");
    expect(out.error).toBeUndefined();
    const retries = out.custom.filter((e) => e.type === "retry");
    expect(retries).toHaveLength(1);
    expect(h.model.callsBy("planner")[1].request.system).toMatch(/returned no rows[\s\S]*DISTINCT/);
    expect(
      out.custom.filter((e) => e.type === "result").map((e) => e.type === "result" && e.totalRows),
    ).toEqual([0, 1]);
    expect(h.model.callsBy("generator")[0].request.system).not.toContain("could not be retrieved");
  });

  it("gives an honest answer naming what failed when retries run out", async () => {
    const emptySql = "SELECT order_id FROM shop.orders WHERE channel = 'fax'";
    const h = await harness(
      byRole({
        planner: [{ toolCalls: [{ name: "bq_query", args: { sql: emptySql } }] }],
        generator: [{ text: "I could not find orders placed by fax." }],
      }),
    );
    const out = await runTurn(h, "t-exhausted", "How many orders came by fax?");
    expect(out.error).toBeUndefined();
    expect(out.custom.filter((e) => e.type === "retry").map((e) => e.type === "retry" && e.attempt)).toEqual([
      1, 2,
    ]);
    expect(h.model.callsBy("planner")).toHaveLength(3);
    const prompt = h.model.callsBy("generator")[0].request.system;
    expect(prompt).toContain("The data could not be retrieved: after 2 retries, the query");
    expect(prompt).toContain("channel = 'fax'");
    expect(prompt).toContain("returned no rows");
  });
});

describe("the optional adequacy check", () => {
  it("asks the model (out of the token stream) and re-plans when the result does not answer", async () => {
    const h = await harness(
      byRole({
        planner: [
          { toolCalls: [{ name: "bq_query", args: { sql: "SELECT COUNT(*) AS n FROM shop.customers" } }] },
          { toolCalls: [{ name: "bq_query", args: { sql: "SELECT COUNT(*) AS n FROM shop.orders" } }] },
        ],
        verifier: [{ text: "NO, this counts customers, not orders." }, { text: "YES" }],
        generator: [{ text: "There are many orders." }],
      }),
      { env: { QUARRY_ADEQUACY_CHECK: "true" } },
    );
    const out = await runTurn(h, "t-adequacy", "How many orders?");
    expect(out.error).toBeUndefined();
    expect(h.model.calls.map((c) => c.request.role)).toEqual([
      "planner",
      "verifier",
      "planner",
      "verifier",
      "generator",
    ]);
    const retry = out.custom.find((e) => e.type === "retry");
    expect(retry?.type === "retry" && retry.reason).toBe(
      "The result does not answer the question: this counts customers, not orders.",
    );
    for (const c of h.model.calls.filter((c) => c.request.role !== "generator")) {
      expect(c.tags).toContain("langsmith:nostream");
    }
    expect(h.model.callsBy("generator")[0].tags).not.toContain("langsmith:nostream");
  });
});

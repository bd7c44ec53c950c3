/**
 * Fan-out along declared joins: the check on its own, then a turn through the real graph
 * (scripted model, real DuckDB with the jaffle-shop marts and their dbt import) whose first query
 * sums orders' cost across order items: the verifier sends the planner back saying why, and the
 * second query's numbers are right.
 */
import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KnowledgeBase } from "../../../functions/src/context";
import type { DeclaredJoin } from "../../../functions/src/context/catalog";
import { fanOuts } from "../../../functions/src/context/fan-out";
import { closeWarehouses, getWarehouse } from "../../../functions/src/tools";
import { FULL_SCOPE } from "../../../functions/src/tools/scope";
import { byRole } from "../../support/scripted-model-script";
import { harness, runTurn, testConfig } from "../agent/harness";
import { importedJaffle, jaffleFiles } from "./jaffle";

const ITEMS_TO_ORDERS: DeclaredJoin = {
  from: { table: "jaffle.order_items", column: "order_id" },
  to: { table: "jaffle.orders", column: "order_id" },
  cardinality: "many_to_one",
};
const FANNED =
  "SELECT SUM(i.product_price) - SUM(o.order_cost) AS profit FROM jaffle.order_items i JOIN jaffle.orders o USING (order_id)";

describe("fanOuts", () => {
  it("finds a sum of the one side across a many-to-one join", () => {
    expect(fanOuts(FANNED, [ITEMS_TO_ORDERS]).map((f) => [f.aggregate, f.table, f.by])).toEqual([
      ["SUM(o.order_cost)", "jaffle.orders", "jaffle.order_items"],
    ]);
    // The same read as one_to_many from the other end.
    const reversed: DeclaredJoin = {
      from: ITEMS_TO_ORDERS.to,
      to: ITEMS_TO_ORDERS.from,
      cardinality: "one_to_many",
    };
    expect(fanOuts(FANNED, [reversed])).toHaveLength(1);
  });

  it("does not judge what is fine or what it cannot read", () => {
    const ok = [
      // Summing the many side is what the join is for.
      "SELECT o.location_id, SUM(i.product_price) FROM jaffle.order_items AS i LEFT JOIN jaffle.orders AS o ON o.order_id = i.order_id GROUP BY 1",
      // DISTINCT counts do not repeat.
      "SELECT COUNT(DISTINCT o.order_id) FROM jaffle.order_items i JOIN jaffle.orders o USING (order_id)",
      // Aggregated apart first.
      "SELECT SUM(x.p) - SUM(o.order_cost) FROM (SELECT order_id, SUM(product_price) p FROM jaffle.order_items GROUP BY 1) x JOIN jaffle.orders o USING (order_id)",
      // One table.
      "SELECT SUM(o.order_cost) FROM jaffle.orders o",
    ];
    for (const sql of ok) expect(fanOuts(sql, [ITEMS_TO_ORDERS]), sql).toEqual([]);
    expect(fanOuts(FANNED, [])).toEqual([]);
    expect(fanOuts(FANNED, [{ ...ITEMS_TO_ORDERS, cardinality: "one_to_one" }])).toEqual([]);
  });
});

describe("the verifier catches a fan-out across an imported join", () => {
  let dir: string;
  let knowledge: KnowledgeBase;
  beforeAll(async () => {
    ({ knowledge, dir } = await importedJaffle());
  }, 60_000);
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await closeWarehouses();
  });

  it("replans with the reason, and the second query's total is the right one", async () => {
    const right =
      "SELECT (SELECT SUM(product_price) FROM jaffle.order_items) - (SELECT SUM(order_cost) FROM jaffle.orders) AS profit";
    const h = await harness(
      byRole({
        planner: [
          { toolCalls: [{ name: "bq_query", args: { sql: FANNED } }] },
          { toolCalls: [{ name: "bq_query", args: { sql: right } }] },
          { text: "Done." },
        ],
        generator: [{ text: "Gross profit is shown above." }],
      }),
      { env: { QUARRY_DUCKDB_FILES: jaffleFiles() }, knowledge },
    );
    const out = await runTurn(h, "t-fan", "What is the gross profit on orders?");
    expect(out.error).toBeUndefined();
    const retries = out.custom.filter((e) => e.type === "retry");
    expect(retries).toHaveLength(1);
    expect(retries[0]).toMatchObject({
      attempt: 1,
      reason: expect.stringMatching(
        /^SUM\(o\.order_cost\) counts each row of jaffle\.orders once per matching row of jaffle\.order_items \(the team declares jaffle\.order_items\.order_id → jaffle\.orders\.order_id as many to one\)/,
      ),
    });
    expect(
      h.model.callsBy("planner")[1].request.system + JSON.stringify(h.model.callsBy("planner")[1].request),
    ).toContain("counts each row of jaffle.orders");
    const results = out.custom.filter((e) => e.type === "result") as { rows: Record<string, unknown>[] }[];
    const warehouse = await getWarehouse(testConfig({ QUARRY_DUCKDB_FILES: jaffleFiles() }).warehouse);
    const want = (
      await warehouse.query(right, {
        userId: "t",
        threadId: "t",
        runId: "t",
        bytesBilledSoFar: 0,
        scope: FULL_SCOPE,
      })
    ).rows[0];
    expect(Number(results.at(-1)!.rows[0].profit)).toBeCloseTo(Number(want.profit), 6);
    expect(Number(results[0].rows[0].profit)).not.toBeCloseTo(Number(want.profit), 2);
  });
});

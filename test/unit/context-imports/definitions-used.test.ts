/**
 * An answer names the team's definitions its SQL used: the matcher on its own, then whole turns
 * through the real graph (scripted model, real DuckDB with the jaffle-shop marts, the dbt import
 * active): a `definitions` event and the answer message's `quarry_definitions`, or nothing.
 */
import { rmSync } from "node:fs";
import { AIMessage } from "@langchain/core/messages";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KnowledgeBase } from "../../../functions/src/context";
import { definitionsUsed } from "../../../functions/src/context/definitions";
import type { GlossaryItem } from "../../../functions/src/context/authored";
import { closeWarehouses } from "../../../functions/src/tools";
import { byRole } from "../../support/scripted-model-script";
import { harness, runTurn } from "../agent/harness";
import { importedJaffle, jaffleFiles } from "./jaffle";

const dbt = { source: "dbt" as const, file: "models/marts/order_items.yml", approved: false };
const term = (name: string, sql: string): GlossaryItem => ({
  term: name,
  synonyms: [],
  meaning: "",
  sql,
  origin: dbt,
});

describe("definitionsUsed", () => {
  const revenue = term("revenue", "SELECT SUM(product_price) AS revenue FROM jaffle.order_items");
  const share = term(
    "food revenue pct",
    "SELECT CAST(food_revenue AS DOUBLE) / NULLIF(revenue, 0) AS food_revenue_pct FROM (SELECT SUM(CASE WHEN is_food_item THEN product_price ELSE 0 END) AS food_revenue FROM jaffle.order_items) AS i0 CROSS JOIN (SELECT SUM(product_price) AS revenue FROM jaffle.order_items) AS i1",
  );

  it("finds a definition whose aggregates and tables the SQL that ran contains, qualifiers and case aside", () => {
    const ran = [
      'select date_trunc(\'month\', oi.ordered_at) m, sum( oi."product_price" ) from "jaffle"."order_items" oi group by 1',
    ];
    expect(definitionsUsed([revenue, share], ran)).toEqual([{ name: "revenue", ...dbt }]);
  });

  it("needs every aggregate of a ratio, and the definition's table", () => {
    const both =
      "SELECT SUM(CASE WHEN is_food_item THEN product_price ELSE 0 END) / SUM(product_price) FROM jaffle.order_items";
    expect(definitionsUsed([share], [both]).map((d) => d.name)).toEqual(["food revenue pct"]);
    expect(definitionsUsed([revenue], ["SELECT SUM(product_price) FROM shop.order_items"])).toEqual([]);
    expect(definitionsUsed([revenue], ["SELECT AVG(product_price) FROM jaffle.order_items"])).toEqual([]);
  });

  it("names nothing of a term without SQL or without a known origin", () => {
    const { origin: _o, ...bare } = revenue;
    expect(definitionsUsed([bare], ["SELECT SUM(product_price) FROM jaffle.order_items"])).toEqual([]);
  });
});

describe("a turn that used an imported metric names it", () => {
  let dir: string;
  let knowledge: KnowledgeBase;
  beforeAll(async () => {
    ({ knowledge, dir } = await importedJaffle());
  }, 60_000);
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await closeWarehouses();
  });

  async function turn(sql: string, thread: string) {
    const h = await harness(
      byRole({
        planner: [{ toolCalls: [{ name: "bq_query", args: { sql } }] }, { text: "Done." }],
        generator: [{ text: "Food brought most of the revenue." }],
      }),
      { env: { QUARRY_DUCKDB_FILES: jaffleFiles() }, knowledge },
    );
    const out = await runTurn(h, thread, "What was food revenue?");
    expect(out.error).toBeUndefined();
    const state = await h.graph.getState({ configurable: { thread_id: thread } });
    return { out, last: state.values.messages.at(-1) as AIMessage, h };
  }

  it("sends a definitions event and keeps it on the answer", async () => {
    const { out, last, h } = await turn(
      "SELECT SUM(CASE WHEN oi.is_food_item IS TRUE THEN oi.product_price ELSE 0 END) AS food FROM jaffle.order_items oi",
      "t-defs",
    );
    // The imported term reached the planner's prompt with its SQL.
    expect(h.model.callsBy("planner")[0].request.system).toMatch(
      /food revenue: .*Computed as: SELECT SUM\(case when is_food_item is true then product_price/,
    );
    const expected = [{ name: "food revenue", ...dbt }];
    expect(out.custom.filter((e) => e.type === "definitions")).toEqual([
      { type: "definitions", definitions: expected },
    ]);
    expect(last.response_metadata.quarry_definitions).toEqual(expected);
  });

  it("names nothing when the SQL computed something else", async () => {
    const { out, last } = await turn(
      "SELECT COUNT(*) AS n FROM jaffle.order_items WHERE is_food_item",
      "t-none",
    );
    expect(out.custom.some((e) => e.type === "definitions")).toBe(false);
    expect(last.response_metadata.quarry_definitions).toBeUndefined();
  });
});

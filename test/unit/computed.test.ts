/**
 * "How this was computed": the facts of an answer derived from the SQL that ran and the facts the
 * planner stated (context/computed.ts), each claim checked against the SQL; then turns through the
 * real graph (scripted model, real DuckDB, the sample's own context file): a verified query is
 * marked verified and named, an answer built only from an approved definition too, a written one
 * is not, and a stated time range the SQL does not contain sends the planner back with the reason.
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AIMessage } from "@langchain/core/messages";
import { loadKnowledge, type KnowledgeBase } from "../../functions/src/context";
import {
  computedFacts,
  statedFacts,
  tablesRead,
  unsupportedFacts,
} from "../../functions/src/context/computed";
import type { ComputedFacts } from "../../functions/src/contract/events";
import { closeWarehouses, getWarehouse } from "../../functions/src/tools";
import { byRole } from "../support/scripted-model-script";
import { harness, runTurn, testConfig } from "./agent/harness";

const REVENUE = {
  term: "revenue",
  sql: "SUM(oi.line_total) FROM shop.order_items oi JOIN shop.orders o ON o.order_id = oi.order_id WHERE o.status NOT IN ('cancelled', 'returned')",
  origin: { source: "authored" as const, approved: true, file: "shop.yaml" },
};
const REVENUE_2025 =
  "SELECT ROUND(SUM(oi.line_total), 2) AS revenue FROM shop.order_items oi JOIN shop.orders o ON o.order_id = oi.order_id " +
  "WHERE o.status NOT IN ('cancelled', 'returned') AND o.order_date >= DATE '2025-01-01' AND o.order_date < DATE '2026-01-01'";

describe("the stated facts, checked against the SQL", () => {
  it("reads the tool call's facts as the contract's", () => {
    expect(
      statedFacts({
        sql: "x",
        facts: { time_range: { from: "2025-01-01" }, grain: "month", filters: [], definitions: ["revenue"] },
      }),
    ).toEqual({ timeRange: { from: "2025-01-01" }, grain: "month", definitions: ["revenue"] });
    expect(statedFacts({ sql: "x" })).toBeUndefined();
  });

  it("holds what the SQL does, and names each claim it does not", () => {
    const stated = {
      timeRange: { from: "2025-01-01", to: "2026-01-01" },
      filters: [{ column: "o.status", values: ["cancelled", "returned"] }],
      definitions: ["revenue"],
    };
    expect(unsupportedFacts(stated, REVENUE_2025, [REVENUE])).toEqual([]);
    // A year's bound may be written as the year itself.
    expect(
      unsupportedFacts(
        { timeRange: { from: "2025-01-01", to: "2025-12-31" } },
        "SELECT SUM(line_total) FROM shop.order_items WHERE year(order_date) = 2025",
        [],
      ),
    ).toEqual([]);
    expect(unsupportedFacts({ timeRange: { from: "2024-01-01" } }, REVENUE_2025, [])).toEqual([
      "the time range says from 2024-01-01, but the SQL has no such bound",
    ]);
    expect(unsupportedFacts({ filters: [{ column: "channel", values: ["web"] }] }, REVENUE_2025, [])).toEqual(
      ["the filter on channel is not in the SQL", "the filter channel = web is not in the SQL"],
    );
    expect(unsupportedFacts({ definitions: ["churn"] }, REVENUE_2025, [REVENUE])).toEqual([
      'the definition "churn" is not one the team\'s context gives for this question',
    ]);
    expect(
      unsupportedFacts({ definitions: ["revenue"] }, "SELECT SUM(oi.quantity) FROM shop.order_items oi", [
        REVENUE,
      ]),
    ).toEqual([expect.stringMatching(/^the SQL does not compute "revenue" as the team defines it/)]);
  });

  it("reads the tables a query reads, without its own CTEs", () => {
    expect(
      tablesRead(
        "WITH y AS (SELECT * FROM shop.orders), z AS (SELECT 1 FROM y) SELECT * FROM y JOIN `shop.customers` c ON true JOIN z ON true",
      ),
    ).toEqual(["shop.orders", "shop.customers"]);
  });
});

describe("the answer's facts", () => {
  const ran = (sql: string, extra = {}) => ({ sql, truncated: false, totalRows: 1, ...extra });

  it("is verified by a verified query whatever its spacing and case, else written", () => {
    const verified = [{ question: "Revenue in 2025?", sql: REVENUE_2025 }];
    const respaced = REVENUE_2025.replaceAll(" ", "\n  ").replace("SELECT", "select");
    expect(computedFacts([ran(respaced)], [], verified).verification).toEqual({
      status: "verified",
      by: "verified_query",
      names: ["Revenue in 2025?"],
    });
    expect(computedFacts([ran(`${REVENUE_2025} AND o.channel = 'web'`)], [], verified).verification).toEqual({
      status: "written",
    });
  });

  it("is verified by approved definitions only when every aggregate is one, and never by an unreviewed import", () => {
    expect(computedFacts([ran(REVENUE_2025)], [REVENUE], []).verification).toEqual({
      status: "verified",
      by: "definitions",
      names: ["revenue"],
    });
    const withCount = REVENUE_2025.replace("AS revenue", "AS revenue, COUNT(*) AS lines");
    expect(computedFacts([ran(withCount)], [REVENUE], []).verification.status).toBe("written");
    const imported = { ...REVENUE, origin: { source: "dbt" as const, approved: false } };
    const facts = computedFacts([ran(REVENUE_2025)], [imported], []);
    expect(facts.verification.status).toBe("written");
    expect(facts.definitions).toEqual([{ name: "revenue", source: "dbt", approved: false }]);
  });

  it("shows only facts the SQL bears out, the tables, and rows cut as a caveat", () => {
    const good = {
      timeRange: { from: "2025-01-01", to: "2026-01-01" },
      grain: "year" as const,
      caveats: ["In euros."],
    };
    const facts = computedFacts(
      [ran(REVENUE_2025, { stated: good, truncated: true, totalRows: 5000 })],
      [REVENUE],
      [],
    );
    expect(facts).toMatchObject({
      tables: ["shop.order_items", "shop.orders"],
      timeRange: good.timeRange,
      grain: "year",
      caveats: ["Only the first rows of 5000 are shown and were read.", "In euros."],
      sql: [REVENUE_2025],
    });
    const wrong = computedFacts(
      [ran(REVENUE_2025, { stated: { timeRange: { from: "2019-01-01" } } })],
      [],
      [],
    );
    expect(wrong.timeRange).toBeUndefined();
  });
});

describe("through the graph", () => {
  let knowledge: KnowledgeBase;
  beforeAll(async () => {
    const warehouse = await getWarehouse(testConfig().warehouse);
    ({ knowledge } = await loadKnowledge(path.resolve(__dirname, "../../functions/context"), warehouse, {
      strict: true,
    }));
  }, 60_000);
  afterAll(() => closeWarehouses());

  const computedOf = (out: Awaited<ReturnType<typeof runTurn>>) => {
    const ev = out.custom.find((e) => e.type === "computed") as { computed: ComputedFacts } | undefined;
    const last = out.values.at(-1)!.messages as AIMessage[];
    return { event: ev?.computed, stored: last.at(-1)!.response_metadata.quarry_computed as ComputedFacts };
  };

  it("marks an answer whose SQL is the context's verified query as verified, naming it", async () => {
    const verifiedSql = knowledge.forQuestion("What was revenue by month in 2025?").examples[0].sql;
    const h = await harness(
      byRole({
        planner: [
          { toolCalls: [{ name: "bq_query", args: { sql: verifiedSql.replace(/\s+/g, " ") } }] },
          { text: "Done." },
        ],
        generator: [{ text: "Revenue by month is above." }],
      }),
      { knowledge },
    );
    const { event, stored } = computedOf(
      await runTurn(h, "t-verified", "What was revenue by month in 2025?"),
    );
    expect(event?.verification).toEqual({
      status: "verified",
      by: "verified_query",
      names: ["What was revenue by month in 2025?"],
    });
    expect(stored).toEqual(event);
  });

  it("an answer built only from the approved definition of revenue is verified by it; another is written", async () => {
    const h = await harness(
      byRole({
        planner: [
          {
            toolCalls: [
              {
                name: "bq_query",
                args: {
                  sql: REVENUE_2025,
                  facts: { definitions: ["revenue"], time_range: { from: "2025-01-01", to: "2026-01-01" } },
                },
              },
            ],
          },
          { text: "Done." },
        ],
        generator: [{ text: "Revenue in 2025 is above." }],
      }),
      { knowledge },
    );
    const first = computedOf(await runTurn(h, "t-def", "What was revenue in 2025?")).event!;
    expect(first.verification).toEqual({ status: "verified", by: "definitions", names: ["revenue"] });
    expect(first.definitions).toEqual([
      { name: "revenue", source: "authored", file: expect.stringMatching(/shop\.yaml$/), approved: true },
    ]);
    expect(first.timeRange).toEqual({ from: "2025-01-01", to: "2026-01-01" });
    const counting = await harness(
      byRole({
        planner: [
          { toolCalls: [{ name: "bq_query", args: { sql: "SELECT COUNT(*) AS orders FROM shop.orders" } }] },
          { text: "Done." },
        ],
        generator: [{ text: "The count is above." }],
      }),
      { knowledge },
    );
    const second = computedOf(await runTurn(counting, "t-count", "How many orders are there?")).event!;
    expect(second.verification).toEqual({ status: "written" });
    expect(second.tables).toEqual(["shop.orders"]);
  });

  it("sends the planner back when a stated time range is not in the SQL, then shows the corrected one", async () => {
    const h = await harness(
      byRole({
        planner: [
          {
            toolCalls: [
              {
                name: "bq_query",
                args: { sql: REVENUE_2025, facts: { time_range: { from: "2024-01-01", to: "2025-01-01" } } },
              },
            ],
          },
          {
            toolCalls: [
              {
                name: "bq_query",
                args: { sql: REVENUE_2025, facts: { time_range: { from: "2025-01-01", to: "2026-01-01" } } },
              },
            ],
          },
          { text: "Done." },
        ],
        generator: [{ text: "Revenue in 2025 is above." }],
      }),
      { knowledge },
    );
    const out = await runTurn(h, "t-range", "What was revenue in 2025?");
    const retries = out.custom.filter((e) => e.type === "retry") as { reason: string }[];
    expect(retries).toHaveLength(1);
    expect(retries[0].reason).toMatch(/the time range says from 2024-01-01, but the SQL has no such bound/);
    expect(computedOf(out).event!.timeRange).toEqual({ from: "2025-01-01", to: "2026-01-01" });
  });
});

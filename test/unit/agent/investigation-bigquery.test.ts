/**
 * An investigation's byte budget on BigQuery (the real client against the REST stand-in): a step
 * whose dry run does not fit what is left of the budget is refused by the gate before its job is
 * inserted — it never runs — and the report is partial and says so. The steps' SQL is GoogleSQL.
 */
import { Command } from "@langchain/langgraph";
import { HumanMessage } from "@langchain/core/messages";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readConfig } from "../../../functions/src/config";
import type { InvestigationReport, StepOutcome } from "../../../functions/src/contract/investigations";
import { BigQueryWarehouse } from "../../../functions/src/tools/bigquery/warehouse";
import { createWarehouseTools } from "../../../functions/src/tools/model-tools";
import { BigQueryStandin } from "../../support/bigquery-standin";
import { PLANTED_PLAN, investigationScript } from "../../support/investigation-script";
import { personConfig } from "../../support/person";
import { smartScript } from "../../support/scripted-model-script";
import { harness } from "./harness";

const P = "demo-bq";
const sales = { projectId: P, datasetId: "retail", tableId: "sales" };
const MB = 1_000_000;
const FEB = { from: "2025-02-01", to: "2025-03-01" };
const MAR = { from: "2025-03-01", to: "2025-04-01" };
const HISTORY = { from: "2024-12-01", to: "2025-03-01" };
const standin = new BigQueryStandin();
let env: Record<string, string> = {};

beforeAll(async () => {
  const host = (await standin.start()).replace("http://", "");
  env = {
    GOOGLE_CLOUD_PROJECT: P,
    QUARRY_WAREHOUSE: "bigquery",
    QUARRY_BQ_DATASETS: "retail",
    QUARRY_MAX_BYTES_PER_QUERY: String(500 * MB),
    QUARRY_MAX_BYTES_PER_THREAD: String(2000 * MB),
    BIGQUERY_EMULATOR_HOST: host,
    QUARRY_INVESTIGATION_BYTES: String(150 * MB),
    QUARRY_INVESTIGATION_PARALLEL: "1",
  };
  standin.addTable({
    ...sales,
    fields: [
      { name: "sale_date", type: "DATE" },
      { name: "region", type: "STRING" },
      { name: "channel", type: "STRING" },
      { name: "revenue", type: "FLOAT" },
    ],
    rows: [],
  });
  const num = (name: string) => ({ name, type: "FLOAT" });
  standin.onQuery({
    match: (sql) => sql.includes("CROSS JOIN"),
    totalBytesProcessed: 100 * MB,
    referencedTables: [sales],
    fields: ["base_value", "current_value", "change", "change_pct"].map(num),
    rows: [[1000, 700, -300, -0.3]],
  });
  standin.onQuery({
    match: (sql) => sql.includes("FULL OUTER JOIN"),
    totalBytesProcessed: 100 * MB,
    referencedTables: [sales],
    fields: [{ name: "region", type: "STRING" }, ...["base_value", "current_value", "change"].map(num)],
    rows: [["south", 400, 50, -350]],
  });
  const str = (name: string) => ({ name, type: "STRING" });
  // What BigQuery answers for its own functions (the stand-in scripts the rows; the SQL is Quarry's).
  standin.onQuery({
    match: (sql) => sql.includes("AI.KEY_DRIVERS("),
    totalBytesProcessed: 20 * MB,
    referencedTables: [sales],
    fields: [
      str("segment"),
      ...["base_value", "current_value", "change", "unexpected_change", "support"].map(num),
    ],
    rows: [
      ["all", 10000, 8800, -1200, 0, 1],
      ["region=south, channel=marketplace", 1500, 180, -1320, -1140, 0.09],
      ["channel=marketplace", 3000, 1900, -1100, -740, 0.26],
    ],
  });
  standin.onQuery({
    match: (sql) => sql.includes("AI.FORECAST("),
    totalBytesProcessed: 20 * MB,
    referencedTables: [sales],
    fields: [{ name: "period", type: "DATE" }, ...["value", "lower_bound", "upper_bound"].map(num)],
    rows: [["2025-03-01", 10150, 9700, 10600]],
  });
});
afterAll(() => standin.stop());

/** The real BigQuery warehouse over the stand-in, its tools and dry run given to the graph. */
async function investigating(settings: Record<string, string>) {
  const warehouse = await BigQueryWarehouse.create(readConfig(settings).warehouse, {
    retry: { attempts: 1, baseDelayMs: 1 },
  });
  const h = await harness(investigationScript(smartScript()), {
    env: settings,
    tools: createWarehouseTools(warehouse),
    dryRun: (sql, ctx) => warehouse.dryRun(sql, ctx),
  });
  return { warehouse, h };
}

describe("an investigation's byte budget on BigQuery", () => {
  it("never runs a step whose dry run does not fit what is left, and reports what was not done", async () => {
    const { warehouse, h } = await investigating(env);
    const config = {
      configurable: { thread_id: "inv-bq", user_id: "user-1", run_id: "run-bq", ...personConfig() },
    };
    const q = new HumanMessage("Why did revenue fall in March 2025? [investigation:good]");
    await h.graph.invoke({ messages: [q], investigate: true }, config);
    await h.graph.invoke(new Command({ resume: '{"drop": [3, 4]}' }), config);

    const jobs = standin.inserts().filter((b) => !b.configuration.dryRun);
    const dryRuns = standin.inserts().filter((b) => b.configuration.dryRun);
    expect(dryRuns.length).toBeGreaterThanOrEqual(2); // both steps were dry-run (each reserves first) …
    expect(jobs).toHaveLength(1); // … only the first fit the budget and ran
    expect(String(jobs[0].configuration.query.query)).toContain("FROM `retail.sales`");
    expect(Number(jobs[0].configuration.query.maximumBytesBilled)).toBeLessThanOrEqual(150 * MB);

    const state = await h.graph.getState(config);
    const inv = state.values.investigation as { outcomes: StepOutcome[]; report: InvestigationReport };
    expect(inv.outcomes.map((o) => o.status)).toEqual(["done", "skipped"]);
    expect(inv.outcomes[1].reason).toMatch(
      /^not run, over a byte budget \(the investigation had 50,000,000 of its 150,000,000 bytes left\)/,
    );
    expect(inv.report.notDone).toEqual([
      { id: 2, title: "Which region and channel changed", reason: inv.outcomes[1].reason },
    ]);
    expect(inv.report.markdown).toContain("**Partial report:** 1 of 2 planned steps were not done");
    await warehouse.close();
  });

  it("runs drivers and forecast steps as BigQuery's AI.KEY_DRIVERS and AI.FORECAST, through the same gate", async () => {
    const { warehouse, h } = await investigating(env);
    const before = standin.inserts().length;
    const config = {
      configurable: { thread_id: "inv-bq-ai", user_id: "user-1", run_id: "run-bq-ai", ...personConfig() },
    };
    const q = new HumanMessage("Why did revenue fall in March 2025? [investigation:good]");
    await h.graph.invoke({ messages: [q], investigate: true }, config);
    const plan = {
      ...PLANTED_PLAN,
      metric: { ...PLANTED_PLAN.metric, table: "retail.sales" },
      steps: [
        {
          id: 1,
          kind: "drivers",
          title: "What drove it",
          base: FEB,
          current: MAR,
          dimensions: ["region", "channel"],
        },
        {
          id: 2,
          kind: "forecast",
          title: "What March should have been",
          range: HISTORY,
          grain: "month",
          horizon: 1,
        },
      ],
    };
    await h.graph.invoke(new Command({ resume: JSON.stringify({ plan }) }), config);

    const sent = standin.inserts().slice(before);
    const jobs = sent.filter((b) => !b.configuration.dryRun).map((b) => String(b.configuration.query.query));
    expect(jobs).toHaveLength(2);
    const drivers = jobs.find((j) => j.includes("AI.KEY_DRIVERS("))!;
    expect(drivers).toContain(
      "FROM AI.KEY_DRIVERS((SELECT CAST(region AS STRING) AS region, CAST(channel AS STRING) AS channel, " +
        "revenue AS metric, (CAST(sale_date AS DATE) >= DATE '2025-03-01' AND CAST(sale_date AS DATE) < DATE '2025-04-01') AS is_current FROM `retail.sales`",
    );
    expect(drivers).toContain(
      "metric_col => 'metric', dimension_cols => ['region', 'channel'], interest_label_col => 'is_current'",
    );
    const forecast = jobs.find((j) => j.includes("AI.FORECAST("))!;
    expect(forecast).toContain(
      "data_col => 'value', timestamp_col => 'period', horizon => 1, confidence_level => 0.9",
    );
    expect(forecast).toContain("DATE_TRUNC(CAST(sale_date AS DATE), MONTH)");

    const state = await h.graph.getState(config);
    const inv = state.values.investigation as { outcomes: StepOutcome[]; report: InvestigationReport };
    expect(inv.outcomes.map((o) => o.status)).toEqual(["done", "done"]);
    expect(inv.outcomes[0].rows![1].segment).toBe("region=south, channel=marketplace");
    expect(Number(inv.outcomes[1].rows![0].value)).toBe(10150);
    // The scripted writer cites the original plan's steps: refused, so Quarry wrote it from these rows.
    expect(inv.report.writtenBy).toBe("quarry");
    expect(inv.report.markdown).toContain("region=south, channel=marketplace");
    expect(inv.report.markdown).toMatch(/Forecast revenue for .*2025-03/);
    await warehouse.close();
  });

  it("holds the budget when steps run at once: what their jobs may bill together never passes it", async () => {
    // Two steps of 100 MB each (110 MB billable with BigQuery's 10 MB minimum), both started at
    // once under a 150 MB budget: each fits alone. Before reservations, both saw 150 MB left.
    const { warehouse, h } = await investigating({ ...env, QUARRY_INVESTIGATION_PARALLEL: "2" });
    const before = standin.inserts().filter((b) => !b.configuration.dryRun).length;
    const config = {
      configurable: { thread_id: "inv-bq-par", user_id: "user-1", run_id: "run-bq-par", ...personConfig() },
    };
    const q = new HumanMessage("Why did revenue fall in March 2025? [investigation:good]");
    await h.graph.invoke({ messages: [q], investigate: true }, config);
    await h.graph.invoke(new Command({ resume: '{"drop": [3, 4]}' }), config);

    const jobs = standin
      .inserts()
      .filter((b) => !b.configuration.dryRun)
      .slice(before);
    expect(jobs).toHaveLength(1);
    const capped = jobs.reduce((sum, b) => sum + Number(b.configuration.query.maximumBytesBilled), 0);
    expect(capped).toBeLessThanOrEqual(150 * MB);
    const state = await h.graph.getState(config);
    const inv = state.values.investigation as { outcomes: StepOutcome[] };
    expect(inv.outcomes.map((o) => o.status).sort()).toEqual(["done", "skipped"]);
    const skipped = inv.outcomes.find((o) => o.status === "skipped")!;
    expect(skipped.reason).toMatch(
      /^not run, over a byte budget \(the investigation had 39,514,240 of its 150,000,000 bytes left\): The query would process an estimated 100,000,000 bytes/,
    );
    expect(skipped.reason).toMatch(/this step may bill/);
    await warehouse.close();
  });
});

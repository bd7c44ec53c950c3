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
import { investigationScript } from "../../support/investigation-script";
import { personConfig } from "../../support/person";
import { smartScript } from "../../support/scripted-model-script";
import { harness } from "./harness";

const P = "demo-bq";
const sales = { projectId: P, datasetId: "retail", tableId: "sales" };
const MB = 1_000_000;
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
});
afterAll(() => standin.stop());

describe("an investigation's byte budget on BigQuery", () => {
  it("never runs a step whose dry run does not fit what is left, and reports what was not done", async () => {
    const cfg = readConfig(env);
    const warehouse = await BigQueryWarehouse.create(cfg.warehouse, {
      retry: { attempts: 1, baseDelayMs: 1 },
    });
    const h = await harness(investigationScript(smartScript()), {
      env,
      tools: createWarehouseTools(warehouse),
      dryRun: (sql, ctx) => warehouse.dryRun(sql, ctx),
    });
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

  it("holds the budget when steps run at once: what their jobs may bill together never passes it", async () => {
    // Two steps of 100 MB each (110 MB billable with BigQuery's 10 MB minimum), both started at
    // once under a 150 MB budget: each fits alone. Before reservations, both saw 150 MB left.
    const cfg = readConfig({ ...env, QUARRY_INVESTIGATION_PARALLEL: "2" });
    const warehouse = await BigQueryWarehouse.create(cfg.warehouse, {
      retry: { attempts: 1, baseDelayMs: 1 },
    });
    const h = await harness(investigationScript(smartScript()), {
      env: { ...env, QUARRY_INVESTIGATION_PARALLEL: "2" },
      tools: createWarehouseTools(warehouse),
      dryRun: (sql, ctx) => warehouse.dryRun(sql, ctx),
    });
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

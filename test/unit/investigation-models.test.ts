/**
 * The drivers and forecast steps as DuckDB runs them (agent/investigation/sql-models.ts), on the
 * planted-cause fixture, against figures computed here from the CSV itself: every segment's values
 * and change, the unexpected change that singles out the planted region and channel, the `all` row
 * equal to the comparison's change, and a forecast on the least-squares line through the history.
 */
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readConfig } from "../../functions/src/config";
import type { InvestigationPlan, PlanStep } from "../../functions/src/contract/investigations";
import { checkPlan } from "../../functions/src/agent/investigation/plan";
import { stepSql } from "../../functions/src/agent/investigation/sql";
import { DuckDbWarehouse } from "../../functions/src/tools/duckdb/warehouse";
import { FULL_SCOPE } from "../../functions/src/tools/scope";
import type { QueryContext } from "../../functions/src/tools/types";
import { PLANTED, PLANTED_PLAN, RETAIL_FILES, RETAIL_SALES_CSV } from "../support/investigation-script";

const ctx: QueryContext = { userId: "u", threadId: "t", runId: "r", bytesBilledSoFar: 0, scope: FULL_SCOPE };
const FEB = { from: "2025-02-01", to: "2025-03-01" };
const MAR = { from: "2025-03-01", to: "2025-04-01" };

interface Sale {
  month: string;
  region: string;
  channel: string;
  revenue: number;
}
const sales: Sale[] = fs
  .readFileSync(RETAIL_SALES_CSV, "utf8")
  .trim()
  .split("\n")
  .slice(1)
  .map((line) => {
    const [date, region, channel, , revenue] = line.split(",");
    return { month: date.slice(0, 7), region, channel, revenue: Number(revenue) };
  });
const total = (month: string, keep: (s: Sale) => boolean = () => true) =>
  sales.filter((s) => s.month === month && keep(s)).reduce((sum, s) => sum + s.revenue, 0);

let wh: DuckDbWarehouse;
beforeAll(async () => {
  const cfg = readConfig({ GOOGLE_CLOUD_PROJECT: "demo-test", QUARRY_DUCKDB_FILES: RETAIL_FILES }).warehouse;
  wh = await DuckDbWarehouse.open(structuredClone(cfg));
}, 120_000);
afterAll(() => wh?.close());

async function run(step: PlanStep, plan: InvestigationPlan = PLANTED_PLAN) {
  const checked = checkPlan({ ...plan, steps: [step] }, 8);
  expect(checked).toMatchObject({ ok: true });
  return (await wh.query(stepSql(plan, step, "duckdb"), ctx)).rows;
}

describe("a drivers step on DuckDB", () => {
  const step: PlanStep = {
    id: 1,
    kind: "drivers",
    title: "What drove the change",
    base: FEB,
    current: MAR,
    dimensions: ["region", "channel"],
  };

  it("gives every segment, alone and combined, with the values and change the data has", async () => {
    const rows = await run(step);
    const regions = [...new Set(sales.map((s) => s.region))];
    const channels = [...new Set(sales.map((s) => s.channel))];
    // all + each region + each channel + each pair
    expect(rows).toHaveLength(1 + regions.length + channels.length + regions.length * channels.length);
    const all = rows.find((r) => r.segment === "all")!;
    expect(Number(all.base_value)).toBeCloseTo(total("2025-02"), 2);
    expect(Number(all.change)).toBeCloseTo(total("2025-03") - total("2025-02"), 2);
    const pair = rows.find((r) => r.segment === `region=${PLANTED.region}, channel=${PLANTED.channel}`)!;
    const planted = (s: Sale) => s.region === PLANTED.region && s.channel === PLANTED.channel;
    expect(Number(pair.base_value)).toBeCloseTo(total("2025-02", planted), 2);
    expect(Number(pair.current_value)).toBeCloseTo(total("2025-03", planted), 2);
    const web = rows.find((r) => r.segment === "channel=web")!;
    expect(Number(web.change)).toBeCloseTo(
      total("2025-03", (s) => s.channel === "web") - total("2025-02", (s) => s.channel === "web"),
      2,
    );
    // Largest changes first.
    const changes = rows.map((r) => Math.abs(Number(r.change)));
    expect(changes).toEqual([...changes].sort((a, b) => b - a));
  });

  it("singles out the planted segment by its change beyond what the overall change predicts", async () => {
    const rows = await run(step);
    const ratio = total("2025-03") / total("2025-02");
    const pairs = rows.filter((r) => String(r.segment).includes(", "));
    for (const r of pairs) {
      expect(Number(r.unexpected_change)).toBeCloseTo(
        Number(r.current_value) - Number(r.base_value) * ratio,
        6,
      );
    }
    const worst = pairs.reduce((a, b) => (Number(b.unexpected_change) < Number(a.unexpected_change) ? b : a));
    expect(worst.segment).toBe(`region=${PLANTED.region}, channel=${PLANTED.channel}`);
  });

  it("is refused in a plan whose metric is not summable", () => {
    const plan = { ...PLANTED_PLAN, metric: { ...PLANTED_PLAN.metric, expression: "AVG(revenue)" } };
    const checked = checkPlan({ ...plan, steps: [step] }, 8);
    expect(checked).toEqual({
      ok: false,
      errors: [expect.stringMatching(/^steps: a drivers step needs a summable metric/)],
    });
  });
});

describe("a forecast step on DuckDB", () => {
  it("continues the least-squares line through the monthly history, with a 90 % interval around it", async () => {
    const step: PlanStep = {
      id: 1,
      kind: "forecast",
      title: "What March should have been",
      range: { from: "2024-12-01", to: "2025-03-01" },
      grain: "month",
      horizon: 2,
    };
    const rows = await run(step);
    expect(rows.map((r) => String(r.period).slice(0, 10))).toEqual(["2025-03-01", "2025-04-01"]);
    const ys = ["2024-12", "2025-01", "2025-02"].map((m) => total(m));
    const mean = (v: number[]) => v.reduce((a, b) => a + b, 0) / v.length;
    const xs = [0, 1, 2];
    const slope =
      xs.reduce((a, x, i) => a + (x - mean(xs)) * (ys[i] - mean(ys)), 0) /
      xs.reduce((a, x) => a + (x - mean(xs)) ** 2, 0);
    const intercept = mean(ys) - slope * mean(xs);
    expect(Number(rows[0].value)).toBeCloseTo(intercept + slope * 3, 4);
    expect(Number(rows[1].value)).toBeCloseTo(intercept + slope * 4, 4);
    for (const r of rows) {
      expect(Number(r.lower_bound)).toBeLessThanOrEqual(Number(r.value));
      expect(Number(r.upper_bound)).toBeGreaterThanOrEqual(Number(r.value));
    }
    // March's actual revenue fell below what the history forecast.
    expect(total("2025-03")).toBeLessThan(Number(rows[0].lower_bound));
  });
});

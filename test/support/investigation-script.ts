/**
 * The model's side of an investigation, scripted: plans and reports over the planted-cause table
 * `retail.sales` (test/fixtures/retail-sales.csv: daily revenue by region and channel, Dec 2024 to
 * Mar 2025; in March the marketplace channel in the south region falls to about an eighth of
 * February's, and the total falls with it while every other segment grows a little).
 *
 * A question picks the script with "[investigation:<variant>]":
 * - planner variants: `bad-plan` (refused twice: no valid plan), `bad-plan-once` (refused, then
 *   fixed), anything else the planted plan;
 * - report variants: `good`; `typed` / `missing-step` / `uncited-cause` (refused twice: Quarry
 *   writes the report); `typed-once` (refused, then fixed).
 */
import path from "node:path";
import type { InvestigationPlan } from "../../functions/src/contract/investigations";
import { questionOf, type Script, type ScriptReply, type ScriptRequest } from "./scripted-model-script";

export const RETAIL_SALES_CSV = path.resolve(__dirname, "../fixtures/retail-sales.csv");
/** `QUARRY_DUCKDB_FILES` entry of the planted-cause table. */
export const RETAIL_FILES = `retail.sales=${RETAIL_SALES_CSV}`;
/** The fixture uploaded to a conversation as `sales.csv` (the integration stack has no `retail` dataset). */
export const UPLOADED_TABLE = "uploads.sales";
/** Where the planted cause is. */
export const PLANTED = { region: "south", channel: "marketplace" };

const FEB = { from: "2025-02-01", to: "2025-03-01" };
const MAR = { from: "2025-03-01", to: "2025-04-01" };

export const PLANTED_PLAN: InvestigationPlan = {
  question: "Why did revenue fall in March 2025 compared with February 2025?",
  hypotheses: ["one region fell", "one sales channel fell", "every segment fell a little"],
  metric: { name: "revenue", expression: "SUM(revenue)", table: "retail.sales", dateColumn: "sale_date" },
  steps: [
    { id: 1, kind: "compare", title: "Revenue in March against February", base: FEB, current: MAR },
    {
      id: 2,
      kind: "contribution",
      title: "Which region and channel changed",
      base: FEB,
      current: MAR,
      dimensions: ["region", "channel"],
    },
    { id: 3, kind: "breakdown", title: "Revenue by channel in March", period: MAR, dimensions: ["channel"] },
    {
      id: 4,
      kind: "trend",
      title: "Monthly revenue",
      range: { from: "2024-12-01", to: "2025-04-01" },
      grain: "month",
    },
  ],
};

const GOOD_REPORT = {
  title: "Why revenue fell in March",
  summary:
    "Revenue changed by {{s1.r1.change}} ({{s1.r1.change_pct}}), driven by {{s2.r1.channel}} in the " +
    "{{s2.r1.region}} region.",
  sections: [
    {
      heading: "March against February",
      text: "Revenue went from {{s1.r1.base_value}} in February to {{s1.r1.current_value}} in March.",
      steps: [1],
    },
    {
      heading: "One segment drove the fall",
      text:
        "The fall is driven by {{s2.r1.channel}} in {{s2.r1.region}}: {{s2.r1.change}}, " +
        "{{s2.r1.share_of_change}} of the total change. The next largest change was {{s2.r2.change}}.",
      steps: [2],
    },
  ],
};

/** The same report with a change each checker rule refuses. */
const BAD_REPORTS: Record<string, typeof GOOD_REPORT> = {
  typed: {
    ...GOOD_REPORT,
    sections: [
      { ...GOOD_REPORT.sections[0], text: "Revenue fell by 38,614.01 in March." },
      GOOD_REPORT.sections[1],
    ],
  },
  "missing-step": {
    ...GOOD_REPORT,
    sections: [...GOOD_REPORT.sections, { heading: "Forecast", text: "April: {{s9.r1.value}}.", steps: [9] }],
  },
  "uncited-cause": {
    ...GOOD_REPORT,
    sections: [
      { heading: "Customers left", text: "Revenue fell because customers left.", steps: [1] },
      GOOD_REPORT.sections[1],
    ],
  },
};
BAD_REPORTS["typed-once"] = BAD_REPORTS.typed;

const VARIANT = /\[investigation:([\w-]+)\]/;

/** The variant a question names ("good" when it names none). */
function variantOf(req: ScriptRequest): string {
  return VARIANT.exec(questionOf(req))?.[1] ?? "good";
}

/** The investigator's and the report writer's replies; undefined for any other role. */
export function investigationReply(req: ScriptRequest): ScriptReply | undefined {
  const usage = { input: 100, output: 50 };
  const variant = variantOf(req);
  const retried = /was refused/.test(req.system);
  if (req.role === "investigator") {
    const bad = variant === "bad-plan" || (variant === "bad-plan-once" && !retried);
    // The table as the prompt lists it: the fixture loaded as `retail.sales`, or uploaded as `uploads.sales`.
    const table = req.system.includes(UPLOADED_TABLE) ? UPLOADED_TABLE : PLANTED_PLAN.metric.table;
    const planted = { ...PLANTED_PLAN, metric: { ...PLANTED_PLAN.metric, table } };
    const plan = bad
      ? { ...planted, steps: planted.steps.map((s) => ({ ...s, kind: "anomalies" })) }
      : planted;
    return { toolCalls: [{ name: "submit_plan", args: plan as unknown as Record<string, unknown> }], usage };
  }
  if (req.role === "reporter") {
    const bad = BAD_REPORTS[variant];
    const report = bad && !(variant === "typed-once" && retried) ? bad : GOOD_REPORT;
    return {
      toolCalls: [{ name: "write_report", args: report as unknown as Record<string, unknown> }],
      usage,
    };
  }
  return undefined;
}

/** A script for investigations alone (unit tests), over any other script for the other roles. */
export function investigationScript(other?: Script): Script {
  return (req) => investigationReply(req) ?? other?.(req) ?? { text: "OK" };
}

/**
 * The two tools an investigation's model calls are bound to. They are never invoked: the nodes
 * read the call's arguments and check them (plan.ts, check.ts). Their schemas tell the model the
 * shape; the checks are stricter and say what to fix.
 */
import { tool, type StructuredToolInterface } from "@langchain/core/tools";
import { z } from "zod";

export const SUBMIT_PLAN = "submit_plan";
export const WRITE_REPORT = "write_report";

const period = z
  .object({ from: z.string(), to: z.string() })
  .describe('{"from": "YYYY-MM-DD", "to": exclusive}');

const PlanArgs = z.object({
  question: z.string(),
  hypotheses: z.array(z.string()),
  metric: z.object({
    name: z.string(),
    expression: z.string().describe("One SQL aggregate, e.g. SUM(revenue)."),
    table: z.string().describe("dataset.table"),
    dateColumn: z.string(),
    filter: z.string().optional(),
  }),
  steps: z.array(
    z.object({
      id: z.number().int(),
      title: z.string(),
      kind: z.enum(["compare", "breakdown", "contribution", "drivers", "trend", "forecast"]),
      base: period.optional().describe("compare, contribution, drivers"),
      current: period.optional().describe("compare, contribution, drivers"),
      period: period.optional().describe("breakdown"),
      range: period.optional().describe("trend, forecast: the history"),
      dimensions: z
        .array(z.string())
        .optional()
        .describe("breakdown, contribution: 1-2 columns; drivers: 1-4"),
      grain: z.enum(["day", "week", "month"]).optional().describe("trend, forecast"),
      horizon: z.number().int().optional().describe("forecast: periods ahead, 1-24"),
    }),
  ),
});

const ReportArgs = z.object({
  title: z.string(),
  summary: z.string(),
  sections: z.array(
    z.object({
      heading: z.string(),
      text: z.string().describe("Cite figures as {{s<step>.r<row>.<column>}}; never type a number."),
      steps: z.array(z.number().int()),
    }),
  ),
});

const unused = async () => {
  throw new Error("An investigation's tools are read by its nodes, not invoked.");
};

export const submitPlanTool = tool(unused, {
  name: SUBMIT_PLAN,
  description: "Submit the investigation's plan for the user to review.",
  schema: PlanArgs,
}) as unknown as StructuredToolInterface;

export const writeReportTool = tool(unused, {
  name: WRITE_REPORT,
  description: "Write the investigation's report; figures are cited cells, filled in by Quarry.",
  schema: ReportArgs,
}) as unknown as StructuredToolInterface;

/** The arguments of the reply's call to `name`, with null fields dropped (some models send them). */
export function callArgs(reply: { tool_calls?: { name: string; args: unknown }[] }, name: string): unknown {
  const call = reply.tool_calls?.find((c) => c.name === name);
  return call ? withoutNulls(call.args) : undefined;
}

function withoutNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutNulls);
  if (v && typeof v === "object") {
    return Object.fromEntries(
      Object.entries(v as Record<string, unknown>)
        .filter(([, x]) => x !== null)
        .map(([k, x]) => [k, withoutNulls(x)]),
    );
  }
  return v;
}

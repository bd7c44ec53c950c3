/**
 * The output schemas of Quarry's MCP tools (zod shapes the SDK turns into JSON Schema and checks
 * each tool's structured content against). They mirror `results.ts` and `data-tools.ts`.
 */
import { z } from "zod";

const json = z.unknown();
const column = z.object({ name: z.string(), type: z.string() }).loose();

const chartType = z.enum(["bar", "line", "scatter"]);

const chart = z
  .object({
    type: chartType.optional(),
    options: z.array(chartType),
    spec: z.record(z.string(), json).optional().describe("Vega-Lite v6 spec, its data inline"),
    reason: z.string().optional(),
  })
  .describe("The chart Quarry draws for these rows; no spec (and the reason) when none fits");

const rowsPreview = {
  sql: z.string(),
  columns: z.array(column),
  rows: z.array(z.record(z.string(), json)),
  shown: z.number().int(),
  total: z.number().int(),
  total_at_least: z.boolean(),
  note: z.string().describe('"N rows", or "N of M rows" when cut'),
  chart,
};

export const TablesOutputShape = {
  tables: z.array(
    z.object({ id: z.string(), description: z.string().optional(), rowCount: z.number().optional() }).loose(),
  ),
};

export const SchemaOutputShape = {
  id: z.string(),
  description: z.string().optional(),
  rowCount: z.number().optional(),
  columns: z.array(column),
  sampleRows: z.array(z.record(z.string(), json)),
};

export const SqlOutputShape = {
  ...rowsPreview,
  bytes_processed: z.number(),
  bytes_billed: z.number(),
  duration_ms: z.number(),
};

export const ContextOutputShape = {
  rules: z.array(z.string()),
  glossary: z.array(z.object({ term: z.string(), meaning: z.string(), sql: z.string().optional() })),
  verified_queries: z.array(z.object({ question: z.string(), sql: z.string() })),
};

/** "How this was computed" (contract ComputedFacts). */
const Computed = z.object({
  verification: z.object({
    status: z.enum(["verified", "written"]),
    by: z.enum(["verified_query", "definitions"]).optional(),
    names: z.array(z.string()).optional(),
  }),
  definitions: z.array(
    z.object({
      name: z.string(),
      source: z.enum(["authored", "dbt", "lookml"]),
      file: z.string().optional(),
      approved: z.boolean(),
    }),
  ),
  tables: z.array(z.string()),
  filters: z.array(z.object({ column: z.string(), values: z.array(z.string()) })),
  timeRange: z
    .object({ column: z.string().optional(), from: z.string().optional(), to: z.string().optional() })
    .optional(),
  grain: z.enum(["day", "week", "month", "quarter", "year"]).optional(),
  caveats: z.array(z.string()),
  sql: z.array(z.string()),
});

export const AskOutputShape = {
  thread_id: z.string().describe("Pass it to the next ask to continue this conversation"),
  status: z.enum(["answered", "asking", "stopped", "failed"]),
  answer: z.string().describe("The written answer, or Quarry's clarifying question when status is asking"),
  sql: z.array(z.string()).describe("The statements that ran, in order"),
  result: z.object(rowsPreview).optional().describe("The last query's first rows"),
  follow_ups: z.array(z.string()),
  choices: z.array(z.string()).optional().describe("The choices of a clarifying question"),
  computed: Computed.optional().describe(
    "How the answer was computed: verified or written for this question, definitions, tables, filters, time range",
  ),
};

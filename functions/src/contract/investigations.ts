/**
 * Investigations (docs/investigations.md): a "why" question answered by a typed plan of analysis
 * steps, run under a budget, and a report whose numbers Quarry fills in from cited result cells.
 * These are the shapes the page, the API and the graph share; the plan's validation (zod) lives in
 * `agent/investigation/plan.ts` and is checked against these types.
 */

/** The kinds of step a plan may hold. */
export const STEP_KINDS = ["compare", "breakdown", "contribution", "drivers", "trend", "forecast"] as const;
export type StepKind = (typeof STEP_KINDS)[number];

/** Kinds whose rows split a total into segments: what a causal claim must rest on. */
export const DRIVER_KINDS: readonly StepKind[] = ["contribution", "drivers", "breakdown"];

/** A date range: `from` inclusive, `to` exclusive, ISO dates (YYYY-MM-DD). */
export interface Period {
  from: string;
  to: string;
}

/** What every step measures: one aggregate over one table, by one date column. */
export interface PlanMetric {
  /** How the report names it ("revenue"). */
  name: string;
  /** One SQL aggregate, e.g. `SUM(revenue)`. */
  expression: string;
  /** `dataset.table` (BigQuery: `project.dataset.table` allowed). */
  table: string;
  dateColumn: string;
  /** An optional SQL condition every step keeps, e.g. `status <> 'cancelled'`. */
  filter?: string;
}

interface StepBase {
  /** Cited in the report as `{{s<id>.r<row>.<column>}}`; unique in the plan, 1–99. */
  id: number;
  title: string;
}

export type PlanStep = StepBase &
  (
    | { kind: "compare"; base: Period; current: Period }
    | { kind: "breakdown"; period: Period; dimensions: string[] }
    | { kind: "contribution"; base: Period; current: Period; dimensions: string[] }
    /**
     * Key drivers: every segment of the dimensions, alone and combined (BigQuery's AI.KEY_DRIVERS;
     * on DuckDB the same segments as plain SQL), with its change and how far that change differs
     * from what the overall change predicts. Segments overlap: they are never parts of a total.
     */
    | { kind: "drivers"; base: Period; current: Period; dimensions: string[] }
    | { kind: "trend"; range: Period; grain: "day" | "week" | "month" }
    /** The metric by `grain` over `range`, forecast `horizon` periods on (BigQuery's AI.FORECAST; on DuckDB a linear trend). */
    | { kind: "forecast"; range: Period; grain: "day" | "week" | "month"; horizon: number }
  );

export interface InvestigationPlan {
  /** The question, restated as what will be measured. */
  question: string;
  hypotheses: string[];
  metric: PlanMetric;
  steps: PlanStep[];
}

/** What the person is shown before anything runs: the interrupt's value. */
export interface PlanReview {
  kind: "investigation_plan";
  plan: InvestigationPlan;
  /** How many steps run at once, and the budget the run keeps to. */
  parallel: number;
  budget: InvestigationBudget;
  /** What the person may answer (`command.resume`). */
  howToAnswer: string;
}

export interface InvestigationBudget {
  maxSteps: number;
  bytes: number;
  tokens: number;
  seconds: number;
}

/** How one step ended. */
export type StepStatus = "done" | "failed" | "skipped";

export interface StepOutcome {
  id: number;
  status: StepStatus;
  /** For failed and skipped steps: why (a tool error, a budget that ran out). */
  reason?: string;
  /** The `ref` of the step's `result` event (its query's tool call id). */
  ref?: string;
  sql?: string;
  /** The result's columns and rows (the same as the step's `result` event). */
  columns?: { name: string; type?: string }[];
  rows?: Record<string, unknown>[];
  truncated?: boolean;
  bytesBilled?: number;
}

/**
 * The steps' results kept on the report's answer message (`response_metadata.quarry_investigation_results`),
 * so a reloaded page shows each step's table and chart again.
 */
export type StepResult = Required<Pick<StepOutcome, "id" | "ref" | "sql" | "columns" | "rows">> & {
  truncated: boolean;
};

/** One finding of the report, as shown: its text filled in, and the steps it rests on. */
export interface ReportSection {
  heading: string;
  text: string;
  steps: number[];
}

export interface InvestigationReport {
  title: string;
  summary: string;
  sections: ReportSection[];
  /** Steps planned but not done, and why: a partial report says so. */
  notDone: { id: number; title: string; reason: string }[];
  /** `model`: the writer's report passed the checker; `quarry`: Quarry wrote it from the results. */
  writtenBy: "model" | "quarry";
  /** Why the writer's report was not used (the checker's refusals, or a budget). */
  refusals?: string[];
  /** The whole report as Markdown (what the export gives). */
  markdown: string;
}

/** Progress of one step (a `custom` stream event). */
export interface InvestigationStepEvent {
  type: "investigation_step";
  id: number;
  title: string;
  kind: StepKind;
  status: "running" | StepStatus;
  reason?: string;
  /** The result's `ref` (the `result` event of the same step). */
  ref?: string;
}

/** The finished report (a `custom` stream event; also kept on the answer message's metadata). */
export interface InvestigationReportEvent {
  type: "investigation_report";
  report: InvestigationReport;
}

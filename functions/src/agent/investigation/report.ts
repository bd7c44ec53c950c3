/**
 * Turning a checked draft into the report people read (citations filled in, each finding with the
 * table of the steps it rests on, what was not done), and Quarry's own report when the writer's
 * was refused twice or the budget left no model call: plain sentences over the same cited cells.
 */
import type {
  InvestigationPlan,
  InvestigationReport,
  PlanStep,
  StepOutcome,
} from "../../contract/investigations";
import { fill, formatCell } from "./cells";
import type { DraftReport } from "./check";

/** Rows of a step's table in the Markdown (the page shows all of them, with a chart). */
const TABLE_ROWS = 12;

/** What was planned but not done, for the report. */
export function notDoneOf(plan: InvestigationPlan, outcomes: StepOutcome[]): InvestigationReport["notDone"] {
  return plan.steps.flatMap((s) => {
    const o = outcomes.find((x) => x.id === s.id);
    if (o?.status === "done") return [];
    return [{ id: s.id, title: s.title, reason: o?.reason ?? "not run" }];
  });
}

/** The draft with its citations filled in, as the report. */
export function finish(
  draft: DraftReport,
  plan: InvestigationPlan,
  outcomes: StepOutcome[],
  writtenBy: InvestigationReport["writtenBy"],
  refusals?: string[],
): InvestigationReport {
  const sections = draft.sections.map((s) => ({
    heading: fill(s.heading, outcomes),
    text: fill(s.text, outcomes),
    steps: [...new Set([...s.steps, ...[...s.text.matchAll(/\{\{\s*s(\d+)\./g)].map((m) => Number(m[1]))])],
  }));
  const report = {
    title: fill(draft.title, outcomes),
    summary: fill(draft.summary, outcomes),
    sections,
    notDone: notDoneOf(plan, outcomes),
    writtenBy,
    ...(refusals?.length ? { refusals } : {}),
  };
  return { ...report, markdown: toMarkdown(report, plan, outcomes) };
}

/** One sentence per step that ran, citing its cells; no causal words (none is claimed). */
function sentence(plan: InvestigationPlan, step: PlanStep, o: StepOutcome): string {
  const m = plan.metric.name.charAt(0).toUpperCase() + plan.metric.name.slice(1);
  const s = `s${step.id}`;
  const seg = (r: number) =>
    step.kind === "breakdown" || step.kind === "contribution"
      ? step.dimensions.map((d) => `{{${s}.r${r}.${d}}}`).join(" / ")
      : "";
  switch (step.kind) {
    case "compare":
      return `${m} went from {{${s}.r1.base_value}} to {{${s}.r1.current_value}}, a change of {{${s}.r1.change}} ({{${s}.r1.change_pct}}).`;
    case "contribution":
      return (
        `The largest change was in ${seg(1)}: {{${s}.r1.change}} ({{${s}.r1.share_of_change}} of the total change), ` +
        `from {{${s}.r1.base_value}} to {{${s}.r1.current_value}}.` +
        (o.rows && o.rows.length > 1 ? ` Next: ${seg(2)}, {{${s}.r2.change}}.` : "")
      );
    case "breakdown":
      return `The largest segment was ${seg(1)} with {{${s}.r1.value}} ({{${s}.r1.share}} of ${plan.metric.name}).`;
    case "drivers": {
      // r1 is usually the `all` row (the whole change): name the first segment after it.
      const r = o.rows?.findIndex((row) => row.segment !== "all") ?? -1;
      if (r < 0) return `${m} changed by {{${s}.r1.change}} in all, and no segment stood out.`;
      return (
        `The segment that changed most was {{${s}.r${r + 1}.segment}}: {{${s}.r${r + 1}.change}}, ` +
        `{{${s}.r${r + 1}.unexpected_change}} beyond what the overall change predicts for it.`
      );
    }
    case "trend": {
      const last = o.rows?.length ?? 1;
      return `${m} by ${step.grain}: {{${s}.r1.value}} in {{${s}.r1.period}}, {{${s}.r${last}.value}} in {{${s}.r${last}.period}}.`;
    }
    case "forecast": {
      const last = o.rows?.length ?? 1;
      return (
        `Forecast ${plan.metric.name} for {{${s}.r${last}.period}}: {{${s}.r${last}.value}} ` +
        `(between {{${s}.r${last}.lower_bound}} and {{${s}.r${last}.upper_bound}}).`
      );
    }
  }
}

/** Quarry's own report from the results: what each step found, no claim of a cause. */
export function quarryReport(
  plan: InvestigationPlan,
  outcomes: StepOutcome[],
  refusals: string[],
): InvestigationReport {
  const done = plan.steps.filter((s) => {
    const o = outcomes.find((x) => x.id === s.id);
    return o?.status === "done" && (o.rows?.length ?? 0) > 0;
  });
  const draft: DraftReport = {
    title: plan.question,
    summary: done.length
      ? `What each step of the plan found, written by Quarry from the results (no cause is claimed).`
      : "No step of the plan produced a result.",
    sections: done.map((s) => ({
      heading: s.title,
      text: sentence(
        plan,
        s,
        outcomes.find((o) => o.id === s.id)!,
      ),
      steps: [s.id],
    })),
  };
  return finish(draft, plan, outcomes, "quarry", refusals);
}

function table(o: StepOutcome): string {
  if (!o.columns?.length || !o.rows) return "";
  const cols = o.columns.map((c) => c.name);
  const head = `| ${cols.join(" | ")} |\n| ${cols.map(() => "---").join(" | ")} |`;
  const body = o.rows
    .slice(0, TABLE_ROWS)
    .map((r) => `| ${cols.map((c) => formatCell(c, r[c]).replace(/\|/g, "\\|")).join(" | ")} |`)
    .join("\n");
  const more = o.rows.length > TABLE_ROWS ? `\n\n(${o.rows.length - TABLE_ROWS} more rows)` : "";
  return `${head}\n${body}${more}`;
}

/** The report as Markdown: title, summary, findings with their tables, what was not done. */
function toMarkdown(
  report: Omit<InvestigationReport, "markdown">,
  plan: InvestigationPlan,
  outcomes: StepOutcome[],
): string {
  const parts = [`# ${report.title}`, report.summary];
  if (report.notDone.length) {
    parts.push(
      `**Partial report:** ${report.notDone.length} of ${plan.steps.length} planned steps were not done ` +
        "(listed under Not done).",
    );
  }
  for (const s of report.sections) {
    parts.push(`## ${s.heading}`, s.text);
    for (const id of s.steps) {
      const o = outcomes.find((x) => x.id === id);
      const step = plan.steps.find((x) => x.id === id);
      if (o && step && o.status === "done") parts.push(`*Step ${id}: ${step.title}*\n\n${table(o)}`);
    }
  }
  if (report.notDone.length) {
    parts.push(
      "## Not done",
      report.notDone.map((n) => `- Step ${n.id}, ${n.title}: ${n.reason}`).join("\n"),
    );
  }
  if (report.writtenBy === "quarry" && report.refusals?.length) {
    parts.push(`*Why Quarry wrote this report itself:* ${report.refusals.join("; ")}.`);
  }
  parts.push(
    `*Hypotheses:* ${plan.hypotheses.join("; ")}.\n\n*Every figure above is a cell of a step's result, ` +
      `filled in by Quarry${report.writtenBy === "quarry" ? "; this report was written by Quarry from the results" : ""}.*`,
  );
  return parts.join("\n\n");
}

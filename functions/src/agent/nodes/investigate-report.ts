/**
 * `investigate_report`: the model writes the report (one `write_report` call) citing result cells;
 * Quarry's checker (agent/investigation/check.ts) refuses a draft that types a number, cites what
 * does not exist, rests a finding on nothing or claims an unbacked cause, and the writer gets one
 * more call with the refusals. Refused twice — or no token budget left, or nothing to report on —
 * Quarry writes the report itself from the results. The report is the turn's answer (Markdown,
 * with the report on the message's `response_metadata.quarry_investigation`).
 */
import { AIMessage, SystemMessage } from "@langchain/core/messages";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { InvestigationReport, StepOutcome, StepResult } from "../../contract/investigations";
import { ZERO_USAGE } from "../../contract/events";
import type { AgentDeps } from "../deps";
import { emit, emitPhase, emitUsage } from "../emit";
import type { Usage } from "../events";
import { checkReport, type DraftReport } from "../investigation/check";
import { finish, notDoneOf, quarryReport } from "../investigation/report";
import { WRITE_REPORT, callArgs, writeReportTool } from "../investigation/tools";
import { callModel } from "../model-call";
import { currentTurn } from "../prompt-inputs/history";
import { usageOfModelCall } from "../prompt-inputs/usage";
import { REPORT_ERRORS_BLOCK, REPORT_WRITER_PROMPT, fill } from "../prompts";
import { addUsage, type InvestigationState, type QuarryStateType, type QuarryUpdate } from "../state";

const WRITER_ATTEMPTS = 2;
/** Rows of each step the writer is shown (and may cite). */
const ROWS_SHOWN = 25;

export function makeInvestigateReport(deps: AgentDeps) {
  return async function investigateReport(
    state: QuarryStateType,
    config: LangGraphRunnableConfig,
  ): Promise<QuarryUpdate> {
    const inv = state.investigation;
    if (!inv) throw new Error("investigate_report ran without an investigation.");
    emitPhase(config, "answering", "investigation report");
    const budget = deps.agent.investigation.tokens;
    let usage: Usage = { ...ZERO_USAGE };
    const spent = () => state.usage.totalTokens - state.usageAtTurnStart.totalTokens + usage.totalTokens;
    const shown = inv.outcomes.map((o) => ({ ...o, rows: o.rows?.slice(0, ROWS_SHOWN) }));
    let refusals: string[] = [];
    let report: InvestigationReport | undefined;
    if (!shown.some((o) => o.status === "done")) refusals = ["no step of the plan produced a result"];
    for (
      let attempt = 1;
      attempt <= WRITER_ATTEMPTS && !report && shown.some((o) => o.status === "done");
      attempt++
    ) {
      if (spent() >= budget) {
        refusals = [
          ...refusals,
          `the investigation's model token budget (${budget.toLocaleString("en-US")}) was spent before the report`,
        ];
        break;
      }
      if (state.modelCalls + usage.modelCalls >= deps.agent.maxModelCalls) {
        refusals = [
          ...refusals,
          `the turn's cap of ${deps.agent.maxModelCalls} model calls (QUARRY_MAX_MODEL_CALLS) was reached before the report`,
        ];
        break;
      }
      const reply = await callModel(deps, config, {
        node: "investigate_report",
        messages: [...writerMessages(inv, shown, refusals), ...currentTurn(state.messages)],
        tools: [writeReportTool],
      });
      const delta = usageOfModelCall(reply);
      emitUsage(config, { ...state, usage: addUsage(state.usage, usage) }, delta);
      usage = addUsage(usage, delta);
      const draft = draftOf(callArgs(reply, WRITE_REPORT));
      const errors = draft ? checkReport(draft, inv.plan, shown) : [`call ${WRITE_REPORT} with the report`];
      if (!errors.length) report = finish(draft!, inv.plan, inv.outcomes, "model", refusals);
      else refusals = errors;
    }
    report ??= quarryReport(inv.plan, inv.outcomes, refusals);
    emit(config, { type: "investigation_report", report });
    const message = new AIMessage({
      content: report.markdown,
      response_metadata: {
        quarry_investigation: report,
        quarry_investigation_results: resultsOf(inv.outcomes),
      },
    });
    return {
      phase: "answering",
      investigation: { ...inv, report },
      finalAnswer: report.markdown,
      messages: [message],
      modelCalls: state.modelCalls + usage.modelCalls,
      usage,
    };
  };
}

function writerMessages(inv: InvestigationState, outcomes: StepOutcome[], errors: string[]) {
  const { plan } = inv;
  const results = plan.steps
    .map((step) => {
      const o = outcomes.find((x) => x.id === step.id);
      const head = `Step ${step.id} (${step.kind}): ${step.title}`;
      if (o?.status !== "done" || !o.rows || !o.columns)
        return `${head}\n  no result: ${o?.reason ?? "not run"}`;
      const rows = o.rows.map(
        (r, i) =>
          `  r${i + 1}: ${o.columns!.map((c) => `${c.name}=${JSON.stringify(r[c.name])}`).join(", ")}`,
      );
      return `${head}\n  columns: ${o.columns.map((c) => c.name).join(", ")}\n${rows.join("\n")}`;
    })
    .join("\n");
  const notDone = notDoneOf(plan, outcomes);
  const system = fill(REPORT_WRITER_PROMPT, {
    question: plan.question,
    hypotheses: plan.hypotheses.join("; "),
    metric: `${plan.metric.name} = ${plan.metric.expression} over ${plan.metric.table}`,
    results,
    notDone: notDone.length
      ? `Not done (say so in the report): ${notDone.map((n) => `step ${n.id} (${n.reason})`).join("; ")}\n`
      : "",
    errors: errors.length
      ? fill(REPORT_ERRORS_BLOCK, { errors: errors.map((e) => `- ${e}`).join("\n") })
      : "",
  });
  return [new SystemMessage(system)];
}

/** The steps' results, kept on the answer so a reloaded page draws their tables and charts again. */
function resultsOf(outcomes: StepOutcome[]): StepResult[] {
  return outcomes.flatMap((o) =>
    o.status === "done" && o.ref && o.sql && o.columns && o.rows
      ? [{ id: o.id, ref: o.ref, sql: o.sql, columns: o.columns, rows: o.rows, truncated: !!o.truncated }]
      : [],
  );
}

/** The writer's arguments as a draft, or undefined when their shape is wrong. */
function draftOf(args: unknown): DraftReport | undefined {
  const a = args as Partial<DraftReport> | undefined;
  if (!a || typeof a.title !== "string" || typeof a.summary !== "string" || !Array.isArray(a.sections))
    return undefined;
  const sections = a.sections.filter((s) => s && typeof s.heading === "string" && typeof s.text === "string");
  return {
    title: a.title,
    summary: a.summary,
    sections: sections.map((s) => ({
      heading: s.heading,
      text: s.text,
      steps: Array.isArray(s.steps) ? s.steps.map(Number).filter(Number.isInteger) : [],
    })),
  };
}

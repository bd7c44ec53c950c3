/**
 * `investigate_steps`: runs the reviewed plan's steps, `QUARRY_INVESTIGATION_PARALLEL` at a time,
 * each as one `bq_query` call through the executor's gate (dry run, SELECT only, scope, per-query
 * and per-person byte caps, audit, a deterministic job id per step), with what is left of the
 * investigation's byte budget as a cap the gate enforces before the query runs. Each step sends
 * `investigation_step` events (running, then done / failed / skipped) and its `result`.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { PlanStep, StepOutcome } from "../../contract/investigations";
import type { AgentDeps } from "../deps";
import { emit, emitPhase, emitUsage } from "../emit";
import { runSteps } from "../investigation/run";
import { stepSql, type Dialect } from "../investigation/sql";
import type { QuarryStateType, QuarryUpdate } from "../state";
import { emitOutcome, runOne } from "./executor";

/** The step's tool call id: the `ref` of its result, and (hashed) its BigQuery job id. */
function stepCallId(runId: string, id: number): string {
  return `inv-${runId || "local"}-s${id}`;
}

export function makeInvestigateSteps(deps: AgentDeps) {
  return async function investigateSteps(
    state: QuarryStateType,
    config: LangGraphRunnableConfig,
  ): Promise<QuarryUpdate> {
    const inv = state.investigation;
    if (!inv) throw new Error("investigate_steps ran without a plan.");
    emitPhase(config, "querying", "investigation");
    const { parallel, seconds, bytes: budget } = deps.agent.investigation;
    const runId = String((config.configurable as { run_id?: unknown } | undefined)?.run_id ?? "");
    const dialect: Dialect = deps.dialect.name.startsWith("BigQuery") ? "bigquery" : "duckdb";
    let spent = 0;
    let started = 0;
    const runStep = async (step: PlanStep, signal: AbortSignal): Promise<StepOutcome> => {
      const call = {
        name: "bq_query",
        args: { sql: stepSql(inv.plan, step, dialect) },
        id: stepCallId(runId, step.id),
        type: "tool_call" as const,
      };
      const left = Math.max(budget - spent, 0);
      const out = await runOne(deps, state, { ...config, signal }, call, runId, left);
      emitOutcome(config, call, call.id, out.artifact);
      return { ...outcomeOf(step, out.artifact, left, budget, (b) => (spent += b)), ref: call.id };
    };
    const outcomes = await runSteps(inv.plan.steps, {
      parallel,
      seconds,
      now: () => deps.now().getTime(),
      ...(config.signal ? { signal: config.signal } : {}),
      run: runStep,
      onStart: (s) => {
        started++;
        emit(config, stepEvent(runId, s, "running"));
      },
      onEnd: (s, o) =>
        emit(config, { ...stepEvent(runId, s, o.status), ...(o.reason ? { reason: o.reason } : {}) }),
    });
    const delta = { toolCalls: started, bytesBilled: spent };
    emitUsage(config, state, delta);
    return {
      phase: "querying",
      investigation: { ...inv, outcomes },
      usage: delta,
      bytesBilled: spent,
    };
  };
}

function stepEvent(runId: string, s: PlanStep, status: "running" | StepOutcome["status"]) {
  return {
    type: "investigation_step" as const,
    id: s.id,
    title: s.title,
    kind: s.kind,
    status,
    ref: stepCallId(runId, s.id),
  };
}

function outcomeOf(
  step: PlanStep,
  artifact: Awaited<ReturnType<typeof runOne>>["artifact"],
  left: number,
  budget: number,
  charge: (bytes: number) => void,
): StepOutcome {
  if (artifact.kind === "query") {
    const r = artifact.result;
    charge(r.bytesBilled);
    return {
      id: step.id,
      status: "done",
      sql: r.sql,
      columns: r.columns.map((c) => ({ name: c.name, type: c.type })),
      rows: r.rows,
      truncated: r.truncated,
      bytesBilled: r.bytesBilled,
    };
  }
  const message = artifact.kind === "error" ? artifact.message : "the step gave no result";
  const sql = artifact.kind === "error" ? artifact.sql : undefined;
  if (artifact.kind === "error" && artifact.category === "budget") {
    return {
      id: step.id,
      status: "skipped",
      reason:
        `not run, over a byte budget (the investigation had ${left.toLocaleString("en-US")} of its ` +
        `${budget.toLocaleString("en-US")} bytes left): ${message}`,
    };
  }
  return { id: step.id, status: "failed", reason: message, ...(sql ? { sql } : {}) };
}

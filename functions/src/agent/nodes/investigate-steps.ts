/**
 * `investigate_steps`: runs the reviewed plan's steps, `QUARRY_INVESTIGATION_PARALLEL` at a time,
 * each as one `bq_query` call through the executor's gate (dry run, SELECT only, scope, per-query
 * and per-person byte caps, audit, a deterministic job id per step). The investigation's byte
 * budget is strict however many steps run at once: each step is dry-run first and reserves what it
 * may bill from what no other step has reserved, and the gate refuses it, before it runs, when its
 * estimate is over that reservation, and caps its job at it. Each step sends `investigation_step`
 * events (running, then done / failed / skipped) and its `result`.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { PlanStep, StepOutcome } from "../../contract/investigations";
import type { AgentDeps } from "../deps";
import { emit, emitPhase, emitUsage } from "../emit";
import { runSteps } from "../investigation/run";
import { stepSql, type Dialect } from "../investigation/sql";
import type { QuarryStateType, QuarryUpdate } from "../state";
import { contextOf } from "../../tools/model-tools";
import { callContext, emitOutcome, runOne } from "./executor";

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
    const bytes = new ByteBudget(budget);
    let started = 0;
    const runStep = async (step: PlanStep, signal: AbortSignal): Promise<StepOutcome> => {
      const call = {
        name: "bq_query",
        args: { sql: stepSql(inv.plan, step, dialect) },
        id: stepCallId(runId, step.id),
        type: "tool_call" as const,
      };
      const stepConfig = { ...config, signal };
      const need = await billable(deps, state, stepConfig, call, runId);
      // From here to the reservation nothing awaits: no other step can take the same bytes.
      const free = bytes.free();
      const cap = bytes.reserve(need === "unknown" ? free : Math.min(need, free));
      try {
        const out = await runOne(deps, state, stepConfig, call, runId, cap);
        emitOutcome(config, call, call.id, out.artifact);
        return { ...outcomeOf(step, out.artifact, free, budget, (b) => bytes.charge(b)), ref: call.id };
      } finally {
        bytes.release(cap);
      }
    };
    const outcomes = await runSteps(inv.plan.steps, {
      // Without a dry run to reserve by, steps run one at a time: each sees what the last left.
      parallel: deps.dryRun ? parallel : 1,
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
    const billed = outcomes.reduce((sum, o) => sum + (o.bytesBilled ?? 0), 0);
    const delta = { toolCalls: started, bytesBilled: billed };
    emitUsage(config, state, delta);
    return {
      phase: "querying",
      investigation: { ...inv, outcomes },
      usage: delta,
      bytesBilled: billed,
    };
  };
}

/**
 * An investigation's bytes: what its finished steps were charged, and what its running steps
 * have reserved. A step runs capped at its reservation, so what all steps bill together never
 * passes the budget, however many run at once.
 */
class ByteBudget {
  private spent = 0;
  private reserved = 0;
  constructor(private readonly total: number) {}
  free(): number {
    return Math.max(this.total - this.spent - this.reserved, 0);
  }
  reserve(bytes: number): number {
    this.reserved += bytes;
    return bytes;
  }
  release(bytes: number): void {
    this.reserved -= bytes;
  }
  charge(bytes: number): void {
    this.spent += bytes;
  }
}

/**
 * The most a step may bill, from the warehouse's dry run under the same context its query gets
 * (scope, uploads, person). "unknown" when there is no dry run here or row-level security hides
 * the estimate: the step then reserves all that is free. A dry run that fails reserves nothing:
 * the query's own dry run fails the same way, and is audited.
 */
async function billable(
  deps: AgentDeps,
  state: QuarryStateType,
  config: LangGraphRunnableConfig,
  call: { name: string; args: { sql: string }; id: string },
  runId: string,
): Promise<number | "unknown"> {
  if (!deps.dryRun) return "unknown";
  const quarry = callContext(state, config, call.id, runId);
  const ctx = {
    ...contextOf({ ...config, configurable: { ...config.configurable, quarry } }),
    estimateBytes: true,
  };
  try {
    const dry = await deps.dryRun(call.args.sql, ctx);
    return dry.bytesHidden ? "unknown" : (dry.billableBytes ?? dry.estimatedBytes);
  } catch {
    config.signal?.throwIfAborted();
    return 0;
  }
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
  free: number,
  budget: number,
  charge: (bytes: number) => void,
): StepOutcome {
  if (artifact.kind === "query") {
    const r = artifact.result;
    // DuckDB bills nothing: there the budget counts the bytes it estimates it read.
    charge(Math.max(r.bytesBilled, r.bytesProcessed));
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
        `not run, over a byte budget (the investigation had ${free.toLocaleString("en-US")} of its ` +
        `${budget.toLocaleString("en-US")} bytes left): ${message}`,
    };
  }
  return { id: step.id, status: "failed", reason: message, ...(sql ? { sql } : {}) };
}

/**
 * `executor`: runs the planner's tool calls in parallel, each with a timeout and the run's abort
 * signal. A failing, throwing or hanging tool becomes a tool message the planner can act on
 * ("Error (<category>): …" + an error artifact), never a crash of the run.
 */
import { createHash } from "node:crypto";
import { ToolMessage, type ToolCall } from "@langchain/core/messages";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { AgentDeps } from "../deps";
import { emit, emitPhase, emitUsage } from "../emit";
import { pendingToolCalls } from "../prompt-inputs/history";
import type { QuarryStateType, QuarryUpdate, TurnResult } from "../state";
import type { DryRunResult, QueryContext, ToolArtifact, WarehouseErrorCategory } from "../../tools/types";
import { stripSqlWrapping } from "../../tools/policy";
import { runPersonOf } from "../../tools/person";
import { limitedScope } from "../../tools/scope";
import { withTimeout } from "../../timeout";
import { QuarryError } from "../../errors";

const TIMED_OUT = Symbol("timed out");

export function makeExecutor(deps: AgentDeps) {
  return async function executor(
    state: QuarryStateType,
    config: LangGraphRunnableConfig,
  ): Promise<QuarryUpdate> {
    emitPhase(config, "querying");
    const calls = pendingToolCalls(state.messages);
    const configurable = (config.configurable ?? {}) as Record<string, unknown>;
    const runId = typeof configurable.run_id === "string" ? configurable.run_id : "";
    const outcomes = await Promise.all(calls.map((call) => runOne(deps, state, config, call, runId)));

    const results: TurnResult[] = [];
    let bytes = 0;
    for (const { call, message, artifact } of outcomes) {
      results.push({ toolCallId: call.id ?? "", tool: call.name, args: call.args, artifact });
      if (artifact.kind === "query") bytes += artifact.result.bytesBilled;
      emitOutcome(config, call, message.tool_call_id, artifact);
    }
    const delta = { toolCalls: calls.length, bytesBilled: bytes };
    emitUsage(config, state, delta);
    return {
      phase: "querying",
      messages: outcomes.map((o) => o.message),
      turnResults: [...state.turnResults, ...results],
      usage: delta,
      bytesBilled: bytes,
    };
  };
}

/** A tool call's outcome as the page gets it: its result (full, up to the cap), or its error. */
export function emitOutcome(
  config: LangGraphRunnableConfig,
  call: ToolCall,
  toolCallId: string,
  artifact: ToolArtifact,
): void {
  if (artifact.kind === "query") {
    const r = artifact.result;
    emit(config, {
      type: "result",
      ref: toolCallId,
      sql: r.sql,
      columns: r.columns,
      rows: r.rows,
      totalRows: r.totalRows,
      ...(r.totalRowsAtLeast ? { totalRowsAtLeast: true } : {}),
      truncated: r.truncated,
      bytesProcessed: r.bytesProcessed,
      bytesBilled: r.bytesBilled,
      ...(r.bytesHidden ? { bytesHidden: true } : {}),
      cacheHit: r.cacheHit,
      durationMs: r.durationMs,
      ...(r.jobId ? { jobId: r.jobId } : {}),
    });
  } else if (artifact.kind === "error") {
    emit(config, {
      type: "tool_error",
      toolCallId,
      tool: call.name,
      category: artifact.category,
      message: artifact.message,
      ...(artifact.sql ? { sql: artifact.sql } : {}),
    });
  }
}

/**
 * One tool call through the same gate as every query (dry run, scope, byte caps, audit), with a
 * timeout. `bytesCap`: the most this call may bill (an investigation's step: its reserved share).
 */
export async function runOne(
  deps: AgentDeps,
  state: QuarryStateType,
  config: LangGraphRunnableConfig,
  call: ToolCall,
  runId: string,
  bytesCap?: number,
): Promise<{ call: ToolCall; message: ToolMessage; artifact: ToolArtifact }> {
  const id = call.id ?? `${call.name}_${Math.random().toString(36).slice(2)}`;
  const tool = deps.tools.find((t) => t.name === call.name);
  if (!tool) {
    const names = deps.tools.map((t) => t.name).join(", ");
    return failure(call, id, "bad_input", `There is no tool named "${call.name}"; use one of: ${names}.`);
  }
  const timeout = new AbortController();
  const signal = config.signal ? AbortSignal.any([config.signal, timeout.signal]) : timeout.signal;
  const quarry: QueryContext = {
    ...callContext(state, config, id, runId, bytesCap),
    signal,
    onEstimate: (e: DryRunResult) =>
      emit(config, {
        type: "sql",
        toolCallId: id,
        sql: e.sql,
        estimatedBytes: e.estimatedBytes,
        attempt: state.retryCount + 1,
        ...(e.bytesHidden ? { bytesHidden: true } : {}),
      }),
  };
  try {
    const out = await withTimeout(
      tool.invoke(
        { ...call, id, type: "tool_call" },
        { ...config, signal, configurable: { ...config.configurable, quarry } },
      ) as Promise<unknown>,
      deps.toolTimeoutMs,
      () => {
        timeout.abort(new Error(`${call.name} timed out`));
        return TIMED_OUT;
      },
    );
    if (out === TIMED_OUT) {
      const seconds = Math.round(deps.toolTimeoutMs / 100) / 10;
      return failure(
        call,
        id,
        "timeout",
        `${call.name} did not finish within ${seconds} s and was cancelled.`,
      );
    }
    if (isToolMessage(out)) {
      const artifact = (out.artifact as ToolArtifact | undefined) ?? artifactFromContent(out);
      return { call, message: out, artifact };
    }
    // A tool without an artifact (not one of ours): keep its text so the planner can still use it.
    const message = new ToolMessage({ content: String(out), tool_call_id: id, name: call.name });
    return { call, message, artifact: artifactFromContent(message) };
  } catch (err) {
    config.signal?.throwIfAborted();
    // The person's BigQuery consent is missing or revoked (user identity mode): the run ends with it.
    if (err instanceof QuarryError) throw err;
    const msg = err instanceof Error ? err.message : String(err);
    return failure(call, id, "internal", `${call.name} failed: ${msg}`);
  }
}

/**
 * What the executor tells the tool about one call (`configurable.quarry`): who runs it in which
 * thread and run, its job id, the budgets so far, the person's scope and day's bytes, its own cap.
 */
export function callContext(
  state: QuarryStateType,
  config: LangGraphRunnableConfig,
  id: string,
  runId: string,
  bytesCap?: number,
): Omit<QueryContext, "signal" | "onEstimate"> {
  return {
    userId: state.userId,
    threadId: state.threadId,
    runId,
    ...(runId ? { jobId: stepJobId(runId, id, state.retryCount) } : {}),
    bytesBilledSoFar: state.bytesBilled,
    ...personContext(config, state),
    ...(bytesCap !== undefined ? { bytesCap } : {}),
  };
}

function failure(call: ToolCall, id: string, category: WarehouseErrorCategory, message: string) {
  const artifact: ToolArtifact = { kind: "error", category, message, details: {} };
  if (call.name === "bq_query" && typeof call.args.sql === "string")
    artifact.sql = stripSqlWrapping(call.args.sql);
  const content = `Error (${category}): ${message}`;
  return {
    call,
    message: new ToolMessage({
      content,
      tool_call_id: id,
      name: call.name,
      artifact,
      status: "error" as const,
    }),
    artifact,
  };
}

/**
 * Whether a tool returned a ToolMessage, by the message's own type rather than `instanceof`:
 * @langchain/core ships an ESM and a CommonJS build, this file is compiled to CommonJS, and a tool
 * (or LangChain's tool wrapper, loaded through ESM) can build its ToolMessage from the other build:
 * another class, so `instanceof ToolMessage` could be false for a real ToolMessage and its artifact
 * would be lost (1.x guards `instanceof` with a Symbol.hasInstance check; older copies do not).
 */
function isToolMessage(out: unknown): out is ToolMessage {
  if (typeof out !== "object" || out === null) return false;
  const m = out as { type?: unknown; _getType?: unknown; tool_call_id?: unknown };
  const type = typeof m._getType === "function" ? (m._getType as () => unknown).call(m) : m.type;
  return type === "tool" && typeof m.tool_call_id === "string";
}

function artifactFromContent(m: ToolMessage): ToolArtifact {
  const text = typeof m.content === "string" ? m.content : JSON.stringify(m.content);
  const match = /^Error \((\w+)\):\s*([\s\S]*)$/.exec(text);
  if (match)
    return { kind: "error", category: match[1] as WarehouseErrorCategory, message: match[2], details: {} };
  return { kind: "tables", tables: [] };
}

/**
 * Who asks, what they may still bill today and what they may see, from the run's person
 * (`configurable.quarry_person`, `tools/person.ts`): the bytes this turn billed since come off
 * their budget. A run that carries no person sees no data (fails closed).
 */
function personContext(
  config: LangGraphRunnableConfig,
  state: QuarryStateType,
): Pick<QueryContext, "userEmail" | "personBytesLeft" | "scope"> {
  const person = runPersonOf(config.configurable);
  if (!person) return { scope: limitedScope([]) };
  const spentThisTurn = state.usage.bytesBilled - state.usageAtTurnStart.bytesBilled;
  return {
    userEmail: person.email,
    scope: person.scope,
    ...(person.bytesLeft !== undefined
      ? { personBytesLeft: Math.max(person.bytesLeft - spentThisTurn, 0) }
      : {}),
  };
}

/**
 * The BigQuery job id of one query step: the same for the same run, planned call and verifier
 * attempt on whichever instance runs it (the call id comes from the stored plan), so a run
 * continued after its instance stopped attaches to the job it had started (docs/runs.md).
 */
function stepJobId(runId: string, callId: string, attempt: number): string {
  const step = createHash("sha256").update(callId).digest("hex").slice(0, 16);
  return `quarry_${runId.replace(/[^A-Za-z0-9_-]/g, "_")}_${step}_a${attempt}`;
}

/**
 * MCP's `ask`: one turn of Quarry's graph for the caller, on a thread they own (a new one when none
 * is given), through the same run lifecycle as the API (`startRun`: lease, quota admission, event
 * log). Its events go to a RunOutput that collects them instead of streaming SSE: the phases become
 * MCP progress notifications, the rest the tool's answer. A thread waiting on a clarifying question
 * takes the next `ask` as its answer (`command: {resume}`, as the page sends it). The client's
 * cancellation stops the run like Stop (the output's disconnect, with `on_disconnect: cancel`).
 */
import type { Row } from "../contract/events";
import { ASSISTANT_ID } from "../contract/protocol";
import { QuarryError } from "../errors";
import { threadStore } from "../runs/runtime";
import { startRun } from "../runs/start";
import { checkRun } from "../runs/check";
import { type RunCaller } from "../runs/admission";
import { turnStatus, type CollectingOutput } from "../runs/collect";
import { previewRows, type AskOutput } from "./results";

export interface AskInput {
  question: string;
  thread_id: string;
  /** Answer with an investigation: a plan to answer first, then a report (docs/investigations.md). */
  investigate?: boolean;
}

/**
 * Runs the turn and shapes its answer. Refusals before the run (quota, a busy or unknown thread,
 * bad input) throw QuarryErrors for the caller to word; a run that fails says so in the output.
 */
export async function ask(
  caller: RunCaller,
  input: AskInput,
  /** `create`: the thread is new (the client gave none). */
  opts: { previewRows: number; output: CollectingOutput; runId: string; create: boolean },
): Promise<AskOutput> {
  const threadId = input.thread_id;
  // A thread waiting on a clarifying question takes this `ask` as its answer.
  const waiting = opts.create
    ? false
    : (await (await threadStore()).get(threadId, caller.uid)).status === "interrupted";
  const checked = checkRun({
    assistant_id: ASSISTANT_ID,
    ...(waiting
      ? { command: { resume: input.question } }
      : {
          input: {
            messages: [{ type: "human", content: input.question }],
            ...(input.investigate ? { investigate: true } : {}),
          },
        }),
    stream_mode: ["updates", "custom"],
    on_disconnect: "cancel",
    ...(opts.create ? { if_not_exists: "create" } : {}),
  });
  const out = opts.output;
  const run = await startRun(caller, threadId, checked, out, opts.runId).catch((err: unknown) => {
    // Cancelled before the run took its thread: nothing ran, and that is a stop, not a failure.
    if (out.cancelled && !(err instanceof QuarryError))
      return { status: "cancelled" as const, error: undefined };
    throw err;
  });
  const status = turnStatus(run.status, out);
  const answer =
    status === "failed"
      ? `The run failed: ${run.error?.message ?? out.error?.message ?? "unknown error"} (${run.error?.error ?? out.error?.error ?? "internal"})`
      : status === "stopped"
        ? "The run was stopped before it finished."
        : (out.clarification?.question ?? out.answer);
  return {
    thread_id: threadId,
    status,
    answer,
    sql: out.sql,
    ...(out.result
      ? { result: previewRows({ ...out.result, rows: out.result.rows as Row[] }, opts.previewRows) }
      : {}),
    follow_ups: out.followUps,
    ...(out.clarification ? { choices: out.clarification.choices } : {}),
    ...(out.computed && status === "answered" ? { computed: out.computed } : {}),
  };
}

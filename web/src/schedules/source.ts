/**
 * What an answer offers to schedule: its question, the SQL it ran (the last query that finished
 * with rows — the one the answer rests on) and that result's columns. Pure; none for an answer
 * that ran no SQL or whose queries all failed.
 */
import type { Turn } from "../chat/model";
import type { ScheduleSource } from "./form";

/** The query a turn's answer rests on, if it ran one that finished. */
function answeredQuery(turn: Pick<Turn, "queries">) {
  return [...turn.queries].reverse().find((q) => q.status === "done" && q.sql && q.result);
}

/** Whether the turn can be scheduled ("Schedule…" is offered). */
export function canSchedule(turn: Pick<Turn, "queries" | "status" | "question">): boolean {
  return turn.status === "done" && !!turn.question.trim() && !!answeredQuery(turn);
}

/** The schedule's source for a finished turn in `threadId`, or undefined when it ran no SQL. */
export function scheduleSourceOf(
  turn: Pick<Turn, "queries" | "status" | "question">,
  threadId: string,
): ScheduleSource | undefined {
  const q = answeredQuery(turn);
  if (!canSchedule(turn) || !q?.sql) return undefined;
  return {
    threadId,
    question: turn.question.trim(),
    sql: q.sql,
    columns: q.result?.columns.map((c) => c.name) ?? [],
  };
}

/**
 * The eval harness: each question runs through the real graph (the configured model, the real
 * tools and authored context); the SQL whose result the answer used and the gold SQL then run on
 * the same warehouse, and their results are compared (compare.ts). Reports execution accuracy and,
 * per question, model calls, tokens, bytes and latency.
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import type { QuarryEvent, QuarryGraph } from "../functions/src/agent";
import { resumeInput, turnInput } from "../functions/src/agent";
import type { QueryContext, Warehouse } from "../functions/src/tools/types";
import { questionOrders, sameResult, type Table } from "./compare";
import { FULL_SCOPE } from "../functions/src/tools/scope";
import { personConfig } from "../test/support/person";

const QuestionLine = z
  .object({
    id: z.string().min(1),
    question: z.string().min(1),
    sql: z.string().min(1),
    tables: z.array(z.string()).optional(),
    /** Force row order to count (or not); default: the question asks for an order and the gold SQL sorts. */
    ordered: z.boolean().optional(),
    /**
     * What the user would answer if the agent asked a clarifying question. Without it, asking counts
     * as a wrong answer: the question set's questions are meant to be settled by the context.
     */
    answer: z.string().min(1).optional(),
    /** The same answer computed another way, to check the gold SQL itself (tests only). */
    check: z.string().optional(),
  })
  .strict();

export type EvalQuestion = z.infer<typeof QuestionLine>;

export interface EvalQuestionResult {
  id: string;
  question: string;
  correct: boolean;
  /** The SQL whose result the answer used (the last query that succeeded). */
  sql?: string;
  error?: string;
  /** The clarifying question the agent asked, if it asked one. */
  asked?: string;
  modelCalls: number;
  tokens: number;
  bytesBilled: number;
  ms: number;
}

export interface EvalReport {
  total: number;
  correct: number;
  executionAccuracy: number;
  /** Questions on which the agent asked a clarifying question. */
  asked: number;
  questions: EvalQuestionResult[];
}

/** Parses a JSONL question file; a bad line is an error naming the file and line. */
export function parseQuestions(text: string, file: string): EvalQuestion[] {
  const out: EvalQuestion[] = [];
  const ids = new Set<string>();
  text.split("\n").forEach((line, i) => {
    if (!line.trim()) return;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch (err) {
      throw new Error(`${file}:${i + 1}: not valid JSON: ${(err as Error).message}`, { cause: err });
    }
    const parsed = QuestionLine.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new Error(`${file}:${i + 1}: ${issue.path.join(".") || "line"}: ${issue.message}`);
    }
    if (ids.has(parsed.data.id)) throw new Error(`${file}:${i + 1}: id "${parsed.data.id}" is used twice`);
    ids.add(parsed.data.id);
    out.push(parsed.data);
  });
  if (!out.length) throw new Error(`${file}: no questions`);
  return out;
}

const ctx = (): QueryContext => ({
  userId: "eval",
  threadId: "eval",
  runId: randomUUID(),
  bytesBilledSoFar: 0,
  scope: FULL_SCOPE,
});

async function execute(warehouse: Warehouse, sql: string): Promise<Table> {
  const r = await warehouse.query(sql, ctx());
  return { columns: r.columns.map((c) => c.name), rows: r.rows as Table["rows"] };
}

/** Runs one question through the graph and scores it. */
export async function evalQuestion(
  graph: QuarryGraph,
  warehouse: Warehouse,
  q: EvalQuestion,
): Promise<EvalQuestionResult> {
  const started = Date.now();
  const result: EvalQuestionResult = {
    id: q.id,
    question: q.question,
    correct: false,
    modelCalls: 0,
    tokens: 0,
    bytesBilled: 0,
    ms: 0,
  };
  const options = {
    configurable: { thread_id: `eval-${q.id}-${randomUUID()}`, user_id: "eval", ...personConfig("eval") },
    streamMode: ["custom", "updates"],
  };
  /** Streams one run; returns the question it stopped at, if any. */
  const follow = async (input: unknown): Promise<string | undefined> => {
    let asked: string | undefined;
    const stream = await graph.stream(input as never, options as never);
    for await (const [mode, ev] of stream as AsyncIterable<[string, QuarryEvent]>) {
      if (mode === "updates") {
        const interrupts = (ev as unknown as { __interrupt__?: { value?: { question?: string } }[] })
          .__interrupt__;
        if (interrupts) asked = interrupts[0]?.value?.question ?? "(a question)";
        continue;
      }
      if (ev.type === "result") result.sql = ev.sql;
      if (ev.type === "usage") {
        result.modelCalls = ev.turn.modelCalls;
        result.tokens = ev.turn.inputTokens + ev.turn.outputTokens;
        result.bytesBilled = ev.turn.bytesBilled;
      }
    }
    return asked;
  };
  try {
    const asked = await follow(turnInput({ type: "human", content: q.question, id: randomUUID() }));
    if (asked) {
      result.asked = asked;
      if (q.answer) await follow(resumeInput(q.answer));
      else result.error = `asked instead of answering: "${asked}" (give the line an "answer" if it is fair)`;
    }
  } catch (err) {
    result.error = `the run failed: ${(err as Error).message}`;
  }
  result.ms = Date.now() - started;
  if (result.asked && !q.answer) return result;
  if (!result.sql) {
    result.error ??= "no query ran: the answer used no data";
    return result;
  }
  try {
    const [gold, pred] = await Promise.all([execute(warehouse, q.sql), execute(warehouse, result.sql)]);
    result.correct = sameResult(gold, pred, q.ordered ?? questionOrders(q.question, q.sql));
  } catch (err) {
    result.error = `executing the SQL failed: ${(err as Error).message}`;
  }
  return result;
}

/** Runs every question, one after another (a model's rate limit is the usual bottleneck). */
export async function runEval(
  graph: QuarryGraph,
  warehouse: Warehouse,
  questions: EvalQuestion[],
  onResult?: (r: EvalQuestionResult) => void,
): Promise<EvalReport> {
  const results: EvalQuestionResult[] = [];
  for (const q of questions) {
    const r = await evalQuestion(graph, warehouse, q);
    results.push(r);
    onResult?.(r);
  }
  const correct = results.filter((r) => r.correct).length;
  return {
    total: results.length,
    correct,
    executionAccuracy: results.length ? correct / results.length : 0,
    asked: results.filter((r) => r.asked).length,
    questions: results,
  };
}

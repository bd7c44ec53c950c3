/**
 * The Vertex AI stand-in's script for the API tests: the sample-data analyst (`smartScript`), plus
 * magic words a test puts in its question: "[model-error]" makes the model answer 400 (a non-retried
 * Vertex AI error), and words that stop a run at a known point for as long as the test needs, with
 * no timing involved (no test relies on a stream being slow enough):
 * - "[hold:<key>]" makes the planner's model call wait until the test releases <key>, and
 *   "[hold-answer:<key>]" the generator's (see `hold-control.ts`): the lease and the user's message
 *   are stored, the model has not answered;
 * - "[pause-answer:<key>]" makes the answer stream its first 3 chunks, then wait until the test
 *   releases <key> before the rest (a stream caught mid-answer, for rejoining tests);
 * - "[midway]" makes the answer stream its first chunks and then stop until the function drops the
 *   model call (a cancel, a disconnect, a delete), bounded by the stand-in's HOLD_LIMIT_MS.
 * - "[sql:<name>]" makes the planner's first query of the turn one of SCRIPTED_SQL, exactly as a
 *   model might send it (in a Markdown fence, or a statement built to exhaust memory);
 * - "[describe:<table>]" makes the planner's first call of the turn describe_table of that table;
 * - "[hold-replan:<key>]" holds the planner's model call like "[hold:<key>]", but only once the turn
 *   has a tool result (the planner called again after a query: durable.int.ts cuts a run there);
 * - "[investigation:<variant>]" scripts an investigation's plan and report (investigation-script.ts);
 * - "[follow-ups]" makes the answer end with follow-up questions, one of which names a column of
 *   `finance.salaries` (`grade`): the server offers it only to people whose prompt showed it.
 */
import { HOLD_ANSWER_WORD, HOLD_WORD, type HoldServer } from "./hold-control";
import { investigationReply } from "./investigation-script";
import {
  currentTurnOf,
  questionOf,
  smartScript,
  type Script,
  type ScriptReply,
} from "./scripted-model-script";

const MODEL_ERROR = "[model-error]";
const SQL_WORD = /\[sql:([\w-]+)\]/;
const DESCRIBE_WORD = /\[describe:([\w.-]+)\]/;
const FOLLOW_UPS_WORD = "[follow-ups]";
/** The follow-ups "[follow-ups]" appends: one plain, one naming finance.salaries' `grade` column. */
export const SCRIPTED_FOLLOW_UPS = [
  "How many orders were placed last month?",
  "Which `grade` earns the most?",
];

/** Tool-call SQL a test can make the model send (see "[sql:<name>]"). */
const SCRIPTED_SQL: Record<string, string> = {
  fenced: "```sql\nSELECT COUNT(*) AS orders FROM shop.orders;\n```",
  "fenced-two": "```sql\nSELECT COUNT(*) AS orders FROM shop.orders;\nSELECT 1;\n```",
  repeat: "SELECT REPEAT('x', 1000000) AS big FROM shop.orders",
  "cross-join":
    "SELECT a.*, b.*, repeat(a.product_id::VARCHAR, 200) AS wide FROM shop.order_items a, shop.order_items b",
  "bad-column": "SELECT nme FROM shop.customers",
  salaries: "SELECT grade, AVG(salary) AS pay FROM finance.salaries GROUP BY grade ORDER BY pay DESC",
  delete: "DELETE FROM shop.orders WHERE order_id = 1",
  // An uploaded table named directly (files.int.ts: another person's or thread's must be refused).
  "upload-targets": "SELECT * FROM uploads.targets",
  // Answers no test approves (trust tests: "written for this question"), and one trust.int.ts approves.
  written: "SELECT COUNT(*) AS orders FROM shop.orders WHERE order_id > 0",
  "to-verify": "SELECT channel, COUNT(*) AS orders FROM shop.orders WHERE order_id > 0 GROUP BY channel",
  // And one only trust.int.ts's approval on a single instance approves.
  "verify-here": "SELECT channel, COUNT(*) AS orders FROM shop.orders WHERE order_id > 1 GROUP BY channel",
  // Durable runs (durable.int.ts): a query whose BigQuery job the stand-in holds running.
  "held-job": "SELECT COUNT(*) AS orders FROM shop.orders WHERE 1 = 1 /* held job */",
  "string-agg":
    "SELECT string_agg(a.order_id::VARCHAR || repeat('y', 100), ',') AS everything FROM shop.order_items a, shop.products b",
};
export const MIDWAY = "[midway]";
const PAUSE_ANSWER_WORD = /\[pause-answer:([\w-]+)\]/;
/** The answer that stops midway ([MIDWAY]): what is kept of it is always a prefix. */
export const LONG_ANSWER = "This answer stops midway until the run lets go of it. ".repeat(150);

export function apiScript(opts: { holds?: HoldServer } = {}): Script {
  const base = smartScript();
  return async (req) => {
    const q = questionOf(req);
    if (q.includes(MODEL_ERROR)) {
      return {
        error: { status: 400, message: "Request contains an invalid argument (scripted model error)." },
      };
    }
    const word = req.role === "planner" ? HOLD_WORD : req.role === "generator" ? HOLD_ANSWER_WORD : undefined;
    const key = word?.exec(q)?.[1] ?? replanKey(req);
    if (key) {
      const failed = await holdOn(key, opts.holds);
      if (failed) return failed;
    }
    // Investigations: the plan and the report ("[investigation:<variant>]", investigation-script.ts).
    const investigation = investigationReply(req);
    if (investigation) return investigation;
    const scripted = scriptedSql(req) ?? verifiedQuery(req);
    if (scripted) return scripted;
    const reply = await base(req);
    const pause = req.role === "generator" ? PAUSE_ANSWER_WORD.exec(q)?.[1] : undefined;
    if (pause && opts.holds) {
      const more = " The count comes straight from the orders table, with nothing filtered out.";
      return {
        ...reply,
        text: `${reply.text ?? ""}${more.repeat(4)}`,
        pauseAfterChunks: 3,
        resume: opts.holds.hold(pause),
      };
    }
    if (req.role === "generator" && q.includes(MIDWAY))
      return { ...reply, text: LONG_ANSWER, holdAfterChunks: 3 };
    if (req.role === "generator" && q.includes(FOLLOW_UPS_WORD)) {
      return {
        ...reply,
        text: `${reply.text ?? ""}\n:::follow-ups\n${SCRIPTED_FOLLOW_UPS.map((f) => `- ${f}`).join("\n")}`,
      };
    }
    return reply;
  };
}

const HOLD_REPLAN_WORD = /\[hold-replan:([\w-]+)\]/;

/** The hold of a planner call made after a tool result of this turn ("[hold-replan:<key>]"). */
function replanKey(req: Parameters<Script>[0]): string | undefined {
  if (req.role !== "planner") return undefined;
  const key = HOLD_REPLAN_WORD.exec(questionOf(req))?.[1];
  return key && currentTurnOf(req).some((t) => t.role === "tool") ? key : undefined;
}

/**
 * The planner's reply when the system prompt gives a verified query for exactly the question asked
 * ("- Question: <q>\n  Verified query: <sql>"): that SQL, as a model that follows the team's
 * verified queries sends it; then, after the tool's answer, no further query.
 */
export function verifiedQuery(req: Parameters<Script>[0]): ScriptReply | undefined {
  if (req.role !== "planner") return undefined;
  const q = questionOf(req).trim();
  const block = req.system.split("\n- Question: ").find((b) => b.startsWith(`${q}\n`));
  // The SQL runs to the next line that is not indented (continuation lines of a multi-line query are).
  const sql = block
    ?.split("\n  Verified query: ")[1]
    ?.split(/\n(?=\S)/)[0]
    ?.trim();
  if (!sql) return undefined;
  const usage = { input: 10, output: 5 };
  if (currentTurnOf(req).some((t) => t.role === "tool" && t.toolName === "bq_query"))
    return { text: "The results answer the question.", usage };
  return { toolCalls: [{ name: "bq_query", args: { sql } }], usage };
}

/** "[definition:<term>]" in a question: the planner uses the term's definition from its system prompt. */
const DEFINITION_WORD = /\[definition:([^\]]+)\]/;

/**
 * The SQL the system prompt's glossary gives for the term the question names with
 * "[definition:<term>]" ("- <term>…: … Computed as: <sql>"), as a model that follows the team's
 * definitions writes it; undefined when the prompt has no such term (the person may not see it).
 */
function definitionSql(req: Parameters<Script>[0]): string | undefined {
  const term = DEFINITION_WORD.exec(questionOf(req))?.[1];
  if (!term) return undefined;
  const line = req.system.split("\n- ").find((l) => l.startsWith(`${term} `) || l.startsWith(`${term}:`));
  return line?.split(" Computed as: ")[1]?.split("\n\n")[0]?.trim();
}

/**
 * The planner's reply for a question with "[sql:<name>]" (or "[definition:<term>]"): that SQL as its first query of the turn,
 * then (after the tool's answer, whatever it was) no further query.
 */
export function scriptedSql(req: Parameters<Script>[0]): ScriptReply | undefined {
  if (req.role !== "planner") return undefined;
  const q = questionOf(req);
  const sql = SCRIPTED_SQL[SQL_WORD.exec(q)?.[1] ?? ""] ?? definitionSql(req);
  const table = DESCRIBE_WORD.exec(q)?.[1];
  if (!sql && !table) return undefined;
  const usage = { input: 10, output: 5 };
  const tool = sql ? "bq_query" : "describe_table";
  const called = currentTurnOf(req).some((t) => t.role === "tool" && t.toolName === tool);
  if (called) return { text: "The results answer the question.", usage };
  return { toolCalls: [{ name: tool, args: sql ? { sql } : { table } }], usage };
}

/** Waits at the hold; a hold that cannot work or is never released fails the call, saying why. */
async function holdOn(key: string, holds: HoldServer | undefined): Promise<ScriptReply | undefined> {
  if (!holds) {
    return {
      error: { status: 400, message: `Hold "${key}": this stand-in was started without a hold server.` },
    };
  }
  const outcome = await holds.hold(key);
  if (outcome === "released") return undefined;
  const why =
    outcome === "timeout"
      ? `was never released within ${holds.timeoutMs} ms (the test must release it)`
      : "was let go because the test stack is shutting down";
  // 400: ChatVertexAI does not retry it, so the run ends with an error event at once.
  return { error: { status: 400, message: `The model call held on "${key}" ${why}.` } };
}

/**
 * The Google stand-in's script for the browser tests: the sample-data analyst (`smartScript`),
 * plus: a question containing "in detail" gets a few seconds of answer (so a test sees the SQL,
 * table and chart arrive while the answer still streams), one containing "long report" gets
 * its first chunks and then waits until the run lets go (so a test can press Stop midway),
 * "[pause:<key>]" pauses the detailed answer after a few chunks until the test releases <key>
 * (hold-control.ts), and "[quota]" gets a 429. Answer-rendering cases (answer.e2e.ts): "revenue by
 * month" queries months as text (strftime → VARCHAR) sorted by revenue, as a real model wrote it,
 * and its answer ends with three follow-up questions after the marker; "[markdown]" gets an answer
 * with bold, a list, a table, a link and HTML tags (which the page must show as text);
 * "[sql:<name>]" sends one of api-script.ts' SCRIPTED_SQL as the planner's query; a question the
 * prompt gives a verified query for (other than revenue by month) is answered with that query.
 */
import type { HoldServer } from "./hold-control";
import { scriptedSql, verifiedQuery } from "./api-script";
import { investigationReply } from "./investigation-script";
import { FOLLOW_UPS_MARKER } from "../../functions/src/contract/follow-ups";
import { currentTurnOf, questionOf, smartScript, type Script } from "./scripted-model-script";

/** `[pause:<key>]` in a question: the answer streams a few chunks, then waits until the test releases <key>. */
const PAUSE_WORD = /\[pause:([\w-]+)\]/;

const LONG_REPORT = "long report";
/** A question with this word gets the Gemini API's 429 (quota) answer to its first model call. */
export const QUOTA = "[quota]";
const IN_DETAIL = "in detail";

/** Months as text, the rows sorted by revenue: the chart must still read in calendar order. */
const REVENUE_BY_MONTH = /revenue by month/i;
const MONTH_SQL =
  "SELECT strftime(o.order_date, '%Y-%m') AS month, ROUND(SUM(oi.line_total), 2) AS revenue " +
  "FROM shop.orders o JOIN shop.order_items oi ON oi.order_id = o.order_id " +
  "WHERE o.status NOT IN ('cancelled', 'returned') AND o.order_date >= DATE '2025-01-01' " +
  "AND o.order_date < DATE '2026-01-01' GROUP BY month ORDER BY revenue DESC";
export const MONTH_FOLLOW_UPS = [
  "What was revenue by channel in 2025?",
  "How did revenue in 2025 compare with 2024?",
  "Which categories had the most revenue in 2025?",
];

/** An answer using the Markdown a real model writes, plus HTML that must never run. */
export const MARKDOWN_WORD = "[markdown]";
const MARKDOWN_ANSWER = [
  "Revenue is **concentrated** in two channels.",
  "",
  "- Web leads",
  "- Mobile app follows",
  "",
  "| channel | share |",
  "| --- | --- |",
  "| web | 55% |",
  "| mobile_app | 30% |",
  "",
  'See <img src="x" onerror="window.__quarryPwned = 1"> and <script>window.__quarryPwned = 2</script> and [the docs](https://example.com/docs).',
].join("\n");

export function e2eScript(opts: { holds?: HoldServer } = {}): Script {
  const base = smartScript();
  return async (req) => {
    const pause = PAUSE_WORD.exec(questionOf(req))?.[1];
    if (questionOf(req).includes(QUOTA)) {
      return { error: { status: 429, message: "Resource has been exhausted (e.g. check quota)." } };
    }
    const q = questionOf(req);
    const investigation = investigationReply(req);
    if (investigation) return investigation;
    const scripted = scriptedSql(req);
    if (scripted) return scripted;
    if (req.role === "planner" && REVENUE_BY_MONTH.test(q)) {
      const used = currentTurnOf(req)
        .filter((t) => t.role === "tool")
        .map((t) => t.toolName);
      if (used.includes("list_tables") && !used.includes("bq_query"))
        return { toolCalls: [{ name: "bq_query", args: { sql: MONTH_SQL } }] };
    }
    const verified = REVENUE_BY_MONTH.test(q) ? undefined : verifiedQuery(req);
    if (verified) return verified;
    if (req.role === "generator" && q.includes(MARKDOWN_WORD)) return { text: MARKDOWN_ANSWER };
    const reply = await base(req);
    if (req.role === "generator" && REVENUE_BY_MONTH.test(q) && req.system.includes(FOLLOW_UPS_MARKER)) {
      const block = [FOLLOW_UPS_MARKER, ...MONTH_FOLLOW_UPS.map((f) => `- ${f}`)].join("\n");
      return { ...reply, text: `**Revenue by month in 2025**, in calendar order.\n\n${block}` };
    }
    if (req.role === "generator" && questionOf(req).toLowerCase().includes(LONG_REPORT)) {
      const para = "Sales are spread across many categories, and each one tells a slightly different story. ";
      // Streams its first chunks, then waits until the run lets go of the call (Stop): no race.
      return { ...reply, text: para.repeat(60), holdAfterChunks: 25 };
    }
    if (req.role === "generator" && questionOf(req).toLowerCase().includes(IN_DETAIL)) {
      const more = " Every category contributes, and the ranking above is by revenue after cancellations.";
      const text = `${reply.text ?? ""}${more.repeat(8)}`;
      if (pause && opts.holds) return { ...reply, text, pauseAfterChunks: 3, resume: opts.holds.hold(pause) };
      return { ...reply, text };
    }
    return reply;
  };
}

/**
 * The script language shared by the in-process scripted chat model and the loopback Vertex AI
 * stand-in: a request normalised from either LangChain messages or a Gemini request body, and a
 * reply (text and/or tool calls, usage, or an error). One script drives both.
 */
import {
  ROLE_ADEQUACY,
  ROLE_GENERATOR,
  ROLE_INVESTIGATOR,
  ROLE_PLANNER,
  ROLE_REPORTER,
  ROLE_SUMMARIZER,
} from "../../functions/src/agent/prompts";

export type ScriptRole =
  "planner" | "generator" | "summarizer" | "verifier" | "investigator" | "reporter" | "unknown";

export interface ScriptTurn {
  role: "user" | "model" | "tool";
  text: string;
  toolCalls?: { name: string; args: Record<string, unknown> }[];
  /** For role "tool": which tool answered. */
  toolName?: string;
}

export interface ScriptRequest {
  /** Which node is calling, read from the prompt's role line. */
  role: ScriptRole;
  system: string;
  turns: ScriptTurn[];
  /** Names of the tools bound to this call. */
  tools: string[];
  /** 0-based index of this call in the script's lifetime. */
  call: number;
}

export interface ScriptReply {
  text?: string;
  toolCalls?: { name: string; args: Record<string, unknown> }[];
  usage?: { input: number; output: number };
  /** Fail this call: the stand-in answers with this HTTP status; the scripted model throws. */
  error?: { status: number; message: string };
  /** Stand-ins: answer as a safety block (Gemini: promptFeedback.blockReason SAFETY, no candidates). */
  blocked?: boolean;
  /** Stand-ins: send this many chunks, then wait until the client closes the connection. */
  holdAfterChunks?: number;
  /** Stand-ins: send this many chunks, then wait for `resume` (a test's release) before the rest. */
  pauseAfterChunks?: number;
  resume?: Promise<unknown>;
  /**
   * Stand-ins: drop the connection after this many chunks (0: before the status line, nothing
   * sent), after any hold or pause at that chunk — with a TCP reset (ECONNRESET), or closed the way
   * a server closes a keep-alive connection it considers idle (the client reads "other side
   * closed", UND_ERR_SOCKET). The scripted model ignores it.
   */
  drop?: { afterChunks: number; with: "reset" | "close" };
}

export type Script = (req: ScriptRequest) => ScriptReply | Promise<ScriptReply>;

/** The role a prompt announces on its first lines. */
export function roleOf(text: string): ScriptRole {
  if (text.includes(ROLE_PLANNER)) return "planner";
  if (text.includes(ROLE_GENERATOR)) return "generator";
  if (text.includes(ROLE_SUMMARIZER)) return "summarizer";
  if (text.includes(ROLE_ADEQUACY)) return "verifier";
  if (text.includes(ROLE_INVESTIGATOR)) return "investigator";
  if (text.includes(ROLE_REPORTER)) return "reporter";
  return "unknown";
}

/** The current turn: turns after the last user turn. */
export function currentTurnOf(req: ScriptRequest): ScriptTurn[] {
  let i = req.turns.length - 1;
  while (i >= 0 && req.turns[i].role !== "user") i--;
  return req.turns.slice(i + 1);
}

/** The last user text. */
export function questionOf(req: ScriptRequest): string {
  for (let i = req.turns.length - 1; i >= 0; i--) if (req.turns[i].role === "user") return req.turns[i].text;
  return "";
}

/** Replies per role, in order; a role that runs out repeats its last reply. */
export function byRole(replies: Partial<Record<ScriptRole, ScriptReply[]>>): Script {
  const used: Partial<Record<ScriptRole, number>> = {};
  return (req) => {
    const list = replies[req.role];
    if (!list?.length) throw new Error(`The script has no reply for a ${req.role} call (call ${req.call}).`);
    const i = used[req.role] ?? 0;
    used[req.role] = i + 1;
    return list[Math.min(i, list.length - 1)];
  };
}

/** Replies in call order, whatever the role. */
export function sequence(...replies: ScriptReply[]): Script {
  return (req) => {
    const r = replies[req.call];
    if (!r)
      throw new Error(`The script has only ${replies.length} replies; call ${req.call} asked for another.`);
    return r;
  };
}

const SAMPLE_QUERIES: { match: RegExp; sql: string }[] = [
  {
    match: /categor/i,
    sql:
      "SELECT p.category, ROUND(SUM(oi.quantity * oi.unit_price), 2) AS revenue FROM shop.order_items oi " +
      "JOIN shop.products p ON p.product_id = oi.product_id JOIN shop.orders o ON o.order_id = oi.order_id " +
      "WHERE o.status NOT IN ('cancelled', 'returned') GROUP BY p.category ORDER BY revenue DESC",
  },
  {
    match: /countr/i,
    sql: "SELECT country, COUNT(*) AS customers FROM shop.customers GROUP BY country ORDER BY customers DESC LIMIT 10",
  },
  {
    match: /channel/i,
    sql: "SELECT channel, COUNT(*) AS orders FROM shop.orders GROUP BY channel ORDER BY orders DESC",
  },
  { match: /order/i, sql: "SELECT COUNT(*) AS orders FROM shop.orders" },
  { match: /customer/i, sql: "SELECT COUNT(*) AS customers FROM shop.customers" },
  { match: /product/i, sql: "SELECT COUNT(*) AS products FROM shop.products" },
];

/** "revenue against target": joins an uploaded table with month and target columns to the orders. */
const TARGET = /against (the )?targets?/i;
const UPLOAD_LINE = /^- (\S+), \d+ rows: the person's uploaded file .*\(columns: (.*)\)$/gm;

/** The SQL joining the person's uploaded targets (from the prompt's uploads lines) with 2025's revenue. */
export function targetJoin(system: string): string | undefined {
  for (const [, table, columns] of system.matchAll(UPLOAD_LINE)) {
    const names = columns.split(", ").map((c) => c.split(" ")[0]);
    if (!names.includes("month") || !names.includes("target")) continue;
    return (
      `SELECT t.month, r.revenue, t.target FROM ${table} t LEFT JOIN (` +
      "SELECT strftime(o.order_date, '%Y-%m') AS month, ROUND(SUM(oi.quantity * oi.unit_price), 2) AS revenue " +
      "FROM shop.orders o JOIN shop.order_items oi ON oi.order_id = o.order_id " +
      "WHERE o.status NOT IN ('cancelled', 'returned') AND extract(year FROM o.order_date) = 2025 GROUP BY 1" +
      ") r ON r.month = CAST(t.month AS VARCHAR) ORDER BY t.month"
    );
  }
  return undefined;
}

/** A question the analyst cannot settle alone: it asks which measure is meant (when it may ask). */
export const AMBIGUOUS = /how are we doing/i;
export const CLARIFYING_QUESTION = "Which measure do you mean?";
export const CLARIFYING_CHOICES = ["Number of orders", "Number of customers"];

const GREETING = /^\s*(hi|hello|hey|thanks|thank you|good (morning|afternoon|evening))\b/i;

/**
 * A plausible analyst over the DuckDB sample dataset (`shop.*`): the planner lists tables once,
 * then queries with SQL chosen by keywords (orders, customers, categories, countries, channels);
 * greetings get no tools; the generator answers from the last tool result; the summarizer
 * condenses. Good enough to drive the API and the web page end to end.
 */
export function smartScript(): Script {
  return (req) => {
    const usage = {
      input: Math.ceil((req.system.length + JSON.stringify(req.turns).length) / 4),
      output: 20,
    };
    const q = questionOf(req);
    const turn = currentTurnOf(req);
    if (req.role === "planner") {
      if (GREETING.test(q)) return { text: "No data needed.", usage };
      const toolsUsed = turn.filter((t) => t.role === "tool").map((t) => t.toolName);
      const answered = turn.find((t) => t.role === "tool" && t.toolName === "ask_user");
      if (AMBIGUOUS.test(q) && req.tools.includes("ask_user") && !answered) {
        return {
          toolCalls: [
            { name: "ask_user", args: { question: CLARIFYING_QUESTION, choices: CLARIFYING_CHOICES } },
          ],
          usage,
        };
      }
      if (!toolsUsed.includes("list_tables"))
        return { toolCalls: [{ name: "list_tables", args: {} }], usage };
      if (!toolsUsed.includes("bq_query")) {
        const target = TARGET.test(q) ? targetJoin(req.system) : undefined;
        if (target) return { toolCalls: [{ name: "bq_query", args: { sql: target } }], usage };
        // The person's answer to a clarifying question decides the query when there is one.
        const about = answered ? answered.text : q;
        const pick = SAMPLE_QUERIES.find((s) => s.match.test(about)) ?? SAMPLE_QUERIES[3];
        return { toolCalls: [{ name: "bq_query", args: { sql: pick.sql } }], usage };
      }
      return { text: "The results answer the question.", usage };
    }
    if (req.role === "generator") {
      if (GREETING.test(q)) return { text: "Hello! Ask me anything about your shop data.", usage };
      const sql = /SQL: ([^\n]*)/.exec(req.system)?.[1];
      const rows = /Rows: (\d+)/.exec(req.system)?.[1];
      const failed = /could not be retrieved: ([^\n]*)/.exec(req.system)?.[1];
      if (failed) return { text: `I could not get the data: ${failed}`, usage };
      return {
        text: sql
          ? `Here is what I found (${rows ?? "?"} rows) with \`${sql}\`.`
          : "I have no data for that yet.",
        usage,
      };
    }
    if (req.role === "summarizer") {
      const asked = /User: ([^\n]*)/.exec(q)?.[1] ?? "their data";
      return { text: `Summary: the user asked about ${asked.slice(0, 60)}`, usage };
    }
    if (req.role === "verifier") return { text: "YES", usage };
    return { text: "OK", usage };
  };
}

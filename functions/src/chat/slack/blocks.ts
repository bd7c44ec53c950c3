/**
 * An answer as Slack blocks (pure): the written answer as a `markdown` block, the first rows as a
 * `table` block with "N of M rows", how it was computed when the trust work says so, and the
 * buttons — Open in Quarry (the same conversation in the page), Show SQL, 👍 and 👎 (which asks
 * for a reason). Button values carry only the answer record's id: what the buttons act on stays
 * on the server.
 */
import type { ColumnInfo, JsonValue, Row } from "../../contract/events";

/** Rows a table block shows (Slack allows 100; a chat answer stays short). */
export const SLACK_TABLE_ROWS = 10;
/** Columns a table block takes (Slack's limit). */
const SLACK_TABLE_COLUMNS = 20;
/** The `markdown` block's limit. */
const MARKDOWN_CHARS = 12_000;
/** A table cell is cut to this many characters. */
const CELL_CHARS = 200;

/** Action ids of the answer's buttons, as the interactions endpoint reads them back. */
export const ACTIONS = {
  open: "quarry_open",
  sql: "quarry_sql",
  up: "quarry_up",
  down: "quarry_down",
} as const;

/** The `callback_id` of the modal that asks why an answer was not good. */
export const DOWNVOTE_MODAL = "quarry_downvote";

type Block = Record<string, unknown>;

export interface AnswerParts {
  answer: string;
  result?: { columns: ColumnInfo[]; rows: Row[]; totalRows: number; totalRowsAtLeast?: boolean };
  /** "Verified" or "Written for this question", when the run said how it was computed. */
  trust?: string;
  /** The conversation in the page. */
  threadUrl: string;
  /** The answer record's id (the buttons' value). */
  answerId: string;
  /** Whether the answer ran SQL (the Show SQL button). */
  hasSql: boolean;
}

function cell(value: JsonValue | undefined): { type: "raw_text"; text: string } {
  const text =
    value === null || value === undefined
      ? ""
      : typeof value === "object"
        ? JSON.stringify(value)
        : String(value);
  return {
    type: "raw_text",
    text: text.length > CELL_CHARS ? `${text.slice(0, CELL_CHARS - 1)}…` : text || " ",
  };
}

/** "3 of 120 rows" (or "all 3 rows"). */
export function rowsLine(shown: number, total: number, atLeast: boolean): string {
  if (shown >= total && !atLeast) return `${total} ${total === 1 ? "row" : "rows"}`;
  return `${shown} of ${atLeast ? "more than " : ""}${total} rows`;
}

/** The first rows as a table block, with the line that says how many there were. */
function tableBlocks(result: NonNullable<AnswerParts["result"]>): Block[] {
  const columns = result.columns.slice(0, SLACK_TABLE_COLUMNS);
  if (!columns.length) return [];
  const rows = result.rows.slice(0, SLACK_TABLE_ROWS);
  const total = Math.max(result.totalRows, result.rows.length);
  const header = columns.map((c) => cell(c.name));
  const body = rows.map((r) => columns.map((c) => cell(r[c.name])));
  const cut = result.columns.length > columns.length ? ` (first ${columns.length} columns)` : "";
  return [
    { type: "table", rows: [header, ...body] },
    {
      type: "context",
      elements: [
        { type: "mrkdwn", text: `${rowsLine(rows.length, total, result.totalRowsAtLeast === true)}${cut}` },
      ],
    },
  ];
}

function button(text: string, actionId: string, extra: Record<string, unknown>): Block {
  return { type: "button", text: { type: "plain_text", text, emoji: true }, action_id: actionId, ...extra };
}

/** The answer's buttons. */
function answerActions(parts: Pick<AnswerParts, "threadUrl" | "answerId" | "hasSql">): Block {
  const value = parts.answerId;
  return {
    type: "actions",
    block_id: `quarry_answer_${value}`,
    elements: [
      button("Open in Quarry", ACTIONS.open, { url: parts.threadUrl }),
      ...(parts.hasSql ? [button("Show SQL", ACTIONS.sql, { value })] : []),
      button("👍", ACTIONS.up, { value }),
      button("👎", ACTIONS.down, { value }),
    ],
  };
}

/** The whole answer: text, table, trust line and buttons. */
export function answerBlocks(parts: AnswerParts): Block[] {
  const text = parts.answer.trim() || "I have no written answer for this.";
  return [
    { type: "markdown", text: text.length > MARKDOWN_CHARS ? `${text.slice(0, MARKDOWN_CHARS - 1)}…` : text },
    ...(parts.result ? tableBlocks(parts.result) : []),
    ...(parts.trust ? [{ type: "context", elements: [{ type: "mrkdwn", text: parts.trust }] }] : []),
    answerActions(parts),
  ];
}

/** The SQL an answer ran, as a code block for an ephemeral message. */
export function sqlBlocks(sql: string[]): Block[] {
  if (!sql.length) return [{ type: "section", text: { type: "mrkdwn", text: "This answer ran no SQL." } }];
  return sql.map((q) => ({
    type: "section",
    text: { type: "mrkdwn", text: `\`\`\`${q.replace(/```/g, "ʼʼʼ").slice(0, 2900)}\`\`\`` },
  }));
}

/** The modal that asks why an answer was not good (👎). */
export function downvoteModal(answerId: string): Block {
  return {
    type: "modal",
    callback_id: DOWNVOTE_MODAL,
    private_metadata: answerId,
    title: { type: "plain_text", text: "What was wrong?" },
    submit: { type: "plain_text", text: "Send" },
    close: { type: "plain_text", text: "Cancel" },
    blocks: [
      {
        type: "input",
        block_id: "reason",
        label: { type: "plain_text", text: "Tell the data team what was wrong with this answer" },
        element: { type: "plain_text_input", action_id: "reason", multiline: true, max_length: 1000 },
      },
    ],
  };
}

/**
 * An answer as a Google Chat card (cards v2, pure): the written answer, the key rows as text with
 * "N of M rows", how it was computed, the SQL in a collapsed section (Show SQL), Open in Quarry, and
 * 👍 / 👎 (which opens a dialog asking why) when the answer has a record for its buttons.
 */
import type { ColumnInfo, JsonValue, Row } from "../../contract/events";

/** Rows the card lists. */
const CARD_ROWS = 10;
const TEXT_CHARS = 4000;

export interface CardParts {
  answer: string;
  result?: { columns: ColumnInfo[]; rows: Row[]; totalRows: number; totalRowsAtLeast?: boolean };
  sql: string[];
  trust?: string;
  threadUrl: string;
  /** The chart's image URL (signed, expiring), when there is a chart. */
  chartUrl?: string;
  /** The answer record's id (chat/store.ts): the 👍 / 👎 buttons carry only this. */
  answerId?: string;
}

/** The functions the card's buttons invoke (`common.invokedFunction` of a CARD_CLICKED event). */
export const CARD_ACTIONS = { up: "quarry_up", down: "quarry_down", reason: "quarry_down_reason" } as const;

const action = (fn: string, answerId: string, extra: Record<string, unknown> = {}) => ({
  action: { function: fn, parameters: [{ key: "answer", value: answerId }] },
  ...extra,
});

const cellText = (v: JsonValue | undefined) =>
  v === null || v === undefined ? "" : typeof v === "object" ? JSON.stringify(v) : String(v);

/** The first rows as lines of text ("channel: web · orders: 120"), and how many there were. */
export function keyRows(result: NonNullable<CardParts["result"]>): string {
  const rows = result.rows.slice(0, CARD_ROWS);
  const total = Math.max(result.totalRows, result.rows.length);
  const lines = rows.map((r) => result.columns.map((c) => `${c.name}: ${cellText(r[c.name])}`).join(" · "));
  const shown =
    rows.length < total || result.totalRowsAtLeast
      ? `${rows.length} of ${result.totalRowsAtLeast ? "more than " : ""}${total} rows`
      : `${total} ${total === 1 ? "row" : "rows"}`;
  return [...lines, `<i>${shown}</i>`].join("\n").slice(0, TEXT_CHARS);
}

const paragraph = (text: string) => ({ textParagraph: { text: text.slice(0, TEXT_CHARS) } });

/** The message body: a text fallback and the card. */
export function answerMessage(parts: CardParts) {
  const sections: Record<string, unknown>[] = [
    { widgets: [paragraph(parts.answer.trim() || "I have no written answer for this.")] },
  ];
  if (parts.chartUrl) {
    sections.push({ widgets: [{ image: { imageUrl: parts.chartUrl, altText: "Chart of the answer" } }] });
  }
  if (parts.result?.columns.length)
    sections.push({ header: "Rows", widgets: [paragraph(keyRows(parts.result))] });
  if (parts.trust) sections.push({ widgets: [paragraph(parts.trust)] });
  if (parts.sql.length) {
    sections.push({
      header: "Show SQL",
      collapsible: true,
      uncollapsibleWidgetsCount: 0,
      widgets: parts.sql.map((q) => paragraph(`<font face="monospace">${q.replace(/</g, "&lt;")}</font>`)),
    });
  }
  sections.push({
    widgets: [
      {
        buttonList: {
          buttons: [
            { text: "Open in Quarry", onClick: { openLink: { url: parts.threadUrl } } },
            ...(parts.answerId
              ? [
                  { text: "👍", onClick: action(CARD_ACTIONS.up, parts.answerId) },
                  {
                    text: "👎",
                    onClick: action(CARD_ACTIONS.down, parts.answerId, { interaction: "OPEN_DIALOG" }),
                  },
                ]
              : []),
          ],
        },
      },
    ],
  });
  return {
    text: parts.answer.slice(0, TEXT_CHARS) || "Quarry answered.",
    cardsV2: [{ cardId: "quarry-answer", card: { sections } }],
  };
}

/** The dialog 👎 opens: what was wrong, sent with the answer's id. */
export function reasonDialog(answerId: string) {
  return {
    actionResponse: {
      type: "DIALOG",
      dialogAction: {
        dialog: {
          body: {
            header: { title: "What was wrong?" },
            sections: [
              {
                widgets: [
                  {
                    textInput: {
                      name: "reason",
                      label: "Tell the data team what was wrong with this answer",
                      type: "MULTIPLE_LINE",
                    },
                  },
                  {
                    buttonList: {
                      buttons: [{ text: "Send", onClick: action(CARD_ACTIONS.reason, answerId) }],
                    },
                  },
                ],
              },
            ],
          },
        },
      },
    },
  };
}

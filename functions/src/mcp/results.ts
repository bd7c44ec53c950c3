/**
 * What MCP tools answer with, as pure functions: a result cut to a row count with its "N of M rows"
 * notice, and the text block that goes beside the structured content (clients that show only text
 * still see the rows, the SQL and the follow-ups). No I/O, unit-tested.
 */
import { chartSpec, chooseChart, type ChartType, type VegaLiteSpec } from "../contract/chart";
import type { ColumnInfo, ComputedFacts, JsonValue, Row } from "../contract/events";

/**
 * The chart Quarry's page would draw for these rows (the contract's `chooseChart`): its type, the
 * other types it can be drawn as, and its Vega-Lite spec; or no spec and the reason.
 */
export interface ResultChart {
  type?: ChartType;
  options: ChartType[];
  spec?: VegaLiteSpec;
  /** Why there is no chart, or what the chart leaves out. */
  reason?: string;
}

/** A query result as an MCP client gets it: the first rows, and how many there were. */
export interface RowsPreview {
  sql: string;
  columns: { name: string; type: string }[];
  rows: Row[];
  /** Rows shown here. */
  shown: number;
  /** Rows the query produced (a lower bound when `total_at_least`). */
  total: number;
  total_at_least: boolean;
  /** "3 of 120 rows": said whenever rows were cut. */
  note: string;
  /** The chart of the rows shown, as the page chooses and specifies it. */
  chart: ResultChart;
}

/** The first `maxRows` rows of a result, with the notice that says how many there were. */
export function previewRows(
  result: { sql: string; columns: ColumnInfo[]; rows: Row[]; totalRows: number; totalRowsAtLeast?: boolean },
  maxRows: number,
): RowsPreview {
  const rows = result.rows.slice(0, maxRows);
  const total = Math.max(result.totalRows, result.rows.length);
  const atLeast = result.totalRowsAtLeast === true;
  return {
    sql: result.sql,
    columns: result.columns.map((c) => ({ name: c.name, type: c.type })),
    rows,
    shown: rows.length,
    total,
    total_at_least: atLeast,
    note: rowsNote(rows.length, total, atLeast),
    chart: resultChart(result.columns, rows, result.sql, rows.length < total || atLeast),
  };
}

/** The chart of the rows shown; when rows were cut, the reason says the chart covers only those. */
export function resultChart(columns: ColumnInfo[], rows: Row[], sql: string, cut: boolean): ResultChart {
  const choice = chooseChart(columns, rows, { sql });
  const type = choice.options[0];
  const reasons = [choice.reason, type && cut ? `The chart shows the first ${rows.length} rows.` : undefined];
  const reason = reasons.filter(Boolean).join(" ");
  return {
    ...(type ? { type, spec: chartSpec(choice, type) } : {}),
    options: choice.options,
    ...(reason ? { reason } : {}),
  };
}

/** "5 rows", or "50 of 1,204 rows" / "50 of more than 10,000 rows" when cut. */
export function rowsNote(shown: number, total: number, atLeast = false): string {
  const n = (x: number) => x.toLocaleString("en-US");
  if (shown >= total && !atLeast) return `${n(total)} row${total === 1 ? "" : "s"}`;
  return `${n(shown)} of ${atLeast ? "more than " : ""}${n(total)} rows`;
}

/** A cell as Markdown table text: one line, pipes escaped, long values cut. */
function cell(v: JsonValue | undefined): string {
  const text = v === null || v === undefined ? "" : typeof v === "object" ? JSON.stringify(v) : String(v);
  const one = text.replace(/\r?\n/g, " ").replaceAll("|", "\\|");
  return one.length > 200 ? `${one.slice(0, 199)}…` : one;
}

/** The rows as a Markdown table, with the "N of M rows" notice under it. */
export function markdownTable(p: RowsPreview): string {
  if (!p.columns.length) return `(${p.note})`;
  const head = `| ${p.columns.map((c) => cell(c.name)).join(" | ")} |`;
  const rule = `| ${p.columns.map(() => "---").join(" | ")} |`;
  const body = p.rows.map((r) => `| ${p.columns.map((c) => cell(r[c.name])).join(" | ")} |`);
  return [head, rule, ...body, "", `(${p.note})`].join("\n");
}

/** What `ask` answers with (the tool's structured content). */
export interface AskOutput {
  thread_id: string;
  /** answered; asking: a clarifying question waits (the next `ask` on the thread answers it); stopped; failed. */
  status: "answered" | "asking" | "stopped" | "failed";
  /** The written answer, the clarifying question, or what went wrong. */
  answer: string;
  /** Every statement that ran this turn, in order. */
  sql: string[];
  /** The last query's result, cut to a preview. */
  result?: RowsPreview;
  follow_ups: string[];
  /** The choices a clarifying question offers. */
  choices?: string[];
  /** How the answer was computed, when it ran SQL. */
  computed?: ComputedFacts;
}

/**
 * `ask`'s text block: the answer, how it was computed, then (analyst view) what ran and what it
 * returned, then what to ask next. Business view leaves the SQL out; the rows stay.
 */
export function askText(out: AskOutput, view: "business" | "analyst" = "analyst"): string {
  const parts = [out.answer];
  if (out.choices?.length) parts.push(`Choices:\n${out.choices.map((c) => `- ${c}`).join("\n")}`);
  if (out.status === "asking")
    parts.push(`Answer with ask {question: "<your answer>", thread_id: "${out.thread_id}"}.`);
  if (out.computed) parts.push(`How this was computed:\n${computedLines(out.computed).join("\n")}`);
  if (out.sql.length && view === "analyst")
    parts.push(`SQL:\n${out.sql.map((s) => "```sql\n" + s + "\n```").join("\n")}`);
  if (out.result) parts.push(`Result:\n${markdownTable(out.result)}`);
  if (out.follow_ups.length)
    parts.push(`Follow-up questions:\n${out.follow_ups.map((f) => `- ${f}`).join("\n")}`);
  parts.push(`thread_id: ${out.thread_id}`);
  return parts.join("\n\n");
}

/** "How this was computed" as lines of text (the page shows the same facts). */
function computedLines(c: ComputedFacts): string[] {
  const v = c.verification;
  const lines = [
    v.status === "verified"
      ? `- Verified: ${v.by === "verified_query" ? "the data team's verified query" : "the data team's approved definitions"} (${v.names.join(", ")})`
      : "- Written for this question: the data team has not verified it",
  ];
  for (const d of c.definitions)
    lines.push(
      `- Definition: ${d.name} (${d.source}${d.file ? `, ${d.file}` : ""}${d.approved ? ", approved" : ", not reviewed"})`,
    );
  if (c.tables.length) lines.push(`- Tables: ${c.tables.join(", ")}`);
  for (const f of c.filters) lines.push(`- Filter: ${f.column} = ${f.values.join(", ")}`);
  if (c.timeRange)
    lines.push(
      `- Period: ${c.timeRange.from ?? "…"} to ${c.timeRange.to ?? "…"}${c.grain ? `, by ${c.grain}` : ""}`,
    );
  else if (c.grain) lines.push(`- By ${c.grain}`);
  for (const caveat of c.caveats) lines.push(`- Note: ${caveat}`);
  return lines;
}

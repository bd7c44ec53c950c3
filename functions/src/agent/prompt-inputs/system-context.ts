/** Pure builders for the global context every prompt shares (computed once per turn by ingress). */
import type { TableInfo } from "../../tools/types";
import type { UploadRef } from "../../tools/uploads/types";
import type { SystemContext, UserContext } from "../state";
import { SYSTEM_PREAMBLE, fill } from "../prompts";

/** Turns the warehouse's facts into the turn's system context. */
export function buildSystemContext(input: {
  now: Date;
  dialect: string;
  dialectNote: string;
  tables: TableInfo[];
  /** Prompt lines for the tables instead (schema linking: the linked tables' full schemas). */
  tableLines?: string[];
  /** The authored knowledge chosen for the question, rendered ("" for none). */
  knowledge?: string;
  /** The conversation's uploaded tables: always listed, with their columns (linking never drops them). */
  uploads?: readonly UploadRef[];
}): SystemContext {
  const uploaded = new Set((input.uploads ?? []).map((u) => u.table));
  return {
    now: input.now.toISOString(),
    dialect: input.dialect,
    dialectNote: input.dialectNote,
    tables: [
      ...(input.tableLines ?? input.tables.filter((t) => !uploaded.has(t.id)).map(describeTableLine)),
      ...(input.uploads ?? []).map(describeUploadLine),
    ],
    knowledge: input.knowledge ?? "",
  };
}

function describeTableLine(t: TableInfo): string {
  const parts = [t.id];
  if (t.rowCount !== undefined) parts.push(`${t.rowCount} rows`);
  if (t.partitioning) parts.push(`partitioned by ${t.partitioning}`);
  const head = parts.join(", ");
  return t.description ? `- ${head}: ${t.description}` : `- ${head}`;
}

/**
 * An uploaded table as a prompt line: its name, the file and its columns. Only names and types —
 * a file's values reach the model as query results, never as instructions.
 */
function describeUploadLine(u: UploadRef): string {
  const columns = u.columns.map((c) => `${c.name} ${c.type}`).join(", ");
  return `- ${u.table}, ${u.rows} rows: the person's uploaded file "${u.file.replace(/["\n]/g, " ")}" (columns: ${columns})`;
}

/** What the user told us about themselves, as prompt text ("" when nothing). */
function renderUserContext(user: UserContext): string {
  const lines: string[] = [];
  if (user.displayName) lines.push(`The user's name is ${user.displayName}.`);
  if (user.timezone) lines.push(`The user's time zone is ${user.timezone}.`);
  if (user.preferences) lines.push(`The user's preferences: ${user.preferences}`);
  return lines.length ? `${lines.join("\n")}\n` : "";
}

/** The shared preamble filled with the turn's context, the user's context and the running summary. */
export function renderPreamble(sys: SystemContext, user: UserContext, summary: string): string {
  return fill(SYSTEM_PREAMBLE, {
    now: sys.now,
    dialect: sys.dialect,
    dialectNote: sys.dialectNote,
    tables: sys.tables.length ? sys.tables.join("\n") : "(no tables are available)",
    knowledge: sys.knowledge ?? "",
    userContext: renderUserContext(user),
    summary: summary ? `Summary of the earlier conversation: ${summary}\n` : "",
  });
}

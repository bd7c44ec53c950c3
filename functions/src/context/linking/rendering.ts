/** Rendering: the linked tables as the planner's prompt lines. */
import type { Catalog, CatalogTable } from "../catalog";
import { tablesById } from "./joins";
import type { LinkedSchema } from "./types";

/**
 * A table as prompt lines: id, rows, description, then columns with types, notes and values; in
 * brief, its columns and types on one line.
 */
function renderTable(t: CatalogTable, brief = false): string {
  const head = [
    t.id,
    t.rowCount !== undefined ? `${t.rowCount} rows` : "",
    t.partitioning ? `partitioned by ${t.partitioning}` : "",
  ]
    .filter(Boolean)
    .join(", ");
  if (brief) return `- ${head}: ${t.columns.map((c) => `${c.name} ${c.type}`).join(", ")}`;
  const cols = t.columns.map((c) => {
    const vals = c.values?.length
      ? ` [${c.values.slice(0, 12).join(", ")}${c.values.length > 12 ? ", …" : ""}]`
      : "";
    return `    ${c.name} ${c.type}${c.description ? ` — ${c.description}` : ""}${vals}`;
  });
  return `- ${head}${t.description ? `: ${t.description}` : ""}\n${cols.join("\n")}`;
}

/** The linked tables as prompt lines: id, rows, description, then columns with types, notes and values. */
export function renderLinkedTables(catalog: Catalog, linked: LinkedSchema): string[] {
  const byId = tablesById(catalog);
  const lines = linked.tables.map(({ id, brief }) => renderTable(byId.get(id)!, brief));
  if (!linked.all && linked.total > linked.tables.length) {
    lines.push(
      `(${linked.total - linked.tables.length} more tables are not shown: list_tables and describe_table reach them.)`,
    );
  }
  if (linked.joins.length) lines.push(`Joins between these tables: ${linked.joins.join("; ")}`);
  if (linked.datasets.length) {
    lines.push(
      `The question's words fit tables in ${linked.datasets.length} datasets (${linked.datasets.join(", ")}), ` +
        "best first (the others' tables in brief: describe_table gives their notes and values); use the one whose " +
        "columns answer it, and ask which is meant when that is unclear.",
    );
  }
  if (linked.values.length) {
    lines.push(
      "Values the question names: " +
        linked.values.map((v) => `"${v.text}" is ${v.table}.${v.column} = '${v.value}'`).join("; "),
    );
  }
  return lines;
}

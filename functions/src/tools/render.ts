/**
 * Text the model reads for each tool result: short, bounded, and explicit about what was left out.
 */
import type { ColumnInfo, QueryResult, TableInfo, TableSchema, WarehouseError } from "./types";
import { renderPreview } from "./result";

export function renderQuery(result: QueryResult): string {
  const cost =
    result.bytesProcessed || result.bytesBilled
      ? `; ${result.bytesProcessed.toLocaleString("en-US")} bytes processed, ${result.bytesBilled.toLocaleString("en-US")} billed${result.cacheHit ? " (cache hit)" : ""}`
      : "";
  const more = result.totalRowsAtLeast ? "more than " : "";
  return `Query returned ${more}${result.totalRows.toLocaleString("en-US")} row${result.totalRows === 1 && !more ? "" : "s"}${
    result.truncated ? ` (the user's table shows the first ${result.rows.length})` : ""
  }${cost}.\n${result.preview}`;
}

export function renderTables(tables: TableInfo[], maxChars: number): string {
  if (!tables.length) return "No tables are available.";
  const lines = tables.map((t) => {
    const parts = [t.id];
    if (t.rowCount !== undefined) parts.push(`${t.rowCount.toLocaleString("en-US")} rows`);
    if (t.partitioning) parts.push(`partitioned by ${t.partitioning}`);
    if (t.clustering?.length) parts.push(`clustered by ${t.clustering.join(", ")}`);
    if (t.description) parts.push(t.description);
    return `- ${parts.join(" — ")}`;
  });
  return bound(`Tables you may query (${tables.length}):\n${lines.join("\n")}`, maxChars);
}

function columnLines(columns: ColumnInfo[], indent: string): string[] {
  return columns.flatMap((c) => [
    `${indent}${c.name} ${c.type}${c.mode && c.mode !== "NULLABLE" ? ` ${c.mode}` : ""}${c.description ? ` — ${c.description}` : ""}`,
    ...(c.fields ? columnLines(c.fields, `${indent}  `) : []),
  ]);
}

export function renderSchema(
  schema: TableSchema,
  caps: { previewRows: number; previewChars: number },
): string {
  const head = [`Table ${schema.id}${schema.description ? ` — ${schema.description}` : ""}`];
  if (schema.rowCount !== undefined) head.push(`Rows: ${schema.rowCount.toLocaleString("en-US")}`);
  if (schema.partitioning) head.push(`Partitioned by: ${schema.partitioning} (filter on it to read less)`);
  if (schema.clustering?.length) head.push(`Clustered by: ${schema.clustering.join(", ")}`);
  const text = [...head, "Columns:", ...columnLines(schema.columns, "  ")].join("\n");
  const remaining = caps.previewChars - text.length - 40;
  if (!schema.sampleRows.length || remaining < 200) return bound(text, caps.previewChars);
  const topLevel = schema.columns.map((c) => ({ name: c.name, type: c.type }));
  const sample = renderPreview(topLevel, schema.sampleRows, schema.sampleRows.length, false, {
    previewRows: Math.min(caps.previewRows, 5),
    previewChars: remaining,
  });
  const rowsOnly = sample.preview.split("\n").slice(1).join("\n"); // the column line repeats the above
  return bound(`${text}\nSample rows:\n${rowsOnly}`, caps.previewChars);
}

export function renderError(err: WarehouseError): string {
  return `Error (${err.category}): ${err.message}`;
}

function bound(text: string, maxChars: number): string {
  return text.length <= maxChars
    ? text
    : `${text.slice(0, Math.max(maxChars - 30, 0))}\n… (cut at ${maxChars} characters)`;
}

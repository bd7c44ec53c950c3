/**
 * DuckDB error text → warehouse error categories. DuckDB prefixes messages with their kind
 * ("Catalog Error:", "Binder Error:", …) and marks the position with a "LINE n:" excerpt and a
 * caret, which we turn into {line, column} for the planner.
 */
import { WarehouseError, type WarehouseErrorCategory } from "../types";

export function mapDuckDbError(err: unknown, interruptedBy?: "timeout" | "cancel"): WarehouseError {
  if (err instanceof WarehouseError) return err;
  const raw = err instanceof Error ? err.message : String(err);
  if (interruptedBy || /INTERRUPT/i.test(raw)) {
    return new WarehouseError(
      "timeout",
      interruptedBy === "cancel"
        ? "The query was cancelled because the run was cancelled."
        : "The query ran longer than the time limit and was stopped. Aggregate more or filter to fewer rows.",
      { engineMessage: raw },
      { cause: err },
    );
  }
  const kind = /^([A-Za-z ]+) Error:/.exec(raw)?.[1] ?? "";
  let category: WarehouseErrorCategory = "invalid_query";
  if (kind === "Catalog") category = "not_found";
  else if (kind === "Permission") category = "refused";
  else if (kind === "Out of Memory") return tooLarge(raw, err);
  else if (
    !["Parser", "Binder", "Conversion", "Invalid Input", "Not implemented", "Syntax", "Constraint"].includes(
      kind,
    )
  ) {
    if (kind === "INTERNAL" || kind === "Fatal") category = "internal";
  }
  const position = positionOf(raw);
  const engineMessage = raw.split("\n\nLINE")[0].trim();
  const hint =
    category === "not_found"
      ? " Use list_tables and describe_table to find the right names."
      : category === "refused"
        ? " Files, extensions and settings are not reachable from SQL; query the listed tables."
        : "";
  return new WarehouseError(
    category,
    `${engineMessage}${position ? ` (line ${position.line}, column ${position.column})` : ""}.${hint}`.replace(
      /\.\./g,
      ".",
    ),
    { engineMessage, ...(position ? { position } : {}) },
    { cause: err },
  );
}

function positionOf(message: string): { line: number; column: number } | undefined {
  const lines = message.split("\n");
  const at = lines.findIndex((l) => /^LINE \d+: /.test(l));
  if (at < 0 || at + 1 >= lines.length) return undefined;
  const prefix = /^LINE (\d+): /.exec(lines[at])!;
  const caret = lines[at + 1].indexOf("^");
  if (caret < 0) return undefined;
  return { line: Number(prefix[1]), column: caret - prefix[0].length + 1 };
}

/** The planner's message when one query needs more memory than a query may use. */
export function tooLarge(engineMessage: string, cause?: unknown): WarehouseError {
  return new WarehouseError(
    "too_large",
    "The query needed more memory than one query may use, so it was stopped. Return fewer rows or columns, " +
      "aggregate in SQL, and do not build very large values (long REPEAT/string_agg results, wide cross joins).",
    { engineMessage },
    cause === undefined ? undefined : { cause },
  );
}

/** DuckDB's own words for a table that does not exist, at a position (what a scope refusal says too). */
export function duckDbNotFound(
  ref: { dataset: string; table: string; datasetSeen: boolean },
  position: { line: number; column: number },
): WarehouseError {
  const engineMessage = ref.datasetSeen
    ? `Catalog Error: Table with name ${ref.table} does not exist!`
    : `Catalog Error: Table with name "${ref.dataset}.${ref.table}" does not exist because schema "${ref.dataset}" does not exist.`;
  return new WarehouseError(
    "not_found",
    `${engineMessage} (line ${position.line}, column ${position.column}). Use list_tables and describe_table to find the right names.`,
    { engineMessage, position },
  );
}

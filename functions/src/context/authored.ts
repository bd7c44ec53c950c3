/**
 * Authored context: what a team knows about its data that the warehouse does not say — a glossary
 * (term → meaning and SQL), rules that always apply, descriptions that override the warehouse's,
 * and verified queries (question → SQL) used as examples. One YAML file per dataset, versioned
 * with the project and deployed with the function (`functions/context/*.yaml`).
 *
 * Loading validates the file's shape with zod and its meaning against the warehouse: every table
 * and column it names must exist, terms must be unique (synonyms included), and every verified
 * query must pass the warehouse's dry run. Every problem is reported with the file and line.
 */
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { LineCounter, parseDocument, isMap, isSeq, type Node as YamlNode } from "yaml";
import { z } from "zod";
import { FULL_SCOPE } from "../tools/scope";
import type { QueryContext, TableSchema, Warehouse } from "../tools/types";
import type { DefinitionUse } from "../contract/events";

const Text = z.string().trim().min(1);

const GlossaryEntry = z
  .object({
    term: Text.max(100),
    synonyms: z.array(Text.max(100)).default([]),
    meaning: Text.max(2_000),
    sql: Text.max(4_000).optional(),
  })
  .strict();

const TableNotes = z
  .object({
    description: Text.max(2_000).optional(),
    columns: z.record(z.string(), Text.max(1_000)).default({}),
  })
  .strict();

export const VerifiedQuery = z
  .object({
    question: Text.max(1_000),
    sql: Text.max(10_000),
    /** Offered on an empty conversation as a question to start with (Cortex Analyst's onboarding questions). */
    starter: z.boolean().optional(),
  })
  .strict();

/**
 * A join the team declares (or an import brings): `from` refers to `to`, both `table.column` (a
 * bare table is taken within the file's dataset); cardinality is rows of `from` per row of `to`.
 * Schema linking joins along declared edges first and writes them with their cardinality.
 */
const JoinEntry = z
  .object({
    from: Text.max(300).regex(/\.[^.]+\.?/, "write table.column"),
    to: Text.max(300).regex(/\.[^.]+\.?/, "write table.column"),
    cardinality: z.enum(["many_to_one", "one_to_one", "one_to_many", "many_to_many"]).default("many_to_one"),
  })
  .strict();

/** More starters than this crowd the first screen; the file must choose. */
const MAX_STARTERS = 6;

const ContextFileSchema = z
  .object({
    /** The dataset (DuckDB schema or BigQuery dataset) the file is about, e.g. `shop`. */
    dataset: Text.max(200),
    glossary: z.array(GlossaryEntry).default([]),
    rules: z.array(Text.max(2_000)).default([]),
    tables: z.record(z.string(), TableNotes).default({}),
    joins: z.array(JoinEntry).default([]),
    verified_queries: z.array(VerifiedQuery).default([]),
  })
  .strict();

export type ContextFile = z.infer<typeof ContextFileSchema>;
/** Where a glossary term came from (set when loading, never written in a file). */
export type GlossaryOrigin = Omit<DefinitionUse, "name">;
export type GlossaryItem = z.infer<typeof GlossaryEntry> & { origin?: GlossaryOrigin };
export type VerifiedQueryItem = z.infer<typeof VerifiedQuery>;

/** One problem in a context file, with where it is. */
export interface ContextProblem {
  file: string;
  line: number;
  message: string;
}

/** A context file that cannot be used; `problems` say what to fix, each with its line. */
export class ContextFileError extends Error {
  readonly problems: ContextProblem[];
  constructor(problems: ContextProblem[]) {
    super(
      `The context file has ${problems.length} problem${problems.length === 1 ? "" : "s"}:\n` +
        problems.map((p) => `  ${p.file}:${p.line}: ${p.message}`).join("\n"),
    );
    this.name = "ContextFileError";
    this.problems = problems;
  }
}

type Path = (string | number)[];

/** The 1-based line of the YAML node at `path`: a map entry's key line, a list item's line, or the nearest parent's. */
function lineOf(doc: ReturnType<typeof parseDocument>, counter: LineCounter, path: Path): number {
  const line = (node: unknown) => {
    const start = (node as YamlNode | undefined)?.range?.[0];
    return typeof start === "number" ? counter.linePos(start).line : undefined;
  };
  for (let n = path.length; n > 0; n--) {
    const parent = doc.getIn(path.slice(0, n - 1), true);
    const key = path[n - 1];
    if (isMap(parent)) {
      const pair = parent.items.find((p) => String((p.key as { value?: unknown })?.value) === String(key));
      const found = line(pair?.key) ?? line(pair?.value);
      if (found) return found;
    } else if (isSeq(parent)) {
      const found = line(parent.items[Number(key)]);
      if (found) return found;
    }
  }
  return line(doc.contents) ?? 1;
}

/** Parses and shape-checks a context file's text; throws ContextFileError naming lines. */
export function parseContextFile(
  text: string,
  file: string,
): { context: ContextFile; lineAt: (p: Path) => number } {
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter, prettyErrors: false, uniqueKeys: true });
  const lineAt = (p: Path) => lineOf(doc, counter, p);
  if (doc.errors.length) {
    throw new ContextFileError(
      doc.errors.map((e) => ({
        file,
        line: e.linePos?.[0]?.line ?? 1,
        message: `not valid YAML: ${e.message.split("\n")[0]}`,
      })),
    );
  }
  const parsed = ContextFileSchema.safeParse(doc.toJS());
  if (!parsed.success) {
    throw new ContextFileError(
      parsed.error.issues.map((i) => ({
        file,
        line: lineAt(i.path as Path),
        message: `${i.path.length ? `${i.path.join(".")}: ` : ""}${i.message}`,
      })),
    );
  }
  const context = parsed.data;
  const problems: ContextProblem[] = [];
  const starters = context.verified_queries.flatMap((q, i) => (q.starter ? [i] : []));
  if (starters.length > MAX_STARTERS) {
    problems.push({
      file,
      line: lineAt(["verified_queries", starters[MAX_STARTERS], "starter"]),
      message: `${starters.length} verified queries are marked starter: true; mark at most ${MAX_STARTERS}`,
    });
  }
  const seen = new Map<string, number>();
  context.glossary.forEach((g, i) => {
    for (const [name, path] of [
      [g.term, ["glossary", i, "term"]],
      ...g.synonyms.map((s, j) => [s, ["glossary", i, "synonyms", j]] as const),
    ] as [string, Path][]) {
      const key = name.toLowerCase();
      const first = seen.get(key);
      if (first !== undefined) {
        problems.push({
          file,
          line: lineAt(path),
          message: `glossary term "${name}" is defined twice (first on line ${first}); keep one entry`,
        });
      } else seen.set(key, lineAt(path));
    }
  });
  if (problems.length) throw new ContextFileError(problems);
  return { context, lineAt };
}

/** A join's end, `table.column` or `dataset.table.column`, as the warehouse's table id and the column. */
export function joinEnd(dataset: string, end: string): { table: string; column: string } {
  const dot = end.lastIndexOf(".");
  return { table: tableId(dataset, end.slice(0, dot)), column: end.slice(dot + 1) };
}

/** Table ids as the warehouse names them (`shop.orders`); a bare name is taken within the dataset. */
function tableId(dataset: string, name: string): string {
  return name.includes(".") ? name : `${dataset}.${name}`;
}

/**
 * Checks a parsed file against the warehouse: tables and columns exist, and every verified query
 * passes the dry run (no data is read). Throws ContextFileError listing every problem.
 */
export async function validateAgainstWarehouse(
  parsed: { context: ContextFile; lineAt: (p: Path) => number },
  warehouse: Warehouse,
  file: string,
): Promise<void> {
  const { context, lineAt } = parsed;
  const problems: ContextProblem[] = [];
  const known = new Map((await warehouse.listTables()).map((t) => [t.id.toLowerCase(), t.id]));
  const schemas = new Map<string, TableSchema>();
  for (const [name, notes] of Object.entries(context.tables)) {
    const id = known.get(tableId(context.dataset, name).toLowerCase());
    if (!id) {
      problems.push({
        file,
        line: lineAt(["tables", name]),
        message: `table "${name}" is not in the warehouse (tables: ${[...known.values()].join(", ")})`,
      });
      continue;
    }
    const schema = await warehouse.describeTable(id);
    schemas.set(id, schema);
    const columns = new Set(schema.columns.map((c) => c.name.toLowerCase()));
    for (const col of Object.keys(notes.columns)) {
      if (!columns.has(col.toLowerCase())) {
        problems.push({
          file,
          line: lineAt(["tables", name, "columns", col]),
          message: `column "${col}" is not in ${id} (columns: ${schema.columns.map((c) => c.name).join(", ")})`,
        });
      }
    }
  }
  for (const [i, j] of context.joins.entries()) {
    for (const side of ["from", "to"] as const) {
      const { table, column } = joinEnd(context.dataset, j[side]);
      const id = known.get(table.toLowerCase());
      const schema = id ? (schemas.get(id) ?? (await warehouse.describeTable(id))) : undefined;
      if (!schema) {
        problems.push({
          file,
          line: lineAt(["joins", i, side]),
          message: `table "${table}" is not in the warehouse`,
        });
      } else if (!schema.columns.some((c) => c.name.toLowerCase() === column.toLowerCase())) {
        problems.push({
          file,
          line: lineAt(["joins", i, side]),
          message: `column "${column}" is not in ${schema.id}`,
        });
      }
    }
  }
  const ctx: QueryContext = {
    userId: "context-check",
    threadId: "context-check",
    runId: "context-check",
    bytesBilledSoFar: 0,
    // The deployment's own check (an admin's approval, the context files): the whole allowed data.
    scope: FULL_SCOPE,
  };
  const sqls: [string, Path][] = [
    ...context.verified_queries.map((q, i) => [q.sql, ["verified_queries", i, "sql"]] as [string, Path]),
  ];
  for (const [sql, path] of sqls) {
    try {
      await warehouse.dryRun(sql, ctx);
    } catch (err) {
      problems.push({
        file,
        line: lineAt(path),
        message: `verified query does not pass the dry run: ${(err as Error).message}`,
      });
    }
  }
  if (problems.length) throw new ContextFileError(problems);
}

/** Reads, parses and validates one context file. */
export async function loadContextFile(path: string, warehouse: Warehouse): Promise<ContextFile> {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new ContextFileError([
      { file: path, line: 1, message: `cannot read the file: ${(err as Error).message}` },
    ]);
  }
  const parsed = parseContextFile(text, path);
  await validateAgainstWarehouse(parsed, warehouse, path);
  const file = basename(path);
  for (const g of parsed.context.glossary as GlossaryItem[])
    g.origin = { source: "authored", file, approved: true };
  return parsed.context;
}

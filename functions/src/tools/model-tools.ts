/**
 * The model's tools over a Warehouse: `bq_query`, `list_tables`, `describe_table`.
 *
 * Every failure becomes a tool result the planner can read and act on — "Error (<category>): …"
 * plus an `{kind: "error"}` artifact — including input that does not match the schema, which
 * LangChain would otherwise throw as ToolInputParsingException and crash the step.
 */
import { ToolMessage } from "@langchain/core/messages";
import {
  DynamicStructuredTool,
  ToolInputParsingException,
  type StructuredToolInterface,
  type ToolRunnableConfig,
} from "@langchain/core/tools";
import { z } from "zod";
import { QuarryError } from "../errors";
import { stripSqlWrapping } from "./policy";
import { runPersonOf } from "./person";
import { inScope, limitedScope, withUploads, withinScope, type Scope } from "./scope";
import { renderError, renderQuery, renderSchema, renderTables } from "./render";
import {
  WarehouseError,
  type Caller,
  type QueryContext,
  type ToolArtifact,
  type TableSchema,
  type ToolName,
  type Warehouse,
} from "./types";

/** What the agent puts in `config.configurable.quarry` for each run. */
type QuarryToolContext = Omit<QueryContext, "signal">;

type Output = [string, ToolArtifact];

/** Caps for what the schema tools show the model (query previews are capped by the engine). */
export interface ToolCaps {
  previewRows: number;
  previewChars: number;
}

const DEFAULT_CAPS: ToolCaps = { previewRows: 50, previewChars: 8_000 };

/**
 * The query context of a tool call, whole: the executor's per-call context (`configurable.quarry`:
 * budget so far, run id, the estimate callback) over the run's person (`configurable.quarry_person`,
 * `person.ts`: email, what is left of their day's bytes, their scope). A call whose run carries no
 * person sees no data: its scope is empty (fails closed).
 */
export function contextOf(config: ToolRunnableConfig | undefined): QueryContext {
  const q = (config?.configurable as { quarry?: Partial<QuarryToolContext> } | undefined)?.quarry ?? {};
  const person = runPersonOf(config?.configurable);
  return {
    ...(person
      ? {
          userEmail: person.email,
          ...(person.bytesLeft !== undefined ? { personBytesLeft: person.bytesLeft } : {}),
          ...(person.via ? { via: person.via } : {}),
          ...(person.uploads?.length ? { uploads: person.uploads } : {}),
          ...(person.schedule ? { scheduleId: person.schedule.id } : {}),
        }
      : {}),
    ...q,
    userId: q.userId ?? person?.uid ?? "anonymous",
    threadId: q.threadId ?? "none",
    runId: q.runId ?? "none",
    bytesBilledSoFar: q.bytesBilledSoFar ?? 0,
    scope: q.scope ?? person?.scope ?? limitedScope([]),
    signal: config?.signal,
  };
}

/** Whose metadata read it is: the person, with the conversation's uploads. */
function callerOf(ctx: QueryContext): Caller {
  return { userId: ctx.userId, ...(ctx.uploads?.length ? { uploads: ctx.uploads } : {}) };
}

function toWarehouseError(err: unknown): WarehouseError {
  if (err instanceof WarehouseError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new WarehouseError("internal", `The tool failed unexpectedly: ${message}`, {}, { cause: err });
}

function errorOutput(err: unknown, sql?: string): Output {
  // Not a tool result: the run ends with it (the person's BigQuery consent is missing or revoked).
  if (err instanceof QuarryError) throw err;
  const e = toWarehouseError(err);
  return [
    renderError(e),
    {
      kind: "error",
      category: e.category,
      message: e.message,
      details: e.details,
      ...(sql !== undefined ? { sql } : {}),
    },
  ];
}

/**
 * A DynamicStructuredTool whose schema mismatches come back as tool errors: the zod schema still
 * describes the arguments to the model, but a wrong call is something the planner should fix,
 * not an exception that ends the run.
 */
class ForgivingTool extends DynamicStructuredTool {
  override async call(arg: unknown, configArg?: unknown, tags?: string[]): Promise<unknown> {
    try {
      return await super.call(arg as never, configArg as never, tags);
    } catch (err) {
      if (!(err instanceof ToolInputParsingException)) throw err;
      const [content, artifact] = errorOutput(
        new WarehouseError(
          "bad_input",
          `The arguments do not match the ${this.name} tool's schema: ${err.message.replace(/\s+/g, " ").trim()}. ` +
            "Call it again with the documented arguments.",
        ),
      );
      const toolCall = isToolCall(arg)
        ? arg
        : (configArg as { toolCall?: { id?: string } } | undefined)?.toolCall;
      if (!toolCall?.id) return content;
      return new ToolMessage({
        status: "error",
        content,
        artifact,
        tool_call_id: toolCall.id,
        name: this.name,
      });
    }
  }
}

function isToolCall(x: unknown): x is { id?: string; args: unknown; type: "tool_call" } {
  return typeof x === "object" && x !== null && (x as { type?: unknown }).type === "tool_call";
}

function make(
  name: ToolName,
  description: string,
  schema: z.ZodObject,
  run: (input: Record<string, unknown>, config?: ToolRunnableConfig) => Promise<Output>,
): StructuredToolInterface {
  return new ForgivingTool({
    name,
    description,
    schema,
    responseFormat: "content_and_artifact",
    func: async (input: Record<string, unknown>, _runManager: unknown, config?: ToolRunnableConfig) =>
      run(input, config),
  }) as unknown as StructuredToolInterface;
}

/**
 * A table's schema when it is inside the person's scope. A table outside it — or one that does not
 * exist, for a person with a limited scope — gets the same answer: not available, and the tables
 * in scope. Unqualified names resolve among the tables in scope.
 */
async function describeInScope(
  warehouse: Warehouse,
  table: string,
  scope: Scope,
  caller: Caller,
): Promise<TableSchema> {
  if (scope.all) return warehouse.describeTable(table, caller);
  const name = table.trim().replace(/[`"]/g, "").toLowerCase();
  const visible = async () => withinScope(scope, await warehouse.listTables(caller), (t) => t.id);
  const unavailable = async () =>
    new WarehouseError(
      "not_found",
      `Table "${table}" is not available. Available tables: ${(await visible()).map((t) => t.id).join(", ") || "none"}.`,
    );
  let id = name;
  if (!name.includes(".")) {
    const found = (await visible()).find((t) => t.id.toLowerCase().endsWith(`.${name}`));
    if (!found) throw await unavailable();
    id = found.id;
  }
  if (!inScope(scope, id)) throw await unavailable();
  try {
    return await warehouse.describeTable(id, caller);
  } catch (err) {
    if (err instanceof WarehouseError && (err.category === "not_found" || err.category === "access_denied"))
      throw await unavailable();
    throw err;
  }
}

/** The facts the planner states beside a query (context/computed.ts checks them against the SQL). */
const QUERY_FACTS = z.object({
  definitions: z
    .array(z.string())
    .optional()
    .describe("The team's terms from the context that this SQL computes, named as the context names them."),
  filters: z
    .array(z.object({ column: z.string(), values: z.array(z.string()) }))
    .optional()
    .describe("Each filter: the column and the values it keeps, as written in the SQL."),
  time_range: z
    .object({ column: z.string().optional(), from: z.string().optional(), to: z.string().optional() })
    .optional()
    .describe("The period covered: ISO dates as the SQL bounds it."),
  grain: z
    .enum(["day", "week", "month", "quarter", "year"])
    .optional()
    .describe("The time grain of the rows."),
  caveats: z
    .array(z.string())
    .optional()
    .describe("What a reader must know: the currency or unit, values left out."),
});

/**
 * Builds the model's tools over a warehouse. Content is bounded text for the model; the artifact
 * (types.ts `ToolArtifact`) carries the full result for the client. Never throws for warehouse
 * failures or bad input.
 */
export function createWarehouseTools(
  warehouse: Warehouse,
  caps: ToolCaps = DEFAULT_CAPS,
): StructuredToolInterface[] {
  const bqQuery = make(
    "bq_query",
    "Run exactly one read-only SELECT statement and get a preview of its result (the user sees the full " +
      "table). Refused: anything but SELECT, tables outside list_tables, queries over the byte budget. " +
      warehouse.dialectNote,
    z.object({
      sql: z
        .string()
        .describe("One SELECT statement in the warehouse's SQL dialect, without a trailing semicolon."),
      facts: QUERY_FACTS.optional().describe(
        "What this SQL computes, for a reader who does not read SQL; each fact must be in the SQL (it is checked).",
      ),
    }),
    async (input, config) => {
      const sql = input.sql as string;
      try {
        const result = await warehouse.query(sql, contextOf(config));
        return [renderQuery(result), { kind: "query", result }];
      } catch (err) {
        return errorOutput(err, typeof sql === "string" ? stripSqlWrapping(sql) : undefined);
      }
    },
  );

  const listTables = make(
    "list_tables",
    "List the tables you may query, with descriptions, row counts, partitioning and clustering.",
    z.object({}),
    async (_input, config) => {
      try {
        const ctx = contextOf(config);
        const tables = withinScope(
          withUploads(ctx.scope, ctx.uploads),
          await warehouse.listTables(callerOf(ctx)),
          (t) => t.id,
        );
        return [renderTables(tables, caps.previewChars), { kind: "tables", tables }];
      } catch (err) {
        return errorOutput(err);
      }
    },
  );

  const describeTable = make(
    "describe_table",
    "Show a table's columns (types, nested fields, descriptions), partitioning and a few sample rows. " +
      "Costs nothing: it reads no query job.",
    z.object({
      table: z.string().describe("Table name exactly as list_tables shows it (dataset.table)."),
    }),
    async (input, config) => {
      try {
        const table = input.table as string;
        if (!table.trim())
          throw new WarehouseError("bad_input", "The table argument is empty; pass a name from list_tables.");
        if (table.length > 1024)
          throw new WarehouseError("bad_input", "The table name is too long; pass a name from list_tables.");
        const ctx = contextOf(config);
        const schema = await describeInScope(
          warehouse,
          table,
          withUploads(ctx.scope, ctx.uploads),
          callerOf(ctx),
        );
        return [renderSchema(schema, caps), { kind: "schema", schema }];
      } catch (err) {
        return errorOutput(err);
      }
    },
  );

  return [bqQuery, listTables, describeTable];
}

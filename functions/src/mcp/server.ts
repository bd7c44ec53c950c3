/**
 * The MCP server of one request (Streamable HTTP, stateless: a new server and transport per POST,
 * nothing kept on the instance between requests), with Quarry's tools bound to the caller. Loaded
 * on the first `/mcp` request with the MCP SDK, never on the function's load path.
 */
import { randomUUID } from "node:crypto";
import type { Request, Response } from "express";
import * as logger from "firebase-functions/logger";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { CallToolResult, ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import { z } from "zod";
import { config } from "../config";
import { QuarryError } from "../errors";
import { runCallerOf } from "../access/caller";
import { graphFactory } from "../runs/runtime";
import { admit, charge, runPerson, type RunCaller } from "../runs/admission";
import { preferencesOf } from "../access/gate";
import { personScope } from "../identity";
import { MAX_QUESTION_CHARS } from "../contract/limits";
import { appHelpers, registerResultView, RESULT_VIEW_META, type AppHelpers } from "./apps";
import { ask } from "./ask";
import { CollectingOutput } from "../runs/collect";
import { callKey, trackCall } from "./cancel";
import { describeTable, listTables, runSql, searchContext, type Answer, type DataDeps } from "./data-tools";
import { askText } from "./results";
import {
  AskOutputShape,
  ContextOutputShape,
  SqlOutputShape,
  SchemaOutputShape,
  TablesOutputShape,
} from "./shapes";

/** Rows `run_sql` returns at most, whatever `max_rows` asks (a client's context is not a CSV export). */
const MAX_SQL_ROWS = 1_000;

/** Every tool only reads (an `ask` writes its own thread, as a question in the page does). */
const READ_ONLY = { readOnlyHint: true, openWorldHint: false } as const;

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** Serves one `/mcp` POST for the caller (authenticated, through the access gate). */
export async function serveMcp(req: Request, res: Response): Promise<void> {
  const caller = runCallerOf(req);
  const closed = new AbortController();
  res.on("close", () => closed.abort());
  const server = buildServer(caller, closed.signal, await appHelpers());
  // Stateless: no session id, so any instance answers any request.
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.on("close", () => {
    transport.close().catch(() => {});
    server.close().catch(() => {});
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, req.body);
}

function buildServer(caller: RunCaller, closed: AbortSignal, apps: AppHelpers): McpServer {
  const server = new McpServer(
    { name: "quarry", title: "Quarry", version: "1.0.0" },
    {
      instructions:
        "Quarry answers questions about the company's data. Use `ask` for questions in plain language " +
        "(it plans, runs and checks SQL, and writes the answer); `list_tables`, `describe_table`, " +
        "`search_context` and `run_sql` to work with the warehouse directly.",
    },
  );
  const data = dataDeps(caller, closed);
  const previewRows = config().warehouse.previewRows;
  registerResultView(apps, server);
  // `ask` and `run_sql` link the result view (MCP Apps), through the package's helper.
  // (Typed for the SDK's 2.x server, it calls 1.x's McpServer.registerTool with the same arguments.)
  const registerAppTool: McpServer["registerTool"] = (name, tool, cb) =>
    apps.registerAppTool(
      server as never,
      name,
      { ...tool, _meta: { ...tool._meta, ...RESULT_VIEW_META } } as never,
      cb as never,
    ) as never;
  registerDataTools(server, caller, data, previewRows, registerAppTool);
  registerAppTool(
    "ask",
    {
      title: "Ask Quarry",
      description:
        "Ask a question about the data in plain language. Quarry plans, runs and checks SQL and writes the " +
        "answer, with the SQL, the first rows and follow-up questions. Pass thread_id to continue a " +
        "conversation (and to answer a clarifying question). Costs a question of your quota, model tokens and " +
        "the bytes its queries scan.",
      inputSchema: {
        question: z
          .string()
          .min(1)
          .max(MAX_QUESTION_CHARS)
          .describe("The question, or the answer to Quarry's"),
        thread_id: z.uuid().optional().describe("A thread_id an earlier ask returned"),
        investigate: z
          .boolean()
          .optional()
          .describe(
            'For a "why" question: Quarry first returns a plan of analysis steps (status asking; answer ' +
              '"run", "drop 2, 3" or "cancel" with the same thread_id), then runs it and returns a report ' +
              "whose every number is a query result.",
          ),
      },
      outputSchema: AskOutputShape,
      annotations: READ_ONLY,
    },
    (input, extra) => worded(() => askTool(caller, input, extra, closed, previewRows)),
  );
  return server;
}

/** The warehouse and context tools, on the planner's code paths, for the caller. */
function registerDataTools(
  server: McpServer,
  caller: RunCaller,
  data: () => Promise<DataDeps>,
  previewRows: number,
  registerAppTool: McpServer["registerTool"],
): void {
  const readOnly = READ_ONLY;

  server.registerTool(
    "list_tables",
    {
      title: "List tables",
      description:
        "The tables you may query, with descriptions and row counts. Reads metadata only (no query job); " +
        "counts as a question of your per-minute quota.",
      inputSchema: {},
      outputSchema: TablesOutputShape,
      annotations: readOnly,
    },
    () => worded(async () => (await admit(caller), listTables(await data()))),
  );
  server.registerTool(
    "describe_table",
    {
      title: "Describe a table",
      description:
        "A table's columns (types, descriptions) and a few sample rows. Runs no query job; counts as a " +
        "question of your per-minute quota.",
      inputSchema: { table: z.string().min(1).max(1024).describe("dataset.table, as list_tables shows it") },
      outputSchema: SchemaOutputShape,
      annotations: readOnly,
    },
    ({ table }) => worded(async () => (await admit(caller), describeTable(await data(), table))),
  );
  registerAppTool(
    "run_sql",
    {
      title: "Run SQL",
      description:
        "Run one read-only SELECT (the warehouse's dialect) and get its first rows. Refused: anything but " +
        "SELECT, tables outside your scope, a query over the per-query byte cap or your bytes left today. " +
        "Costs the bytes it scans against your daily quota.",
      inputSchema: {
        sql: z.string().min(1).max(100_000).describe("One SELECT statement"),
        max_rows: z
          .number()
          .int()
          .min(1)
          .max(MAX_SQL_ROWS)
          .optional()
          .describe(`Rows to return (default ${previewRows}, at most ${MAX_SQL_ROWS})`),
      },
      outputSchema: SqlOutputShape,
      annotations: readOnly,
    },
    ({ sql, max_rows }) => worded(() => runSqlCharged(caller, data, sql, max_rows ?? previewRows)),
  );
  server.registerTool(
    "search_context",
    {
      title: "Search the team's context",
      description:
        "The team's glossary terms, rules and verified queries (question → SQL) that match, so you can reuse " +
        "their definitions. Free.",
      inputSchema: { query: z.string().min(1).max(1_000).describe("Words to look for: a term, a question") },
      outputSchema: ContextOutputShape,
      annotations: readOnly,
    },
    ({ query }) => worded(async () => searchContext(await data(), query)),
  );
}

/** The data tools' dependencies for this caller: the warehouse tools and their person, built once. */
function dataDeps(caller: RunCaller, signal: AbortSignal): () => Promise<DataDeps> {
  let deps: Promise<DataDeps> | undefined;
  return () =>
    (deps ??= (async () => {
      const [factory, scope] = await Promise.all([
        graphFactory(),
        personScope(caller.uid, caller.access.scope),
      ]);
      const person = runPerson(caller, scope);
      return { tools: factory.tools, searchContext: (q) => factory.searchContext(scope, q), person, signal };
    })());
}

/**
 * `run_sql` admitted like a question (`admit`: no data in scope is a 403, a spent quota a 429 in
 * words), the bytes left passed down, the bytes billed charged. The warehouse tools call the
 * warehouse's metadata API too: admitted the same way, so one request of 100 batched
 * calls cannot spend the API rate the whole deployment shares.
 */
async function runSqlCharged(caller: RunCaller, data: () => Promise<DataDeps>, sql: string, maxRows: number) {
  const { bytesLeft } = await admit(caller);
  const deps = await data();
  const answer = await runSql({ ...deps, person: { ...deps.person, bytesLeft } }, sql, maxRows);
  if (answer.billed) await charge(caller, { bytes: answer.billed, tokens: 0 });
  return answer;
}

async function askTool(
  caller: RunCaller,
  input: { question: string; thread_id?: string; investigate?: boolean },
  extra: Extra,
  closed: AbortSignal,
  previewRows: number,
): Promise<Answer<Record<string, unknown>>> {
  const token = extra._meta?.progressToken;
  let progress = 0;
  const output = new CollectingOutput((message) => {
    if (token === undefined) return;
    extra
      .sendNotification({
        method: "notifications/progress",
        params: { progressToken: token, progress: ++progress, message },
      })
      .catch(() => {});
  });
  const stop = () => output.cancel();
  for (const signal of [extra.signal, closed]) {
    if (signal.aborted) stop();
    else signal.addEventListener("abort", stop, { once: true });
  }
  const runId = randomUUID();
  const key = callKey(caller.uid, caller.via, extra.requestId);
  const threadId = input.thread_id ?? randomUUID();
  const tracked = trackCall(key, { uid: caller.uid, threadId, runId }, stop).catch((err: unknown) => {
    logger.warn("MCP call not recorded: it cannot be cancelled from another instance", { err: String(err) });
    return undefined;
  });
  try {
    const out = await ask(
      caller,
      { question: input.question, thread_id: threadId, ...(input.investigate ? { investigate: true } : {}) },
      { previewRows, output, runId, create: !input.thread_id },
    );
    // The text follows the person's view (business: no SQL); the structured result keeps everything.
    const { view } = await preferencesOf({
      uid: caller.uid,
      ...(caller.email ? { email: caller.email } : {}),
    });
    return { ok: true, text: askText(out, view), data: { ...out } };
  } finally {
    (await tracked)?.();
  }
}

/** A tool's answer as MCP's result; refusals (QuarryErrors) come back as the tool's error, in words. */
async function worded<T>(run: () => Promise<Answer<T>>): Promise<CallToolResult> {
  try {
    const a = await run();
    if (!a.ok) return { isError: true, content: [{ type: "text", text: a.text }] };
    return {
      content: [{ type: "text", text: a.text }],
      structuredContent: a.data as Record<string, unknown>,
    };
  } catch (err) {
    if (err instanceof QuarryError)
      return { isError: true, content: [{ type: "text", text: `${err.message} (${err.code})` }] };
    logger.error("MCP tool failed", { err: String((err as Error)?.stack ?? err) });
    return {
      isError: true,
      content: [{ type: "text", text: "Something went wrong on our side. Please try again." }],
    };
  }
}

/**
 * MCP Apps through the functions emulator, with the official MCP client: `ask` and `run_sql` link
 * the result view (`_meta.ui.resourceUri`), the view is listed and read as one self-contained HTML
 * resource (`text/html;profile=mcp-app`: script and styles inline, nothing fetched), and the tools'
 * structured content carries the chart the page would draw — the contract's choice for those rows
 * and its Vega-Lite spec, which Vega-Lite compiles.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { compile, type TopLevelSpec } from "vega-lite";
import { resultChart } from "../../../functions/src/mcp/results";
import { signUp } from "../../support/auth-emulator";
import { connectMcp, makeToken, type ToolResult } from "../../support/mcp-client";
import { stackEnv } from "../../support/stack-env";

const VIEW = "ui://quarry/result.html";
const MONTHLY =
  "SELECT strftime(order_date, '%Y-%m') AS month, COUNT(*) AS orders FROM shop.orders " +
  "WHERE order_date >= DATE '2025-01-01' AND order_date < DATE '2025-07-01' GROUP BY month ORDER BY month";

type Chart = { type?: string; options: string[]; spec?: Record<string, unknown>; reason?: string };
type Rows = {
  sql: string;
  columns: { name: string; type: string }[];
  rows: Record<string, never>[];
  chart: Chart;
};

let client: Client;

beforeAll(async () => {
  const { urls } = stackEnv();
  const alice = await signUp(urls.auth!);
  const { token } = await makeToken(urls.api!, alice.idToken, "apps");
  client = await connectMcp(`${urls.api!}/mcp`, token);
});

afterAll(async () => {
  await client?.close().catch(() => {});
});

describe("MCP Apps", () => {
  it("links the result view from ask and run_sql only", async () => {
    const { tools } = await client.listTools();
    const linked = tools.filter((t) => t._meta?.ui && (t._meta.ui as { resourceUri?: string }).resourceUri);
    expect(linked.map((t) => t.name).sort()).toEqual(["ask", "run_sql"]);
    for (const t of linked) {
      expect(t._meta).toMatchObject({ ui: { resourceUri: VIEW }, "ui/resourceUri": VIEW });
    }
  });

  it("lists and serves the view as one self-contained MCP App HTML", async () => {
    const { resources } = await client.listResources();
    expect(resources).toContainEqual(
      expect.objectContaining({ uri: VIEW, mimeType: "text/html;profile=mcp-app" }),
    );
    const { contents } = await client.readResource({ uri: VIEW });
    expect(contents).toHaveLength(1);
    const [view] = contents as { uri: string; mimeType: string; text: string; _meta?: unknown }[];
    expect(view).toMatchObject({ uri: VIEW, mimeType: "text/html;profile=mcp-app" });
    expect(view._meta).toMatchObject({ ui: { csp: { connectDomains: [], resourceDomains: [] } } });
    const html = view.text;
    expect(html.slice(0, 15)).toMatch(/^<!doctype html>/i);
    // The page around its one inline script and one inline stylesheet loads nothing.
    const scripts = html.match(/<script type="module">[\s\S]*?<\/script>/g) ?? [];
    expect(scripts).toHaveLength(1);
    const page = html.replace(scripts[0]!, "").replace(/<style>[\s\S]*?<\/style>/, "");
    expect(page.length).toBeLessThan(2_000);
    expect(page).not.toMatch(/\ssrc=|\shref=/i);
    // Vega, Vega-Lite's compiler and the MCP Apps handshake are inside.
    for (const part of ["vega-lite", "expressionInterpreter", "ui/initialize"])
      expect(html.includes(part), part).toBe(true);
  });

  it("run_sql's structured content carries the page's chart with its Vega-Lite spec", async () => {
    const res = (await client.callTool({ name: "run_sql", arguments: { sql: MONTHLY } })) as ToolResult;
    expect(res.isError, JSON.stringify(res.content)).toBeFalsy();
    const out = res.structuredContent as Rows;
    expect(out.rows.length).toBeGreaterThan(1);
    expect(out.chart).toMatchObject({ type: "line", options: ["line", "bar"] });
    expect(out.chart).toEqual(resultChart(out.columns, out.rows, out.sql, false));
    const spec = out.chart.spec as unknown as TopLevelSpec & { data: { values: unknown[] } };
    expect(spec.data.values).toHaveLength(out.rows.length);
    expect(() => compile(spec)).not.toThrow();
  });

  it("ask's result carries the chart of its rows, or why there is none", async () => {
    const res = (await client.callTool({
      name: "ask",
      arguments: { question: "How many orders were placed?" },
    })) as ToolResult;
    expect(res.isError, JSON.stringify(res.content)).toBeFalsy();
    const { result } = res.structuredContent as { result?: Rows };
    expect(result).toBeDefined();
    expect(result!.chart).toEqual(resultChart(result!.columns, result!.rows, result!.sql, false));
    if (!result!.chart.spec) expect(result!.chart.reason).toBeTruthy();
  });
});

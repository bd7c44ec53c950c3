/**
 * Quarry's `/mcp` driven by a client not written here: the MCP Inspector's CLI
 * (`@modelcontextprotocol/inspector`, its own process, `--transport http` with the token in
 * `--header`) against the whole local stack, with a personal access token of a member. It lists
 * the tools, sees the MCP Apps view linked from `ask` and `run_sql` (`--app-info`), and gets
 * `ask` answered: the answer, the SQL, the rows and the chart (months back in calendar order).
 */
import { execFile } from "node:child_process";
import { createRequire } from "node:module";
import { beforeAll, describe, expect, it } from "vitest";
import { signUp } from "../support/auth-emulator";
import { E2E_MEMBER_DOMAIN } from "../support/e2e-access";
import { makeToken } from "../support/mcp-client";
import { stackEnv } from "../support/stack-env";

/** The Inspector's launcher (its `mcp-inspector` bin), run with this Node. */
const INSPECTOR = createRequire(import.meta.url).resolve(
  "@modelcontextprotocol/inspector/clients/launcher/build/index.js",
);

let url: string;
let token: string;

/** One Inspector CLI call: its stdout (JSON), or the error with what it printed. */
function inspector(...args: string[]): Promise<string> {
  const argv = [INSPECTOR, "--cli", url, "--transport", "http", "--header", `Authorization: Bearer ${token}`];
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [...argv, ...args], { timeout: 90_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`inspector ${args.join(" ")}: ${err.message}\n${stderr}\n${stdout}`));
      else resolve(stdout);
    });
  });
}

beforeAll(async () => {
  const { urls } = stackEnv();
  url = `${urls.api!}/mcp`;
  const member = await signUp(urls.auth!, `inspector-${Date.now()}@${E2E_MEMBER_DOMAIN}`, {
    password: "inspector-pw",
    verified: true,
  });
  token = (await makeToken(urls.api!, member.idToken, "inspector")).token;
});

describe("the MCP Inspector's CLI", () => {
  it("lists Quarry's tools, each read-only", async () => {
    const { tools } = JSON.parse(await inspector("--method", "tools/list")) as {
      tools: { name: string; annotations?: { readOnlyHint?: boolean } }[];
    };
    expect(tools.map((t) => t.name).sort()).toEqual([
      "ask",
      "describe_table",
      "list_tables",
      "run_sql",
      "search_context",
    ]);
    for (const t of tools) expect(t.annotations?.readOnlyHint, t.name).toBe(true);
  });

  it("sees the MCP Apps result view on ask and run_sql", async () => {
    const lines = (await inspector("--method", "tools/list", "--app-info", "--advertise-apps"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const withView = lines.filter((l) => JSON.stringify(l).includes("ui://quarry/result.html"));
    expect(withView.map((l) => JSON.stringify(l).match(/"(ask|run_sql)"/)?.[1]).sort()).toEqual([
      "ask",
      "run_sql",
    ]);
  });

  it("gets ask answered with its SQL, rows and chart", async () => {
    const out = JSON.parse(
      await inspector(
        "--method",
        "tools/call",
        "--tool-name",
        "ask",
        "--tool-arg",
        "question=What was revenue by month in 2025?",
      ),
    ) as {
      isError?: boolean;
      structuredContent: {
        status: string;
        answer: string;
        sql: string[];
        result: {
          columns: { name: string }[];
          rows: { month: string }[];
          chart: { type: string; spec: { encoding: { x: { sort: string[] } } } };
        };
      };
    };
    expect(out.isError).toBeFalsy();
    const s = out.structuredContent;
    expect(s.status).toBe("answered");
    expect(s.answer.length).toBeGreaterThan(0);
    expect(s.sql.at(-1)).toMatch(/strftime\(o\.order_date/);
    expect(s.result.columns.map((c) => c.name)).toEqual(["month", "revenue"]);
    // Rows sorted by revenue; the chart reads the months in calendar order.
    const months = s.result.rows.map((r) => r.month);
    expect(s.result.chart.type).toBe("line");
    expect(s.result.chart.spec.encoding.x.sort).toEqual([...months].sort());
    expect(s.result.chart.spec.encoding.x.sort).not.toEqual(months);
  });
});

/**
 * An access token for MCP clients, made and revoked in Chromium against the whole local stack:
 * the account page makes a token and shows it once with the client configuration for this
 * deployment's `/mcp`; the configuration copied from the page (its Copy button, read back from the
 * clipboard) works as it is in the official MCP client (tools listed, `run_sql` answered); revoked
 * in the page, the same client is refused with 401 and `WWW-Authenticate`. Screenshots go to
 * test-results/e2e/.
 */
import type { Browser, Page } from "playwright-core";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, reportFailure, screenshot } from "../support/browser";
import { connectMcp } from "../support/mcp-client";
import { stackEnv } from "../support/stack-env";

let browser: Browser;
let page: Page;
let web: string;
let client: Client | undefined;

type GenericConfig = {
  mcpServers: { quarry: { type: string; url: string; headers: { Authorization: string } } };
};

beforeAll(async () => {
  web = stackEnv().urls.web!;
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: new URL(web).origin });
  page = await context.newPage();
  page.on("dialog", (d) => void d.accept());
  page.on("pageerror", (e) => console.log(`[page error] ${e.message}`));
});

afterEach((ctx) => reportFailure(page, ctx.task));

afterAll(async () => {
  await client?.close().catch(() => {});
  await browser?.close();
});

describe("access tokens in the page", () => {
  it("a token made in the page works in an MCP client with the copied configuration, until revoked there", async () => {
    await page.goto(web);
    await page.getByRole("button", { name: "Continue as test user" }).click();
    await page.getByRole("link", { name: "Account" }).click();
    await page.waitForURL(/\/account$/);
    const form = page.getByRole("form", { name: "Create a token" });
    await form.getByLabel("Token name").fill("e2e laptop");
    await form.getByLabel("Days until it expires").fill("7");
    await form.getByRole("button", { name: "Create token" }).click();

    const panel = page.getByRole("region", { name: "New token" });
    const label = "MCP client configuration (JSON)";
    await panel.getByRole("button", { name: `Copy ${label}` }).click();
    await panel
      .getByRole("button", { name: `Copy ${label}` })
      .getByText("Copied")
      .waitFor();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    expect(copied).toBe(await panel.getByLabel(label, { exact: true }).textContent());
    await screenshot(page, "mcp-tokens-01-made");

    const config = (JSON.parse(copied) as GenericConfig).mcpServers.quarry;
    expect(config.url).toBe(`${stackEnv().urls.api}/mcp`);
    const token = config.headers.Authorization.replace(/^Bearer /, "");
    expect(token).toBe(await panel.getByLabel("Token", { exact: true }).textContent());
    const row = page.getByRole("table", { name: "Your tokens" }).getByRole("row", { name: /e2e laptop/ });
    await row.waitFor();

    // The configuration as copied, in the official MCP client.
    client = await connectMcp(config.url, token);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(["ask", "list_tables", "describe_table", "run_sql", "search_context"]),
    );
    const sql = await client.callTool({ name: "run_sql", arguments: { sql: "SELECT 1 AS one" } });
    expect(sql.isError).toBeFalsy();

    // Revoked in the page (after the confirmation), the same client is refused.
    await panel.getByRole("button", { name: "Done" }).click();
    await row.getByRole("button", { name: "Revoke e2e laptop" }).click();
    await row.waitFor({ state: "detached" });
    await screenshot(page, "mcp-tokens-02-revoked");
    const refused = await client.listTools().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(StreamableHTTPError);
    expect((refused as StreamableHTTPError).code).toBe(401);
    const raw = await fetch(config.url, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(raw.status).toBe(401);
    expect(raw.headers.get("www-authenticate")).toMatch(/^Bearer/);
  });
});

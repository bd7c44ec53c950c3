/**
 * Quarry's MCP Apps view as a host shows it, in Chromium: the HTML read from `ui://quarry/result.html`
 * with the official MCP client goes into a sandboxed iframe (scripts only, opaque origin) under a
 * strict Content-Security-Policy (no network, no eval), a minimal host answers the view's
 * `ui/initialize` over postMessage and sends it a `run_sql` result; the view draws the rows as a
 * table and the chart as Vega SVG (a line, months in calendar order) without loading anything.
 * Screenshots go to test-results/e2e/.
 */
import type { Browser, Page } from "playwright-core";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { signUp } from "../support/auth-emulator";
import { launchBrowser, reportFailure, screenshot } from "../support/browser";
import { E2E_MEMBER_DOMAIN } from "../support/e2e-access";
import { connectMcp, makeToken, type ToolResult } from "../support/mcp-client";
import { stackEnv } from "../support/stack-env";

const VIEW = "ui://quarry/result.html";
/** Months out of calendar order (by count), as a real query may return them. */
const MONTHLY =
  "SELECT strftime(order_date, '%Y-%m') AS month, COUNT(*) AS orders FROM shop.orders " +
  "WHERE order_date >= DATE '2025-01-01' AND order_date < DATE '2025-07-01' GROUP BY month ORDER BY orders DESC";
/** What a strict host allows a view: inline script and style, data: images; nothing fetched, no eval. */
const HOST_CSP =
  "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; font-src data:; connect-src 'none'";

let browser: Browser;
let page: Page;
let client: Client;

beforeAll(async () => {
  const { urls } = stackEnv();
  const member = await signUp(urls.auth!, `view-${Date.now()}@${E2E_MEMBER_DOMAIN}`, {
    password: "view-pw",
    verified: true,
  });
  const { token } = await makeToken(urls.api!, member.idToken, "view");
  client = await connectMcp(`${urls.api!}/mcp`, token);
  browser = await launchBrowser();
  page = await (await browser.newContext({ viewport: { width: 900, height: 800 } })).newPage();
});

afterEach((ctx) => reportFailure(page, ctx.task));

afterAll(async () => {
  await client?.close().catch(() => {});
  await browser?.close();
});

/** A minimal MCP Apps host in the page: answers `ui/initialize`, then sends the tool result. */
async function host(html: string, result: ToolResult) {
  const srcdoc = html.replace(
    "<head>",
    `<head><meta http-equiv="Content-Security-Policy" content="${HOST_CSP}">`,
  );
  await page.setContent("<!doctype html><html><body></body></html>");
  await page.evaluate(
    ({ srcdoc, result }) => {
      const frame = document.createElement("iframe");
      frame.setAttribute("sandbox", "allow-scripts");
      frame.style.width = "860px";
      frame.style.height = "760px";
      const send = (msg: unknown) => frame.contentWindow!.postMessage(msg, "*");
      window.addEventListener("message", (e) => {
        if (e.source !== frame.contentWindow) return;
        const msg = e.data as { id?: number; method?: string };
        if (msg.method === "ui/initialize") {
          send({
            jsonrpc: "2.0",
            id: msg.id,
            result: {
              protocolVersion: "2026-01-26",
              hostInfo: { name: "test-host", version: "1.0.0" },
              hostCapabilities: {},
              hostContext: { theme: "light" },
            },
          });
        } else if (msg.method === "ui/notifications/initialized") {
          send({ jsonrpc: "2.0", method: "ui/notifications/tool-result", params: result });
        } else if (msg.id !== undefined && msg.method) {
          send({ jsonrpc: "2.0", id: msg.id, result: {} });
        }
      });
      frame.srcdoc = srcdoc;
      document.body.appendChild(frame);
    },
    { srcdoc, result },
  );
}

describe("the MCP Apps result view in a host", () => {
  it("draws a run_sql result as a table and a Vega line chart, fetching nothing and without eval", async () => {
    const { contents } = await client.readResource({ uri: VIEW });
    const html = (contents[0] as { text: string }).text;
    const result = (await client.callTool({ name: "run_sql", arguments: { sql: MONTHLY } })) as ToolResult;
    const rows = (result.structuredContent as { rows: { month: string }[] }).rows;
    expect(rows.length).toBeGreaterThan(2);

    const requests: string[] = [];
    const refused: string[] = [];
    page.on("request", (r) => {
      if (!/^(about|data):/.test(r.url())) requests.push(r.url());
    });
    page.on("console", (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) refused.push(m.text());
    });
    await host(html, result);

    const view = page.frameLocator("iframe");
    const table = view.locator("table");
    await table.waitFor();
    expect(await table.locator("th").allTextContents()).toEqual(["month", "orders"]);
    expect(await table.locator("tbody tr td:first-child").allTextContents()).toEqual(
      rows.map((r) => r.month),
    );
    // Vega's SVG: a line mark, and the months on the axis in calendar order.
    await view.locator(".chart-host svg .mark-line path").first().waitFor();
    const labels = await view.locator(".chart-host svg .role-axis-label text").allTextContents();
    const months = rows.map((r) => r.month).sort();
    expect(labels.filter((l) => months.includes(l))).toEqual(months);
    await screenshot(page, "mcp-app-view-01-drawn");
    expect(requests).toEqual([]);
    expect(refused).toEqual([]);
  });
});

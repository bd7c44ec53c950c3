/**
 * User identity mode's connect flow in Chromium: a member signed in with the Auth emulator asks a
 * question before connecting BigQuery and is offered Connect BigQuery in the chat; the button takes
 * the browser to Google's consent (the loopback OAuth stand-in), back through the API's callback
 * to the page, which says BigQuery is connected; the same question is then answered from rows
 * read with the person's own token (the BigQuery REST stand-in checks it), and Disconnect revokes.
 * The API is the function's express app served in this process in user mode (the e2e stack's
 * functions run DuckDB); the page is the built web app, served beside it the way Hosting serves it.
 */
import http from "node:http";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { signUp } from "../support/auth-emulator";
import { launchBrowser, reportFailure, screenshot } from "../support/browser";
import { BigQueryStandin } from "../support/bigquery-standin";
import { E2E_ACCESS_ENV, E2E_MEMBER_DOMAIN } from "../support/e2e-access";
import { GoogleOAuthStandin } from "../support/google-oauth-standin";
import { currentTurnOf, type Script } from "../support/scripted-model-script";
import { stackEnv } from "../support/stack-env";
import { startVertexStandin, type VertexStandin } from "../support/vertex-standin";

const DIST = path.resolve(__dirname, "../../web/dist");
const PROJECT = "analytics-prj";
const ORDERS = { projectId: PROJECT, datasetId: "shop", tableId: "orders" };
const PASSWORD = "e2e-bigquery-pw";

const oauth = new GoogleOAuthStandin("quarry-e2e.apps.googleusercontent.com", "e2e-client-secret");
const bq = new BigQueryStandin();
let vertex: VertexStandin;
let api: http.Server;
let pageServer: http.Server;
let apiUrl: string;
let web: string;
let browser: Browser;
let page: Page | undefined;

const script: Script = (req) => {
  const usage = { input: 10, output: 5 };
  const used = currentTurnOf(req)
    .filter((t) => t.role === "tool")
    .map((t) => t.toolName);
  if (req.role === "planner") {
    if (!used.includes("bq_query"))
      return {
        toolCalls: [{ name: "bq_query", args: { sql: `SELECT region FROM \`${PROJECT}.shop.orders\`` } }],
        usage,
      };
    return { text: "Done.", usage };
  }
  if (req.role === "generator")
    return { text: `Found ${/Rows: (\d+)/.exec(req.system)?.[1] ?? "no"} rows.`, usage };
  if (req.role === "verifier") return { text: "YES", usage };
  return { text: "Summary.", usage };
};

const listen = async (server: http.Server) => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};

/** The built page as Hosting serves it: files, the SPA fallback, and `/api/*` rewritten to the API. */
async function servePage(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const url = new URL(req.url ?? "/", web);
  if (url.pathname.startsWith("/api/")) {
    const r = await fetch(`${apiUrl}${url.pathname.slice(4)}`);
    res
      .writeHead(r.status, { "content-type": r.headers.get("content-type") ?? "text/plain" })
      .end(await r.text());
    return;
  }
  const file = path.join(DIST, path.normalize(url.pathname));
  const body = await readFile(
    file.startsWith(DIST) && path.extname(file) ? file : path.join(DIST, "index.html"),
  ).catch(() => undefined);
  if (!body) return void res.writeHead(404).end();
  const types: Record<string, string> = {
    ".js": "text/javascript",
    ".css": "text/css",
    ".html": "text/html",
    ".svg": "image/svg+xml",
  };
  res.writeHead(200, { "content-type": types[path.extname(file)] ?? "text/html" }).end(body);
}

beforeAll(async () => {
  stackEnv();
  await oauth.start();
  await bq
    .requireBearer((t) => oauth.principalOf(t), { anonymous: "quarry@analytics-prj.iam.gserviceaccount.com" })
    .addTable({ ...ORDERS, fields: [{ name: "region", type: "STRING" }], rows: [["north"], ["south"]] })
    .onQuery({
      match: (sql) => sql.includes("shop.orders"),
      referencedTables: [ORDERS],
      fields: [{ name: "region", type: "STRING" }],
      rows: [["north"], ["south"]],
      totalBytesProcessed: 12,
    })
    .start();
  vertex = await startVertexStandin({ script, trust: true });
  api = http.createServer();
  pageServer = http.createServer(
    (req, res) => void servePage(req, res).catch(() => res.writeHead(500).end()),
  );
  apiUrl = await listen(api);
  web = await listen(pageServer);
  Object.assign(process.env, {
    ...E2E_ACCESS_ENV,
    FUNCTIONS_EMULATOR: "true",
    QUARRY_API_URL: apiUrl,
    QUARRY_CORS_ORIGINS: web,
    QUARRY_RUN_LEASE_SECONDS: "10",
    GEMINI_API_KEY: "",
    QUARRY_GEMINI_BASE_URL: "",
    VERTEX_AI_EMULATOR_HOST: vertex.host,
    QUARRY_WAREHOUSE: "bigquery",
    BIGQUERY_EMULATOR_HOST: bq.url.replace("http://", ""),
    QUARRY_BQ_PROJECT: PROJECT,
    QUARRY_BQ_DATASETS: `${PROJECT}.shop`,
    QUARRY_BQ_IDENTITY: "user",
    QUARRY_OAUTH_CLIENT_ID: oauth.clientId,
    QUARRY_OAUTH_CLIENT_SECRET: oauth.clientSecret,
    QUARRY_TOKEN_KEY: randomBytes(32).toString("base64"),
    QUARRY_OAUTH_AUTHORIZATION_URL: oauth.authorizationUrl,
    QUARRY_OAUTH_TOKEN_URL: oauth.tokenUrl,
    QUARRY_OAUTH_REVOKE_URL: oauth.revokeUrl,
  });
  const { createApp } = await import("../../functions/src/app");
  api.on("request", createApp());
  browser = await launchBrowser();
});

afterEach(async (ctx) => {
  await reportFailure(page, ctx.task);
});

afterAll(async () => {
  await browser?.close();
  for (const s of [api, pageServer]) {
    s?.closeAllConnections();
    await new Promise((r) => s?.close(r));
  }
  await vertex?.stop();
  await bq.stop();
  await oauth.stop();
});

async function ask(p: Page, question: string) {
  const box = p.getByLabel("Your question");
  await box.fill(question);
  await box.press("Enter");
}

describe("Connect BigQuery (QUARRY_BQ_IDENTITY=user)", () => {
  it("offers Connect BigQuery when a question needs it, connects through Google's consent, then answers with the person's own token", async () => {
    const email = `bq-${Date.now()}@${E2E_MEMBER_DOMAIN}`;
    const user = await signUp(stackEnv().urls.auth!, email, { password: PASSWORD });
    // The API loads its routes and Firestore on first use: warm it, so the page's first call is not the one that waits.
    const warm = await fetch(`${apiUrl}/me`, { headers: { authorization: `Bearer ${user.idToken}` } });
    expect(((await warm.json()) as { bigquery: unknown }).bigquery).toEqual({
      identity: "user",
      connected: false,
    });
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.on("pageerror", (e) => console.log(`[page error] ${e.message}`));
    await page.goto(web);
    await page.getByLabel("Email", { exact: true }).fill(email);
    await page.getByLabel("Password", { exact: true }).fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    const header = page.locator("header.topbar");
    await header.getByRole("button", { name: "Connect BigQuery", exact: true }).waitFor({ timeout: 60_000 });

    // Not connected yet: the question is refused before it runs, and the chat offers the action.
    await page.getByRole("button", { name: "+ New conversation" }).click();
    await ask(page, "Which regions have orders?");
    const turn = page.locator("article.turn").last();
    await turn
      .getByRole("alert")
      .filter({ hasText: /Connect BigQuery/ })
      .waitFor();
    expect(bq.requests.filter((r) => r.path.endsWith("/jobs"))).toEqual([]);
    await screenshot(page, "bigquery-connect-offered");
    await turn.getByRole("button", { name: "Connect BigQuery", exact: true }).click();

    // Google's consent (the stand-in consents at once) and the API's callback bring the page back.
    await page.waitForURL((u) => u.origin === web && !u.searchParams.has("bigquery"));
    await header.getByRole("status").filter({ hasText: "BigQuery connected." }).waitFor();
    await header.getByRole("button", { name: "Disconnect BigQuery" }).waitFor();
    expect(oauth.hasGrant(email)).toBe(true);

    await page.getByRole("button", { name: "+ New conversation" }).click();
    await ask(page, "Which regions have orders?");
    await page
      .locator('article.turn[data-status="done"]')
      .last()
      .getByText("Found 2 rows.")
      .waitFor({ timeout: 60_000 });
    const jobs = bq.requests.filter((r) => /\/(jobs|queries)/.test(r.path));
    expect(jobs.length).toBeGreaterThan(0);
    expect(new Set(jobs.map((r) => r.principal))).toEqual(new Set([email]));
    await screenshot(page, "bigquery-connected-answer");

    await header.getByRole("button", { name: "Disconnect BigQuery" }).click();
    await header.getByRole("button", { name: "Connect BigQuery", exact: true }).waitFor();
    expect(oauth.revocations).toEqual([email]);
    expect(oauth.hasGrant(email)).toBe(false);
    await context.close();
  });
});

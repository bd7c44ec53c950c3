/**
 * Answers a business user can trust, in Chromium against the whole local stack: a verified answer
 * says Verified and names the team's query under "How this was computed"; the business view shows
 * the key figures or chart and how it was computed, with the SQL and rows only behind Details (the
 * analyst view is unchanged); a written answer's "Ask the data team to verify" lands in the admin
 * page's proposals; and the page's icons are drawn, not emoji. Screenshots go to test-results/e2e/.
 */
import { randomUUID } from "node:crypto";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { signIn, type TestUser } from "../support/auth-emulator";
import { call } from "../support/api-client";
import { launchBrowser, reportFailure, screenshot } from "../support/browser";
import { E2E_TEST_USER } from "../support/e2e-access";
import { stackEnv } from "../support/stack-env";

let browser: Browser;
let context: BrowserContext;
let page: Page;
let web: string;
let api: string;
let user: TestUser;

const lastTurn = () => page.locator("article.turn").last();

async function askInNewThread(question: string) {
  await page.getByRole("button", { name: "+ New conversation" }).click();
  await page.getByRole("heading", { name: "Ask your data a question" }).waitFor();
  const box = page.getByLabel("Your question");
  await box.fill(question);
  await box.press("Enter");
  await page.waitForURL(/\/t\/[0-9a-f-]{36}$/);
  await page.locator('article.turn[data-status="done"]').last().waitFor({ timeout: 60_000 });
}

const setView = (view: "business" | "analyst") =>
  call(api, "/me/preferences", { method: "PATCH", token: user.idToken, body: { view } });

beforeAll(async () => {
  const stack = stackEnv();
  web = stack.urls.web!;
  api = stack.urls.api!;
  user = await signIn(stack.urls.auth!, E2E_TEST_USER.email, E2E_TEST_USER.password);
  await setView("analyst");
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.on("pageerror", (e) => console.log(`[page error] ${e.message}`));
  await page.goto(web);
  await page.getByRole("button", { name: "Continue as test user" }).click();
  await page.getByRole("button", { name: "+ New conversation" }).waitFor();
}, 180_000);

afterEach(async (ctx) => {
  await reportFailure(page, ctx.task);
});

afterAll(async () => {
  // The test user is every browser test's: leave it in the analyst view.
  if (user) await setView("analyst");
  await context?.close();
  await browser?.close();
});

describe("answers a business user can trust", () => {
  it("a verified answer says so; the business view hides SQL and rows behind Details, the analyst view does not", async () => {
    await askInNewThread("Average order value by channel");
    const how = lastTurn().getByRole("region", { name: "How this was computed" });
    await expect(how.textContent()).resolves.toMatch(
      /Verified.*The data team's verified query: Average order value by channel\./,
    );
    await expect(how.textContent()).resolves.toMatch(/From shop\.orders, shop\.order_items/);
    // Analyst view: the SQL is on the page.
    await expect(lastTurn().locator(".sql code").first().isVisible()).resolves.toBe(true);
    await screenshot(page, "trust-01-analyst-verified");

    await page.getByLabel("View").selectOption("business");
    const details = lastTurn().locator("details.business-details");
    await details.waitFor();
    await expect(lastTurn().locator(".sql code").first().isVisible()).resolves.toBe(false);
    await expect(lastTurn().getByRole("table").count()).resolves.toBe(0);
    await expect(how.isVisible()).resolves.toBe(true);
    await expect(lastTurn().locator(".chart, .key-figures").first().isVisible()).resolves.toBe(true);
    await screenshot(page, "trust-02-business-view");
    await details.locator("summary").click();
    await expect(lastTurn().locator(".sql code").first().isVisible()).resolves.toBe(true);
    // Kept by the server: a reload (and the MCP text) follows it.
    await expect
      .poll(async () => (await call(api, "/me/preferences", { token: user.idToken })).json.view)
      .toBe("business");
    await page.reload();
    await lastTurn().locator("details.business-details").waitFor();
    await expect(page.getByLabel("View").inputValue()).resolves.toBe("business");
    // How it was computed is kept on the stored answer: the reloaded page still says Verified.
    await expect(how.textContent()).resolves.toMatch(/Verified/);

    await page.getByLabel("View").selectOption("analyst");
    await expect.poll(() => lastTurn().locator("details.business-details").count()).toBe(0);
    await expect(lastTurn().locator(".sql code").first().isVisible()).resolves.toBe(true);
  });

  it("a written answer says so, and Ask the data team to verify puts it in the admin page's proposals", async () => {
    // Its SQL is one no test approves (access.e2e.ts approves the channel query): written, whatever ran before.
    const question = `How many orders are there, ${randomUUID().slice(0, 8)}? [sql:written]`;
    await askInNewThread(question);
    const how = lastTurn().getByRole("region", { name: "How this was computed" });
    await expect(how.textContent()).resolves.toMatch(/Written for this question/);
    await how.getByRole("button", { name: "Ask the data team to verify" }).click();
    await how.getByText("Sent to the data team for review.").waitFor();
    await screenshot(page, "trust-03-asked-to-verify");
    await page.getByRole("link", { name: "Admin" }).click();
    await page.getByRole("listitem", { name: `Proposal: ${question}` }).waitFor();
    await page.getByRole("link", { name: "Back to chat" }).click();
  });

  it("draws the bell, the paperclip and the menu as SVG, each with its name", async () => {
    await page.getByRole("button", { name: "+ New conversation" }).waitFor();
    for (const [name, icon] of [
      [/^Notifications/, "bell"],
      ["Attach images, PDFs or table files", "paperclip"],
    ] as const) {
      const button = page.getByRole("button", { name });
      await expect(button.locator(`svg[data-icon="${icon}"]`).count()).resolves.toBe(1);
      expect((await button.textContent())?.replace(/\d/g, "").trim()).toBe("");
    }
  });
});

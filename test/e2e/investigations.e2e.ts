/**
 * `/investigate` in Chromium against the whole local stack, on the planted cause (`retail.sales`):
 * the plan is shown with a checkbox per step, one step is dropped, Run plan runs the rest with
 * progress per step, and the report arrives as the answer with each step's table and chart.
 * Screenshots go to test-results/e2e/.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, reportFailure, screenshot } from "../support/browser";
import { stackEnv } from "../support/stack-env";
import { PLANTED_PLAN } from "../support/investigation-script";

let browser: Browser;
let page: Page;
let web: string;

beforeAll(async () => {
  web = stackEnv().urls.web!;
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.on("pageerror", (e) => console.log(`[page error] ${e.message}`));
});

afterEach((ctx) => reportFailure(page, ctx.task));

afterAll(async () => {
  await browser?.close();
});

describe("an investigation in the page", () => {
  it("shows the plan, runs it without the dropped step, and shows progress and the report with charts", async () => {
    await page.goto(web);
    await page.getByRole("button", { name: "Continue as test user" }).click();
    await page.getByRole("button", { name: "+ New conversation" }).click();
    const box = page.getByLabel("Your question");
    await box.fill("/investigate Why did revenue fall in March 2025? [investigation:good]");
    await box.press("Enter");
    await page.waitForURL(/\/t\/[0-9a-f-]{36}$/);

    const asking = page.locator('article.turn[data-status="asking"]');
    const plan = asking.getByRole("group", { name: "Investigation plan" });
    await plan.getByText(PLANTED_PLAN.question).waitFor();
    for (const s of PLANTED_PLAN.steps) await plan.getByText(s.title).waitFor();
    expect(await asking.locator(".answer").count()).toBe(0);
    await screenshot(page, "investigation-01-plan");
    // A reload keeps the plan waiting for the person.
    await page.reload();
    await plan.getByText(PLANTED_PLAN.question).waitFor();

    const dropped = PLANTED_PLAN.steps[2];
    await plan.getByRole("checkbox", { name: `Keep step ${dropped.id}: ${dropped.title}` }).uncheck();
    await plan.getByRole("button", { name: "Run plan" }).click();

    const done = page.locator('article.turn[data-status="done"]');
    await done.locator(".answer").getByText("Why revenue fell in March").waitFor();
    await done.getByText(`You answered: {"drop":[${dropped.id}]}`).waitFor();
    const steps = done.getByRole("list", { name: "Investigation steps" }).locator("li");
    expect(await steps.allInnerTexts()).toEqual([
      `Step 1, ${PLANTED_PLAN.steps[0].title}: done`,
      `Step 2, ${PLANTED_PLAN.steps[1].title}: done`,
      `Step 4, ${PLANTED_PLAN.steps[3].title}: done`,
    ]);
    const answer = await done.locator(".answer").innerText();
    expect(answer).toContain("driven by marketplace in the south region");
    expect(answer).not.toMatch(/\{\{/); // every citation was filled in
    // Each step that ran has its table and chart.
    await done.locator(".chart-host svg").first().waitFor();
    expect(await done.locator(".sql code").count()).toBe(3);
    await screenshot(page, "investigation-02-report");

    // After a reload the report reads the same from the stored answer, with its steps' tables and charts.
    await page.reload();
    await done.locator(".answer").getByText("Why revenue fell in March").waitFor();
    expect(await done.locator(".answer").innerText()).toContain("driven by marketplace in the south region");
    await done.locator(".chart-host svg").first().waitFor();
    expect(await done.locator(".sql code").count()).toBe(3);
  });
});

/**
 * A clarifying question in Chromium against the whole local stack: the agent asks which measure
 * is meant, the page shows the question with its choices, a reload keeps it waiting, a click on a
 * choice answers it and the same turn finishes with the chosen reading. Screenshots go to
 * test-results/e2e/.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, reportFailure, screenshot } from "../support/browser";
import { stackEnv } from "../support/stack-env";
import { CLARIFYING_CHOICES, CLARIFYING_QUESTION } from "../support/scripted-model-script";

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

const lastTurn = () => page.locator("article.turn").last();

describe("a clarifying question in the page", () => {
  it("shows the question with its choices, survives a reload, and answers with the choice clicked", async () => {
    await page.goto(web);
    await page.getByRole("button", { name: "Continue as test user" }).click();
    await page.getByRole("button", { name: "+ New conversation" }).click();
    const box = page.getByLabel("Your question");
    await box.fill("How are we doing?");
    await box.press("Enter");
    await page.waitForURL(/\/t\/[0-9a-f-]{36}$/);

    const asking = page.locator('article.turn[data-status="asking"]');
    const question = asking.getByRole("group", { name: "Question from Quarry" });
    await question.getByText(CLARIFYING_QUESTION).waitFor();
    for (const c of CLARIFYING_CHOICES) await question.getByRole("button", { name: c }).waitFor();
    // Waiting for the person: no answer, no Stop button, the composer free for a new question.
    expect(await asking.locator(".answer").count()).toBe(0);
    await page.getByRole("button", { name: "Send" }).waitFor();
    await screenshot(page, "clarify-01-asked");

    await page.reload();
    await question.getByRole("button", { name: CLARIFYING_CHOICES[1] }).waitFor();
    await question.getByRole("button", { name: CLARIFYING_CHOICES[1] }).click();

    const done = page.locator('article.turn[data-status="done"]');
    await done
      .locator(".answer")
      .getByText(/Here is what I found/)
      .waitFor();
    await done.getByText(`You answered: ${CLARIFYING_CHOICES[1]}`).waitFor();
    expect(await done.locator(".sql code").first().innerText()).toContain("FROM shop.customers");
    expect(await page.locator("article.turn").count()).toBe(1);
    expect(await lastTurn().getByRole("button", { name: CLARIFYING_CHOICES[0] }).count()).toBe(0);
    await screenshot(page, "clarify-02-answered");

    // After a reload the turn reads the same from the stored messages.
    await page.reload();
    await done.getByText(`You answered: ${CLARIFYING_CHOICES[1]}`).waitFor();
    await done
      .locator(".answer")
      .getByText(/Here is what I found/)
      .waitFor();
  });

  it("an answer in one's own words works too", async () => {
    await page.getByRole("button", { name: "+ New conversation" }).click();
    const box = page.getByLabel("Your question");
    await box.fill("How are we doing this year?");
    await box.press("Enter");
    const asking = page.locator('article.turn[data-status="asking"]');
    await asking.getByLabel("Your answer").fill("the number of orders please");
    await asking.getByRole("button", { name: "Answer" }).click();
    const done = page.locator('article.turn[data-status="done"]');
    await done.getByText("You answered: the number of orders please").waitFor();
    expect(await done.locator(".sql code").first().innerText()).toContain("FROM shop.orders");
  });
});

/**
 * Regenerate and edit-and-resend in Chromium against the whole local stack: a turn asked again
 * from where it was asked replaces its answer (regenerate) or its question and answer (edit) in
 * place, with no duplicated turn, and reads the same after a reload.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, reportFailure, screenshot } from "../support/browser";
import { stackEnv } from "../support/stack-env";

let browser: Browser;
let page: Page;

beforeAll(async () => {
  browser = await launchBrowser();
  page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  page.on("pageerror", (e) => console.log(`[page error] ${e.message}`));
  await page.goto(stackEnv().urls.web!);
  await page.getByRole("button", { name: "Continue as test user" }).click();
  await page.getByRole("button", { name: "+ New conversation" }).waitFor();
});

afterEach((ctx) => reportFailure(page, ctx.task));

afterAll(async () => {
  await browser?.close();
});

const turns = () => page.locator("article.turn");
const done = (n: number) => page.locator('article.turn[data-status="done"]').nth(n);

async function ask(question: string) {
  const box = page.getByLabel("Your question");
  await box.fill(question);
  await box.press("Enter");
}

describe("asking a question again", () => {
  it("regenerates an answer and edits an earlier question in place", async () => {
    await page.getByRole("button", { name: "+ New conversation" }).click();
    await ask("How many orders were placed?");
    await done(0)
      .locator(".answer")
      .getByText(/FROM shop\.orders/)
      .waitFor();
    await ask("And how many products are there?");
    await done(1)
      .locator(".answer")
      .getByText(/FROM shop\.products/)
      .waitFor();

    // Regenerate the last answer: still two turns, the second answered again.
    const runs: string[] = [];
    page.on("request", (r) => {
      if (r.method() === "POST" && r.url().endsWith("/runs/stream")) runs.push(r.postData() ?? "");
    });
    await turns().nth(1).getByRole("button", { name: "Regenerate" }).click();
    await expect.poll(() => runs.length).toBe(1);
    expect(JSON.parse(runs[0])).toMatchObject({ checkpoint_id: expect.any(String) });
    await done(1)
      .locator(".answer")
      .getByText(/FROM shop\.products/)
      .waitFor();
    expect(await turns().count()).toBe(2);

    // Edit the first question: the conversation continues from it, the later turn leaves.
    await turns().nth(0).getByRole("button", { name: "Edit" }).click();
    await page.getByLabel("Edit the question").fill("How many customers are there?");
    await page.getByRole("button", { name: "Save and ask" }).click();
    await done(0)
      .locator(".answer")
      .getByText(/FROM shop\.customers/)
      .waitFor();
    expect(await turns().count()).toBe(1);
    await screenshot(page, "ask-again-01-edited");

    await page.reload();
    await done(0)
      .locator(".answer")
      .getByText(/FROM shop\.customers/)
      .waitFor();
    expect(await turns().count()).toBe(1);
    expect(await turns().nth(0).locator(".question p").innerText()).toBe("How many customers are there?");
  });
});

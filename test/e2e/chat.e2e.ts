/**
 * The web page end to end in Chromium against the whole local stack (Firestore with the rules,
 * functions, auth and hosting emulators, DuckDB sample data, the Gemini Developer API stand-in):
 * sign in, ask, watch SQL/table/chart arrive while the answer streams, sort, switch chart,
 * download the CSV, rename, reload, stop a run midway, delete, and a second user sees nothing of
 * the first. Each case stands alone: it signs in in a browser context of its own and asks the
 * questions it needs in new threads. Screenshots go to test-results/e2e/.
 */
import { readFileSync } from "node:fs";
import { Firestore } from "@google-cloud/firestore";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { launchBrowser, reportFailure, screenshot } from "../support/browser";
import { stackEnv } from "../support/stack-env";
import { parseCsv } from "../support/csv";
import { QUOTA } from "../support/e2e-script";
import { HOLD_URL_ENV, holdClient } from "../support/hold-control";
import { signUp } from "../support/auth-emulator";
import { E2E_MEMBER_DOMAIN } from "../support/e2e-access";

const QUESTION = "What is the revenue by category, in detail?";
const STOP_QUESTION = "Write me a long report on categories";

let browser: Browser;
let web: string;
/** This case's own session: a fresh browser context, signed out until the case signs in. */
let context: BrowserContext;
let page: Page;

async function ask(p: Page, question: string) {
  const box = p.getByLabel("Your question");
  await box.fill(question);
  await box.press("Enter");
}

const lastTurn = (p: Page) => p.locator("article.turn").last();

/** Signs in with the one-click test user. */
async function signIn(p: Page) {
  await p.goto(web);
  await p.getByRole("button", { name: "Continue as test user" }).click();
  await p.getByRole("button", { name: "+ New conversation" }).waitFor();
}

/** Asks `question` in a new thread and waits for the answer; resolves with the thread's id. */
async function askInNewThread(p: Page, question: string): Promise<string> {
  await p.getByRole("button", { name: "+ New conversation" }).click();
  await p.getByRole("heading", { name: "Ask your data a question" }).waitFor();
  await ask(p, question);
  await p.waitForURL(/\/t\/[0-9a-f-]{36}$/);
  await p.locator('article.turn[data-status="done"]').waitFor({ timeout: 60_000 });
  return p.url().split("/t/")[1];
}

/** Signs in and gets QUESTION answered (its SQL, table and chart) in a new thread; resolves with its id. */
async function answeredThread(p: Page): Promise<string> {
  await signIn(p);
  return askInNewThread(p, QUESTION);
}

beforeAll(async () => {
  web = stackEnv().urls.web!;
  browser = await launchBrowser();
});

beforeEach(async () => {
  context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.on("dialog", (d) => void d.accept());
  // The page's own errors end up in the test output, next to the failing step.
  page.on("console", (m) => {
    if (m.type() === "error" || m.type() === "warning") console.log(`[page ${m.type()}] ${m.text()}`);
  });
  page.on("pageerror", (e) => console.log(`[page error] ${e.message}`));
});

afterEach(async (ctx) => {
  // On failure: what the page showed, as a screenshot and as text.
  await reportFailure(page, ctx.task);
  await context?.close();
});

afterAll(async () => {
  await browser?.close();
});

describe("Quarry in the browser", () => {
  it("signs in with the one-click test user", async () => {
    await signIn(page);
    await page.getByText("test-user@quarry.local").waitFor();
    // The header names the model answering: the Gemini Developer API, chosen by GEMINI_API_KEY alone.
    await page.getByText("Gemini Developer API · gemini-2.5-flash").waitFor();
    await screenshot(page, "01-signed-in");
  });

  it("streams an answer with the SQL, the table and the chart arriving while it streams", async () => {
    await signIn(page);
    // Record, on every DOM change, what was visible while the turn was still streaming.
    await page.evaluate(() => {
      const seen = { sql: false, table: false, chart: false, phases: [] as string[], answerGrew: 0 };
      (window as unknown as { __seen: typeof seen }).__seen = seen;
      let lastLen = 0;
      new MutationObserver(() => {
        const turn = document.querySelector("article.turn:last-of-type");
        if (!turn || turn.getAttribute("data-status") !== "streaming") return;
        if (turn.querySelector(".sql code")?.textContent?.includes("SELECT")) seen.sql = true;
        if (turn.querySelector("table tbody tr")) seen.table = true;
        if (turn.querySelector(".chart-host svg")) seen.chart = true;
        const now = turn.querySelector(".phases li.now")?.textContent;
        if (now && seen.phases[seen.phases.length - 1] !== now) seen.phases.push(now);
        const len = turn.querySelector(".answer p:not(.muted)")?.textContent?.length ?? 0;
        if (len > lastLen) {
          seen.answerGrew++;
          lastLen = len;
        }
      }).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
    });
    // The answer pauses after a few chunks until this test releases it: whatever the machine's
    // speed, the SQL, table and chart must be on the page while the answer is still streaming.
    const holds = holdClient(stackEnv().env[HOLD_URL_ENV]);
    const pause = holds.newKey("stream");
    await ask(page, `${QUESTION} [pause:${pause}]`);
    await page.waitForURL(/\/t\/[0-9a-f-]{36}$/);
    const streaming = page.locator('article.turn[data-status="streaming"]');
    await streaming.locator("table tbody tr").first().waitFor();
    await streaming.locator(".chart-host svg").waitFor();
    await expect
      .poll(async () => ((await streaming.locator(".answer p:not(.muted)").textContent()) ?? "").length)
      .toBeGreaterThan(0);
    const partial = ((await streaming.locator(".answer p:not(.muted)").textContent()) ?? "").length;
    await screenshot(page, "02-streaming");
    await holds.release(pause);
    await page.locator('article.turn[data-status="done"]').waitFor({ timeout: 60_000 });
    const seen = await page.evaluate(() => (window as unknown as { __seen: Record<string, unknown> }).__seen);
    expect(seen).toMatchObject({ sql: true, table: true, chart: true });
    // Tokens arrived in pieces: some before the pause, the rest after it.
    expect(seen.answerGrew as number).toBeGreaterThanOrEqual(2);
    expect((await lastTurn(page).locator(".answer").textContent())!.length).toBeGreaterThan(partial);
    expect(seen.phases).toContain("Answering");

    const turn = lastTurn(page);
    await expect(turn.locator(".question").textContent()).resolves.toContain(QUESTION);
    await expect(turn.locator(".answer").textContent()).resolves.toMatch(/Here is what I found \(\d+ rows\)/);
    const sql = await turn.locator(".sql code").textContent();
    expect(sql).toMatch(/SELECT p\.category/);
    const costs = await turn.locator(".costs").textContent();
    expect(costs).toMatch(/Estimated: \d/);
    expect(costs).toMatch(/Billed: \d/);
    await expect(turn.locator(".chart-host svg").count()).resolves.toBe(1);
    await screenshot(page, "03-answered");
  });

  it("takes a thumbs-up on the answer, with a note; it becomes a proposed verified query", async () => {
    const threadId = await answeredThread(page);
    const turn = lastTurn(page);
    await turn.getByRole("button", { name: "Good answer" }).click();
    await turn.getByText("Thanks, noted.").waitFor();
    await turn.getByLabel("Add a note").fill("Exactly the breakdown I wanted");
    await turn.getByRole("button", { name: "Send note" }).click();
    await turn.getByText("Thanks for the note.").waitFor();
    // Stored server-side (clients cannot read it): a proposal with the answer's SQL, for review.
    const { env } = stackEnv();
    const db = new Firestore({
      projectId: env.GCLOUD_PROJECT,
      host: env.FIRESTORE_EMULATOR_HOST,
      ssl: false,
    });
    try {
      const docs = (await db.collection("feedback").where("threadId", "==", threadId).get()).docs.map((d) =>
        d.data(),
      );
      expect(docs).toEqual([
        expect.objectContaining({
          score: 1,
          status: "proposed",
          note: "Exactly the breakdown I wanted",
          sql: expect.stringMatching(/SELECT p\.category/),
        }),
      ]);
    } finally {
      await db.terminate();
    }
  });

  it("sorts the table and switches the chart type", async () => {
    await answeredThread(page);
    const turn = lastTurn(page);
    // Cells show money formatted ("$1,234.50"); each keeps the raw value in its title.
    const revenues = async () =>
      (
        await turn
          .locator("table tbody tr td:nth-child(2)")
          .evaluateAll((tds) => tds.map((td) => td.getAttribute("title") ?? ""))
      ).map(Number);
    const header = turn.getByRole("button", { name: /^revenue/ });
    await header.click();
    await expect(turn.locator("th").nth(1).getAttribute("aria-sort")).resolves.toBe("ascending");
    const asc = await revenues();
    expect(asc.length).toBeGreaterThan(1);
    expect(asc).toEqual([...asc].sort((a, b) => a - b));
    await header.click();
    const desc = await revenues();
    expect(desc).toEqual([...asc].sort((a, b) => b - a));

    const host = turn.locator(".chart-host");
    expect(await host.getAttribute("data-chart-type")).toBe("bar");
    await turn.getByText("Line", { exact: true }).click();
    await expect.poll(() => host.getAttribute("data-chart-type")).toBe("line");
    await host.locator("svg").waitFor();
    await screenshot(page, "04-sorted-line-chart");
  });

  it("downloads the full result as CSV, matching the table", async () => {
    await answeredThread(page);
    const turn = lastTurn(page);
    // The table sorted by revenue, descending (two clicks on its header).
    const header = turn.getByRole("button", { name: /^revenue/ });
    await header.click();
    await expect(turn.locator("th").nth(1).getAttribute("aria-sort")).resolves.toBe("ascending");
    await header.click();
    await expect(turn.locator("th").nth(1).getAttribute("aria-sort")).resolves.toBe("descending");
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      turn.getByRole("button", { name: /Download .* as CSV/ }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^what-is-the-revenue-by-category.*\.csv$/);
    const text = readFileSync((await download.path())!, "utf8").replace(/^\uFEFF/, "");
    const csv = parseCsv(text);
    const headers = await turn.locator("table thead th").allTextContents();
    expect(csv[0]).toEqual(headers.map((h) => h.replace(/[▲▼]/g, "").trim()));
    const total = Number(/of (\d+)/.exec((await turn.locator(".pager").textContent()) ?? "")?.[1]);
    expect(csv.length - 1).toBe(total);
    // The table is sorted by revenue descending now; the CSV is in result order (also descending).
    // The CSV keeps raw values; the table shows numbers formatted, with the raw value as its title.
    const tableRows = await turn
      .locator("table tbody tr")
      .evaluateAll((trs) =>
        trs.map((tr) =>
          [...tr.querySelectorAll("td")].map((td) => td.getAttribute("title") ?? td.textContent ?? ""),
        ),
      );
    expect(csv.slice(1, 1 + tableRows.length)).toEqual(tableRows);
    const shown = await turn.locator("table tbody tr td:nth-child(2)").first().textContent();
    expect(shown).toMatch(/^\$[\d,]+(\.\d\d)?$/);
  });

  it("lists the thread, renames it, and brings the conversation back after a reload", async () => {
    const threadId = await answeredThread(page);
    const item = page.locator(`li[data-thread-id="${threadId}"]`);
    await item.waitFor();
    await expect(item.locator(".thread-title").textContent()).resolves.toContain("revenue by category");
    await item.getByRole("button", { name: /^Rename/ }).click();
    const input = page.getByLabel("New title");
    await input.fill("Category revenue");
    await input.press("Enter");
    await expect.poll(() => item.locator(".thread-title").textContent()).toBe("Category revenue");

    const answer = await lastTurn(page).locator(".answer").textContent();
    await page.reload();
    const turn = lastTurn(page);
    await turn.locator("table tbody tr").first().waitFor();
    await expect(turn.locator(".question").textContent()).resolves.toContain(QUESTION);
    await expect(turn.locator(".answer").textContent()).resolves.toBe(answer);
    await expect(turn.locator(".sql code").textContent()).resolves.toMatch(/SELECT p\.category/);
    await turn.locator(".chart-host svg").waitFor();
    await expect
      .poll(() => page.locator(`li[data-thread-id="${threadId}"] .thread-title`).textContent())
      .toBe("Category revenue");
    await screenshot(page, "05-after-reload");
  });

  it("stops a run midway; the thread takes the next question", async () => {
    await signIn(page);
    await page.getByRole("button", { name: "+ New conversation" }).click();
    await ask(page, STOP_QUESTION);
    const turn = lastTurn(page);
    // Wait until the answer is visibly streaming, then stop.
    await expect
      .poll(
        async () =>
          (
            await turn
              .locator(".answer p:not(.muted)")
              .textContent()
              .catch(() => "")
          )?.length ?? 0,
        {
          timeout: 60_000,
        },
      )
      .toBeGreaterThan(100);
    await page.getByRole("button", { name: "Stop" }).click();
    await page.locator('article.turn[data-status="stopped"]').waitFor();
    const stoppedAt = (await turn.locator(".answer").textContent())!.length;
    await screenshot(page, "06-stopped");
    expect(stoppedAt).toBeLessThan(5000);
    await page.getByRole("button", { name: "Send" }).waitFor();

    // The lease was released: the same thread answers the next question (a busy thread answers 409).
    await ask(page, "How many orders are there?");
    await page.locator('article.turn[data-status="done"]').nth(0).waitFor({ timeout: 60_000 });
    await expect(page.locator("article.turn").count()).resolves.toBe(2);
    await expect.poll(() => lastTurn(page).getAttribute("data-status"), { timeout: 60_000 }).toBe("done");
    const second = await lastTurn(page).textContent();
    expect(second).not.toMatch(/still answering/);
    await expect(lastTurn(page).locator(".sql code").textContent()).resolves.toContain("COUNT(*)");
  });

  it("deletes a thread from the list", async () => {
    await signIn(page);
    const kept = await askInNewThread(page, "How many orders are there?");
    const deleted = await askInNewThread(page, "How many customers are there?");
    const item = page.locator(`li[data-thread-id="${deleted}"]`);
    await item.waitFor();
    await item.getByRole("button", { name: /^Delete/ }).click();
    await item.waitFor({ state: "detached" });
    await expect(page.locator(`li[data-thread-id="${kept}"]`).count()).resolves.toBe(1);
  });

  it("is readable on a phone", async () => {
    const threadId = await answeredThread(page);
    const phone = await browser.newContext({
      viewport: { width: 390, height: 844 },
      isMobile: true,
      hasTouch: true,
    });
    try {
      const p = await phone.newPage();
      await p.goto(`${web}/t/${threadId}`);
      await p.getByRole("button", { name: "Continue as test user" }).click();
      await lastTurn(p).locator("table tbody tr").first().waitFor();
      const overflow = await p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow).toBeLessThanOrEqual(0);
      await screenshot(p, "07-phone");
      await p.getByRole("button", { name: "Conversations" }).click();
      await p.locator(`li[data-thread-id="${threadId}"]`).waitFor();
      await screenshot(p, "08-phone-drawer");
    } finally {
      await phone.close();
    }
  });

  it("a second user sees none of the first user's threads", async () => {
    const threadId = await answeredThread(page);
    await page.getByRole("button", { name: "Sign out" }).click();
    // A member (a verified address of the allowed domain: access is closed), signing in by email.
    const second = `second-${Date.now()}@${E2E_MEMBER_DOMAIN}`;
    await signUp(stackEnv().urls.auth!, second, { password: "second-user-pw" });
    await page.getByLabel("Email", { exact: true }).fill(second);
    await page.getByLabel("Password", { exact: true }).fill("second-user-pw");
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.getByText("No conversations yet").waitFor();
    await expect(page.locator("li[data-thread-id]").count()).resolves.toBe(0);
    await screenshot(page, "09-second-user");

    // Even with the first user's thread URL, nothing of it shows.
    await page.goto(`${web}/t/${threadId}`);
    await page
      .getByRole("alert")
      .filter({ hasText: /no longer exists/ })
      .waitFor();
    await expect(page.locator("article.turn").count()).resolves.toBe(0);
    await expect(page.getByText(QUESTION).count()).resolves.toBe(0);
    await screenshot(page, "10-second-user-probe");
  });

  it("shows a model-service failure as the server words it, keeping the question", async () => {
    await signIn(page);
    await page.getByRole("button", { name: "+ New conversation" }).click();
    const question = `${QUOTA} How many orders are there?`;
    await ask(page, question);
    await page.locator('article.turn[data-status="error"]').waitFor({ timeout: 60_000 });
    const alert = lastTurn(page).getByRole("alert");
    await expect(alert.textContent()).resolves.toMatch(
      /^Gemini Developer API says the quota or rate limit for gemini-2\.5-flash is used up \(Resource has been exhausted \(e\.g\. check quota\)\.\)\. Wait a minute and ask again/,
    );
    await expect(lastTurn(page).textContent()).resolves.toContain(question);
    await screenshot(page, "11-model-quota");
    // The question was stored: it is still there after a reload.
    await page.reload();
    await page.locator("article.turn").filter({ hasText: question }).waitFor();
  });
});

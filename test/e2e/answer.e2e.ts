/**
 * The answer an analyst would trust at a glance, in Chromium against the whole local stack (the
 * Gemini API stand-in, DuckDB sample data): an empty conversation offers the context file's starter
 * questions and the datasets; "What was revenue by month in 2025?" — months as text, rows sorted by
 * revenue — is drawn as a line in calendar order with compact money on the axis and formatted table
 * cells; three follow-up buttons appear and one asks its question; Markdown with bold, a list, a
 * table and HTML tags renders formatted, with the tags shown as text and never run, the same after a
 * reload. Screenshots go to test-results/e2e/.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { launchBrowser, reportFailure, screenshot } from "../support/browser";
import { stackEnv } from "../support/stack-env";
import { MARKDOWN_WORD, MONTH_FOLLOW_UPS } from "../support/e2e-script";
import { KnowledgeBase, parseContextFile } from "../../functions/src/context";

const MONTHS_2025 = Array.from({ length: 12 }, (_, i) => `2025-${String(i + 1).padStart(2, "0")}`);
/** The shipped context file's verified questions marked `starter: true`. */
const SHOP_YAML = path.resolve(__dirname, "../../functions/context/shop.yaml");
const STARTERS = new KnowledgeBase([
  parseContextFile(readFileSync(SHOP_YAML, "utf8"), SHOP_YAML).context,
]).starters();

let browser: Browser;
let web: string;
let context: BrowserContext;
let page: Page;

const lastTurn = (p: Page) => p.locator("article.turn").last();

async function signIn(p: Page) {
  await p.goto(web);
  await p.getByRole("button", { name: "Continue as test user" }).click();
  await p.getByRole("button", { name: "+ New conversation" }).waitFor();
}

/** The tick labels of a chart's axis, in the order the SVG draws them. */
async function tickLabels(p: Page, axis: "X" | "Y"): Promise<string[]> {
  return lastTurn(p)
    .locator(`.chart-host svg g.role-axis[aria-label^="${axis}-axis"] g.role-axis-label text`)
    .allTextContents();
}

beforeAll(async () => {
  web = stackEnv().urls.web!;
  browser = await launchBrowser();
});

beforeEach(async () => {
  // A fixed locale, so the separators and currency symbols the test reads are known.
  context = await browser.newContext({
    locale: "en-US",
    viewport: { width: 1280, height: 1000 },
    acceptDownloads: true,
  });
  page = await context.newPage();
  page.on("console", (m) => {
    if (m.type() === "error" || m.type() === "warning") console.log(`[page ${m.type()}] ${m.text()}`);
  });
  page.on("pageerror", (e) => console.log(`[page error] ${e.message}`));
});

afterEach(async (ctx) => {
  await reportFailure(page, ctx.task);
  await context?.close();
});

afterAll(async () => {
  await browser?.close();
});

describe("the answer, read at a glance", () => {
  it("an empty conversation offers the context file's starters and the datasets; a starter asks itself", async () => {
    expect(STARTERS).toContain("What was revenue by month in 2025?");
    await signIn(page);
    const starters = page.getByRole("navigation", { name: "Questions to start with" });
    await starters.getByRole("button").first().waitFor();
    expect(await starters.getByRole("button").allTextContents()).toEqual(STARTERS);
    const datasets = page.getByRole("region", { name: "Datasets you can ask about" });
    await expect(datasets.textContent()).resolves.toMatch(/shop.*orders/);
    await screenshot(page, "answer-01-first-screen");

    await starters.getByRole("button", { name: "What was revenue by month in 2025?" }).click();
    await page.waitForURL(/\/t\/[0-9a-f-]{36}$/);
    await page.locator('article.turn[data-status="done"]').waitFor({ timeout: 60_000 });
    await expect(lastTurn(page).locator(".question").textContent()).resolves.toContain(
      "What was revenue by month in 2025?",
    );
  });

  it("revenue by month: a line in calendar order, compact money on the axis, formatted cells; follow-ups ask", async () => {
    await signIn(page);
    const box = page.getByLabel("Your question");
    await box.fill("What was revenue by month in 2025?");
    await box.press("Enter");
    await page.waitForURL(/\/t\/[0-9a-f-]{36}$/);
    await page.locator('article.turn[data-status="done"]').waitFor({ timeout: 60_000 });
    const turn = lastTurn(page);
    // The SQL sorted the months by revenue; the chart reads them in calendar order anyway.
    await expect(turn.locator(".sql code").textContent()).resolves.toMatch(/ORDER BY revenue DESC/);
    const host = turn.locator('.chart-host[data-chart-type="line"]');
    await host.locator("svg g.mark-line path").first().waitFor();
    await expect.poll(() => tickLabels(page, "X")).toEqual(MONTHS_2025);
    const y = await tickLabels(page, "Y");
    expect(y.length).toBeGreaterThanOrEqual(3);
    for (const label of y) expect(label).toMatch(/^\$\d+(\.\d)?[KM]?$/);
    expect(y.some((l) => /K$|M$/.test(l))).toBe(true);
    // The table: every revenue cell with separators and cents; the first rows in the SQL's order.
    const cells = await turn.locator("table tbody tr td:nth-child(2)").allTextContents();
    expect(cells.length).toBeGreaterThan(0);
    for (const c of cells) expect(c).toMatch(/^\$\d{1,3}(,\d{3})+\.\d{2}$/);
    // The answer's bold renders; the follow-up block is not shown as text.
    await expect(turn.locator(".answer strong").first().textContent()).resolves.toBe(
      "Revenue by month in 2025",
    );
    await expect(turn.locator(".answer").textContent()).resolves.not.toContain(":::");
    await screenshot(page, "answer-02-revenue-by-month");
    // The chart is kept as Vega draws it: SVG with the same month labels, PNG as an image.
    const [svg] = await Promise.all([
      page.waitForEvent("download"),
      turn.getByRole("button", { name: /chart as SVG/ }).click(),
    ]);
    expect(svg.suggestedFilename()).toMatch(/^what-was-revenue-by-month-in-2025-\d{4}-\d{2}-\d{2}\.svg$/);
    const svgText = readFileSync((await svg.path())!, "utf8");
    expect(svgText.startsWith("<svg")).toBe(true);
    expect(svgText).toContain(">2025-01<");
    const [png] = await Promise.all([
      page.waitForEvent("download"),
      turn.getByRole("button", { name: /chart as PNG/ }).click(),
    ]);
    expect(
      readFileSync((await png.path())!)
        .subarray(1, 4)
        .toString(),
    ).toBe("PNG");

    const followUps = page.getByRole("navigation", { name: "Follow-up questions" });
    await expect(followUps.getByRole("button").allTextContents()).resolves.toEqual(MONTH_FOLLOW_UPS);
    // Above the composer and in view, however long the answer above them.
    const [asked, composer] = [
      await followUps.boundingBox(),
      await page.getByLabel("Your question").boundingBox(),
    ];
    expect(asked!.y + asked!.height).toBeLessThanOrEqual(composer!.y);
    expect(asked!.y).toBeGreaterThanOrEqual(0);
    expect(asked!.y + asked!.height).toBeLessThanOrEqual(page.viewportSize()!.height);
    await followUps.getByRole("button", { name: MONTH_FOLLOW_UPS[0] }).click();
    await expect.poll(() => page.locator("article.turn").count()).toBe(2);
    await expect(lastTurn(page).locator(".question").textContent()).resolves.toContain(MONTH_FOLLOW_UPS[0]);
    await page.locator('article.turn:nth-of-type(2)[data-status="done"]').waitFor({ timeout: 60_000 });
    // Only the last answer offers follow-ups.
    await expect(page.getByRole("navigation", { name: "Follow-up questions" }).count()).resolves.toBe(0);
    await screenshot(page, "answer-03-follow-up-asked");
  });

  it("Markdown renders formatted; HTML from the model is shown as text and never runs, also after a reload", async () => {
    await signIn(page);
    // While the answer streams, record any moment its text shows raw Markdown syntax.
    await page.evaluate(() => {
      const seen = { raw: [] as string[], renders: 0 };
      (window as unknown as { __md: typeof seen }).__md = seen;
      new MutationObserver(() => {
        const turn = document.querySelector('article.turn[data-status="streaming"]');
        const text = turn?.querySelector(".answer .markdown")?.textContent;
        if (!text) return;
        seen.renders++;
        if (/\*\*|\| ?channel|\| ?---|^- /m.test(text)) seen.raw.push(text);
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    const box = page.getByLabel("Your question");
    await box.fill(`What is the channel mix? ${MARKDOWN_WORD}`);
    await box.press("Enter");
    await page.waitForURL(/\/t\/[0-9a-f-]{36}$/);
    await page.locator('article.turn[data-status="done"]').waitFor({ timeout: 60_000 });
    const check = async () => {
      const answer = lastTurn(page).locator(".answer");
      await expect(answer.locator("strong").textContent()).resolves.toBe("concentrated");
      await expect(answer.locator("ul li").allTextContents()).resolves.toEqual([
        "Web leads",
        "Mobile app follows",
      ]);
      await expect(answer.locator("table th").allTextContents()).resolves.toEqual(["channel", "share"]);
      await expect(answer.locator("table tbody tr").count()).resolves.toBe(2);
      // The tags are text on the page, not elements; nothing they carried ran.
      const text = (await answer.textContent()) ?? "";
      expect(text).toContain('<img src="x" onerror="window.__quarryPwned = 1">');
      expect(text).toContain("<script>window.__quarryPwned = 2</script>");
      await expect(answer.locator("img, script").count()).resolves.toBe(0);
      expect(await page.evaluate(() => (window as unknown as { __quarryPwned?: number }).__quarryPwned)).toBe(
        undefined,
      );
      const link = answer.getByRole("link", { name: "the docs" });
      await expect(link.getAttribute("href")).resolves.toBe("https://example.com/docs");
      await expect(link.getAttribute("target")).resolves.toBe("_blank");
      await expect(link.getAttribute("rel")).resolves.toMatch(/noopener/);
    };
    await check();
    const md = await page.evaluate(
      () => (window as unknown as { __md: { raw: string[]; renders: number } }).__md,
    );
    expect(md.renders).toBeGreaterThan(1); // rendered as it streamed, not once at the end
    expect(md.raw).toEqual([]);
    await screenshot(page, "answer-04-markdown");
    await page.reload();
    await page.locator('article.turn[data-status="done"]').waitFor({ timeout: 60_000 });
    await check();
  });
});

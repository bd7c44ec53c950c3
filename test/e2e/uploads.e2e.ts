/**
 * Files as tables in the browser (`/threads/:id/files`, issue #32), in Chromium against the whole
 * local stack (DuckDB warehouse, the scripted model stand-in): a CSV of monthly targets brought by
 * the paperclip becomes `uploads.targets` in the conversation's files panel, and a question about
 * revenue against target is answered by SQL joining it with the warehouse — the rows equal our own
 * DuckDB join (test/support/uploads.ts), the chart draws both measures. A two-sheet workbook
 * offers its other sheet; a Parquet file shows its columns; a ragged CSV is refused naming its
 * line; a 60 MB file never leaves the page, a 12 MB CSV leaves it gzip-compressed; the same name
 * twice is refused; the panel survives a reload and Delete removes a file. The conversation an
 * upload opened is titled by its first question (the run's lease sets an empty title).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { formatNumber, numberStyle } from "../../functions/src/contract/chart/numbers";
import { launchBrowser, reportFailure, screenshot } from "../support/browser";
import { stackEnv } from "../support/stack-env";
import { TARGETS_CSV, ownJoin } from "../support/uploads";
import { writeXlsx } from "../support/xlsx";

let browser: Browser;
let web: string;
let dir: string;
let context: BrowserContext;
let page: Page;

const CSV = "text/csv";

async function signIn(p: Page) {
  await p.goto(web);
  await p.getByRole("button", { name: "Continue as test user" }).click();
  await p.getByRole("button", { name: "+ New conversation" }).waitFor();
}

const panel = (p: Page) => p.getByRole("region", { name: "Files in this conversation" });

/** The panel's entry of a table (`uploads.<name>`), opened so its columns and first rows show. */
async function openFile(p: Page, table: string): Promise<Locator> {
  const entry = panel(p)
    .locator("li.file")
    .filter({ has: p.locator("summary code", { hasText: table }) });
  await entry.waitFor({ timeout: 60_000 });
  if ((await entry.locator("details").getAttribute("open")) === null) await entry.locator("summary").click();
  return entry;
}

/** The columns an entry lists, as "name TYPE". */
const columnsOf = (entry: Locator, table: string) =>
  entry
    .getByRole("list", { name: `Columns of ${table}` })
    .getByRole("listitem")
    .allTextContents();

/** Brings files through the paperclip's file input (buffers, or paths for what Playwright will not carry). */
async function attach(p: Page, files: Parameters<Locator["setInputFiles"]>[0]) {
  await p.locator("#attach-files").setInputFiles(files);
}

/** Uploads the targets CSV to a new conversation and waits for the thread it opens; returns its id. */
async function uploadTargets(p: Page): Promise<string> {
  await attach(p, { name: "targets.csv", mimeType: CSV, buffer: Buffer.from(TARGETS_CSV) });
  await p.waitForURL(/\/t\/[0-9a-f-]{36}$/, { timeout: 60_000 });
  await openFile(p, "uploads.targets");
  return /\/t\/([0-9a-f-]{36})$/.exec(p.url())![1];
}

/** POSTs to a conversation's files that left the page. */
function countUploads(p: Page): { count: number } {
  const seen = { count: 0 };
  p.on("request", (r) => {
    if (r.method() === "POST" && /\/threads\/[^/]+\/files(\?|$)/.test(r.url())) seen.count++;
  });
  return seen;
}

beforeAll(async () => {
  web = stackEnv().urls.web!;
  browser = await launchBrowser();
  dir = await mkdtemp(path.join(os.tmpdir(), "uploads-e2e-"));
});

beforeEach(async () => {
  context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: "en-US" });
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
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("files as tables in a conversation", () => {
  it("a CSV of targets becomes uploads.targets; revenue against target joins it with the warehouse, rows and chart", async () => {
    await signIn(page);
    await uploadTargets(page);
    const entry = await openFile(page, "uploads.targets");
    await expect(entry.locator("summary").textContent()).resolves.toMatch(
      /targets\.csv.*12 rows · 2 columns/,
    );
    const columns = await columnsOf(entry, "uploads.targets");
    expect(columns.map((c) => c.split(" ")[0])).toEqual(["month", "target"]);
    expect(columns[1]).toMatch(/^target (BIGINT|INTEGER)$/);
    const preview = entry.getByRole("table");
    await expect(preview.locator("thead th").allTextContents()).resolves.toEqual(["month", "target"]);
    await expect(preview.locator("tbody tr").first().locator("td").allTextContents()).resolves.toEqual([
      "2025-01",
      "550000",
    ]);
    await screenshot(page, "uploads-01-targets");

    const question = "What was revenue against target by month in 2025?";
    const box = page.getByLabel("Your question");
    await box.fill(question);
    await box.press("Enter");
    const turn = page.locator('article.turn[data-status="done"]').last();
    await turn.waitFor({ timeout: 60_000 });
    await expect(turn.locator(".sql code").textContent()).resolves.toContain("uploads.targets");

    // Every row, as the page prints numbers (money with cents, counts with separators).
    await turn.getByLabel("Rows per page").selectOption("25");
    const expected = (await ownJoin(TARGETS_CSV)).map((r) =>
      ["month", "revenue", "target"].map((c) =>
        c === "month"
          ? String(r[c])
          : formatNumber(r[c] as number, numberStyle({ name: c, type: "FLOAT64" }), "en-US"),
      ),
    );
    expect(expected).toHaveLength(12);
    const table = turn.locator(".table-scroll table");
    await expect(table.locator("thead th").allTextContents()).resolves.toEqual(
      expect.arrayContaining([expect.stringContaining("month")]),
    );
    const shown = await table
      .locator("tbody tr")
      .evaluateAll((trs) => trs.map((tr) => Array.from(tr.querySelectorAll("td"), (td) => td.textContent)));
    expect(shown).toEqual(expected);

    // Both measures drawn: two lines over the months, a legend naming them.
    const chart = turn.locator('.chart-host[data-chart-type="line"]');
    await expect.poll(() => chart.locator("svg g.mark-line path").count()).toBe(2);
    await expect
      .poll(() => chart.locator("svg .role-legend-label text").allTextContents())
      .toEqual(["revenue", "target"]);
    await screenshot(page, "uploads-02-joined");

    // A conversation opened by an upload is named by its first question.
    await page.locator(".thread-title", { hasText: question }).waitFor();
  });

  it("a two-sheet workbook reads its first sheet and offers the other; picking Notes replaces the table", async () => {
    const file = path.join(dir, "plan.xlsx");
    writeXlsx(file, {
      sheets: [
        {
          name: "Targets",
          rows: [
            ["month", "target"],
            ["2025-01", 40000],
            ["2025-02", 42500],
          ],
        },
        {
          name: "Notes",
          rows: [
            ["note", "author", "priority"],
            ["Raise Q2", "ana", 1],
          ],
        },
      ],
    });
    await signIn(page);
    await attach(page, file);
    await page.waitForURL(/\/t\/[0-9a-f-]{36}$/, { timeout: 60_000 });
    let entry = await openFile(page, "uploads.plan");
    await expect(
      columnsOf(entry, "uploads.plan").then((cs) => cs.map((c) => c.split(" ")[0])),
    ).resolves.toEqual(["month", "target"]);
    await entry.getByText("Read the sheet Targets.").waitFor();
    const pick = entry.getByLabel("Read another sheet instead:");
    await expect(pick.locator("option").allTextContents()).resolves.toEqual(["Choose…", "Notes"]);
    await pick.selectOption("Notes");
    // The workbook is read again with &sheet=Notes: its entry comes back closed, naming that sheet.
    await panel(page)
      .locator("li.file strong", { hasText: "Notes" })
      .waitFor({ state: "attached", timeout: 60_000 });
    entry = await openFile(page, "uploads.plan");
    await expect(
      columnsOf(entry, "uploads.plan").then((cs) => cs.map((c) => c.split(" ")[0])),
    ).resolves.toEqual(["note", "author", "priority"]);
    await expect(panel(page).locator("li.file").count()).resolves.toBe(1);
  });

  it("a Parquet file shows its own columns and types", async () => {
    const file = path.join(dir, "sales.parquet");
    const duck = await import("@duckdb/node-api");
    const instance = await duck.DuckDBInstance.create(":memory:");
    try {
      const conn = await instance.connect();
      await conn.run(
        `COPY (SELECT i AS region_id, 'r' || i AS region, i * 1.5 AS amount, DATE '2025-01-01' + CAST(i AS INTEGER) AS day
               FROM range(1, 8) t(i)) TO '${file}' (FORMAT parquet)`,
      );
      conn.closeSync();
    } finally {
      instance.closeSync();
    }
    await signIn(page);
    await attach(page, file);
    await page.waitForURL(/\/t\/[0-9a-f-]{36}$/, { timeout: 60_000 });
    const entry = await openFile(page, "uploads.sales");
    const columns = await columnsOf(entry, "uploads.sales");
    expect(columns.map((c) => c.split(" ")[0])).toEqual(["region_id", "region", "amount", "day"]);
    expect(columns[0]).toMatch(/BIGINT/);
    expect(columns[3]).toMatch(/DATE/);
    await expect(entry.locator("summary").textContent()).resolves.toMatch(/7 rows · 4 columns/);
  });

  it("a ragged CSV is refused naming line 3, and no table is added", async () => {
    await signIn(page);
    await uploadTargets(page);
    await attach(page, { name: "ragged.csv", mimeType: CSV, buffer: Buffer.from("a,b\n1,2\n3,4,5\n6,7\n") });
    const alert = panel(page).getByRole("alert");
    await alert.waitFor({ timeout: 60_000 });
    await expect(alert.textContent()).resolves.toMatch(/\bline 3\b/i);
    await expect(panel(page).locator("li.file summary code").allTextContents()).resolves.toEqual([
      "uploads.targets",
    ]);
  });

  it("a 60 MB file is refused in the page, in words, and nothing is sent", async () => {
    const file = path.join(dir, "big.csv");
    const row = "2025-01,40000,some padding text to make the row longer\n";
    await writeFile(file, "month,target,note\n" + row.repeat(Math.ceil((60 * 1024 * 1024) / row.length)));
    await signIn(page);
    const posts = countUploads(page);
    await attach(page, file);
    const alert = panel(page).getByRole("alert");
    await alert.waitFor();
    await expect(alert.textContent()).resolves.toMatch(/big\.csv is 60\.\d MB; a file may be at most 50 MB/);
    expect(posts.count).toBe(0);
  });

  it("a 12 MB CSV is sent gzip-compressed and read whole", async () => {
    const file = path.join(dir, "daily.csv");
    const rows = 300_000; // about 12 MB: over the 8 MB above which the page compresses
    const lines = Array.from(
      { length: rows },
      (_, i) =>
        `${i},2025-01-${String((i % 28) + 1).padStart(2, "0")},${(i * 7) % 1000}.25,north-east-region`,
    );
    await writeFile(file, "id,day,amount,region\n" + lines.join("\n") + "\n");
    await signIn(page);
    const sent: string[] = [];
    page.on("request", (r) => {
      if (r.method() === "POST" && /\/files\?/.test(r.url())) sent.push(r.headers()["content-type"] ?? "");
    });
    await attach(page, file);
    await page.waitForURL(/\/t\/[0-9a-f-]{36}$/, { timeout: 60_000 });
    const entry = await openFile(page, "uploads.daily");
    await expect(entry.locator("summary").textContent()).resolves.toMatch(/300,000 rows · 4 columns/);
    expect(sent).toEqual(["application/gzip"]);
  });

  it("the same file name twice is refused in the server's words, and the first stays", async () => {
    await signIn(page);
    await uploadTargets(page);
    await attach(page, { name: "targets.csv", mimeType: CSV, buffer: Buffer.from(TARGETS_CSV) });
    const alert = panel(page).getByRole("alert");
    await alert.waitFor({ timeout: 60_000 });
    await expect(alert.textContent()).resolves.toMatch(/already has a file as uploads\.targets/);
    await expect(panel(page).locator("li.file summary code").allTextContents()).resolves.toEqual([
      "uploads.targets",
    ]);
  });

  it("the panel lists the conversation's files after a reload, and Delete removes one (GET shows it gone)", async () => {
    await signIn(page);
    await uploadTargets(page);
    await attach(page, {
      name: "regions.csv",
      mimeType: CSV,
      buffer: Buffer.from("region,goal\nnorth,1\nsouth,2\n"),
    });
    await openFile(page, "uploads.regions");

    const listed = () =>
      page.waitForResponse((r) => r.request().method() === "GET" && /\/threads\/[^/]+\/files$/.test(r.url()));
    const [afterReload] = await Promise.all([listed(), page.reload()]);
    const names = async (r: Awaited<ReturnType<typeof listed>>) =>
      ((await r.json()) as { files: { name: string }[] }).files.map((f) => f.name).sort();
    await expect(names(afterReload)).resolves.toEqual(["regions", "targets"]);
    await openFile(page, "uploads.targets");
    await openFile(page, "uploads.regions");

    await panel(page).getByRole("button", { name: "Delete targets.csv" }).click();
    await panel(page).locator("summary code", { hasText: "uploads.targets" }).waitFor({ state: "detached" });
    const [afterDelete] = await Promise.all([listed(), page.reload()]);
    await expect(names(afterDelete)).resolves.toEqual(["regions"]);
    await openFile(page, "uploads.regions");
    await expect(panel(page).locator("li.file summary code").allTextContents()).resolves.toEqual([
      "uploads.regions",
    ]);
  });
});

/**
 * An answer survives the network in Chromium against the whole local stack: the browser goes
 * offline mid-answer and comes back, or the page is reloaded mid-answer — either way the same
 * answer completes once, where it was, with its SQL and table, and reads the same after a reload.
 * The answer is paused at a known point with the stand-in's holds, never by timing.
 */
import { Firestore } from "@google-cloud/firestore";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, reportFailure, screenshot } from "../support/browser";
import { HOLD_URL_ENV, holdClient, type Holds } from "../support/hold-control";
import { startFaultProxy, type FaultProxy } from "../support/fault-proxy";
import { stackEnv } from "../support/stack-env";

let browser: Browser;
let context: BrowserContext;
let page: Page;
let holds: Holds;
let db: Firestore;
/** The page reaches the API through this proxy, which can cut its connections like a lost network. */
let proxy: FaultProxy;

const QUESTION = "What is the revenue by category, in detail?";

beforeAll(async () => {
  const { urls, env } = stackEnv();
  holds = holdClient(env[HOLD_URL_ENV]);
  db = new Firestore({ projectId: env.GCLOUD_PROJECT, host: env.FIRESTORE_EMULATOR_HOST, ssl: false });
  browser = await launchBrowser();
  // The page is pointed at a fault proxy below, an origin its Content-Security-Policy rightly does
  // not allow: this test is about the network, so the CSP is set aside here (csp.e2e.ts tests it).
  context = await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: true });
  page = await context.newPage();
  page.on("pageerror", (e) => console.log(`[page error] ${e.message}`));
  const api = new URL(urls.api!);
  proxy = await startFaultProxy(api.hostname, Number(api.port));
  // Chromium's offline mode fails new requests but leaves an open stream alone; a real lost network
  // also breaks the open one. So the page is pointed at the proxy, which cuts it.
  await page.route("**/api/client-config", async (route) => {
    const res = await route.fetch();
    const body = (await res.json()) as { apiUrl: string };
    await route.fulfill({
      response: res,
      json: { ...body, apiUrl: `http://${proxy.address}${api.pathname}` },
    });
  });
  await page.goto(urls.web!);
  await page.getByRole("button", { name: "Continue as test user" }).click();
  await page.getByRole("button", { name: "+ New conversation" }).waitFor();
});

afterEach((ctx) => reportFailure(page, ctx.task));

afterAll(async () => {
  await browser?.close();
  await db?.terminate();
  await proxy?.close();
});

/** Asks in a new conversation; the answer pauses after its first chunks until `key` is released. */
async function askPaused(key: string): Promise<string> {
  await page.getByRole("button", { name: "+ New conversation" }).click();
  const box = page.getByLabel("Your question");
  await box.fill(`${QUESTION} [pause:${key}]`);
  await box.press("Enter");
  await page.waitForURL(/\/t\/[0-9a-f-]{36}$/);
  // Some of the answer is on the page, and the rest is held back.
  await page.locator('article.turn[data-status="streaming"] .answer p:not(.muted)').waitFor();
  await holds.waitHeld(key);
  return page.url().split("/t/")[1];
}

/** Waits (on the condition, bounded) until the run has finished on the server. */
async function runFinished(threadId: string) {
  await expect
    .poll(async () => (await db.collection("threads").doc(threadId).get()).get("run"), { timeout: 30_000 })
    .toBeNull();
}

/** The finished turn: its answer, and that it appears once, with one table. */
async function finishedTurn() {
  const turn = page.locator('article.turn[data-status="done"]');
  await turn.locator(".answer").waitFor();
  expect(await page.locator("article.turn").count()).toBe(1);
  expect(await turn.locator("table").count()).toBe(1);
  return turn.locator(".answer p").innerText();
}

describe("an answer that survives the network", () => {
  it("going offline mid-answer and coming back completes the same answer once", async () => {
    const key = holds.newKey("offline");
    const threadId = await askPaused(key);
    const rejoins: string[] = [];
    page.on("request", (r) => {
      if (r.method() === "GET" && /\/runs\/[0-9a-f-]{36}\/stream/.test(r.url())) rejoins.push(r.url());
    });
    await context.setOffline(true);
    await fetch(`${proxy.controlUrl}/fail?ms=0`, { method: "POST" }); // the open stream breaks
    // While the page is offline the answer is written to the end on the server.
    await holds.release(key);
    await runFinished(threadId);
    await screenshot(page, "resume-01-offline");
    await context.setOffline(false);
    const live = await finishedTurn();
    expect(rejoins.length).toBeGreaterThanOrEqual(1); // the page rejoined the run's stream
    expect(live).toMatch(/Every category contributes/);
    await screenshot(page, "resume-02-back-online");
    // The stored answer is the one the page assembled: nothing lost, nothing twice.
    await page.reload();
    expect(await finishedTurn()).toBe(live);
  });

  it("a reload mid-answer picks the answer up where it is and completes it once", async () => {
    const key = holds.newKey("reload");
    await askPaused(key);
    await page.reload();
    // The page joins the running answer: what was written so far comes back, then the rest.
    await page.locator('article.turn[data-status="streaming"] .answer p:not(.muted)').waitFor();
    await page.getByRole("button", { name: "Stop" }).waitFor();
    await holds.release(key);
    const live = await finishedTurn();
    expect(live).toMatch(/Every category contributes/);
    await page.reload();
    expect(await finishedTurn()).toBe(live);
  });
});

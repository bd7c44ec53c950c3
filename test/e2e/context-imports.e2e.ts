/**
 * The team's dbt project in Chromium, against the whole local stack: a CI step pushes the public
 * jaffle-shop artifacts (`POST /admin/context/imports`); the admin reviews the import in the
 * admin page and applies it whole; a re-push with two changed metrics is applied item by item
 * (one applied, the other left waiting, then dismissed); and an answer whose SQL used the
 * imported metric names it, reviewed in Quarry, under the answer. Screenshots go to test-results/e2e/.
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { Firestore } from "@google-cloud/firestore";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { signIn, type TestUser } from "../support/auth-emulator";
import { call, sdkClient } from "../support/api-client";
import { launchBrowser, reportFailure, screenshot } from "../support/browser";
import { E2E_TEST_USER } from "../support/e2e-access";
import { importSeenEverywhere } from "../support/imports-fresh";
import { JAFFLE, MAP } from "../support/jaffle";
import { stackEnv } from "../support/stack-env";

const ID = "dbt-jaffle_shop";
const QUESTION = "What is the order total? [definition:order total]";

let browser: Browser;
let context: BrowserContext;
let page: Page;
let web: string;
let api: string;
let admin: TestUser;
let db: Firestore;

/** The fixture's artifacts as a CI step sends them, `edit` changing the semantic manifest first. */
function artifacts(edit?: (metrics: Record<string, unknown>[]) => void): Record<string, string> {
  const read = (f: string) => readFileSync(path.join(JAFFLE, "target", f), "utf8");
  const semantic = JSON.parse(read("semantic_manifest.json"));
  edit?.(semantic.metrics);
  return {
    "target/manifest.json": read("manifest.json"),
    "target/semantic_manifest.json": JSON.stringify(semantic),
  };
}

async function push(files: Record<string, string>) {
  const res = await call(api, "/admin/context/imports", {
    method: "POST",
    token: admin.idToken,
    body: { source: "dbt", files, map: MAP },
  });
  expect(res.status, res.text).toBe(201);
}

const card = () => page.getByRole("listitem", { name: "Import: dbt project jaffle_shop" });

beforeAll(async () => {
  const stack = stackEnv();
  web = stack.urls.web!;
  api = stack.urls.api!;
  admin = await signIn(stack.urls.auth!, E2E_TEST_USER.email, E2E_TEST_USER.password);
  db = new Firestore({
    projectId: stack.env.GCLOUD_PROJECT,
    host: stack.env.FIRESTORE_EMULATOR_HOST,
    ssl: false,
  });
  await db.collection("context_imports").doc(ID).delete();
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
  await context?.close();
  await browser?.close();
  if (db) {
    await db.collection("context_imports").doc(ID).delete();
    await db.terminate();
  }
});

describe("imported definitions in the browser", () => {
  it("the admin reviews a pushed import and applies it whole, then a re-push item by item", async () => {
    await push(artifacts());
    await page.getByRole("link", { name: "Admin" }).click();
    await page.getByRole("heading", { name: "Imported definitions" }).waitFor();
    await card()
      .getByText(/^Waiting for review/)
      .waitFor();
    await expect(card().getByText("Nothing of it in use yet.").count()).resolves.toBe(1);
    const changes = card().getByRole("list", { name: "Changes of dbt project jaffle_shop" });
    await expect(changes.getByText("metric added:", { exact: false }).count()).resolves.toBeGreaterThan(5);
    await card().scrollIntoViewIfNeeded();
    await screenshot(page, "imports-01-first-push");
    await card().getByRole("button", { name: "Apply all" }).click();
    await card()
      .getByText(/^In use: 6 tables/)
      .waitFor();
    await expect(
      card()
        .getByText(/^Waiting for review/)
        .count(),
    ).resolves.toBe(0);

    // The team changes two metrics and CI pushes again: the review lists both.
    await push(
      artifacts((metrics) => {
        const large = metrics.find((m) => m.name === "large_orders") as {
          filter: { where_filters: { where_sql_template: string }[] };
        };
        large.filter.where_filters[0].where_sql_template =
          "{{ Dimension('order_id__order_total_dim') }} >= 50";
        (metrics.find((m) => m.name === "order_total") as { description: string }).description =
          "The sum of all orders, tax included.";
      }),
    );
    await page.getByRole("button", { name: "Refresh imports" }).click();
    await card()
      .getByText(/^Waiting for review/)
      .waitFor();
    await expect(changes.getByRole("listitem").count()).resolves.toBe(2);
    const item = (name: string) =>
      changes.getByRole("listitem").filter({ hasText: `metric changed: ${name}` });
    await expect(item("large_orders").textContent()).resolves.toMatch(/>= 50/);
    await expect(item("order_total").textContent()).resolves.toMatch(
      /described now as: The sum of all orders, tax included\./,
    );
    // Only the large-orders change: the other is unticked and stays to review.
    await changes.getByLabel("metric changed: order_total").uncheck();
    await screenshot(page, "imports-02-item-by-item");
    await card().getByRole("button", { name: "Apply selected (1)" }).click();
    await expect.poll(() => changes.getByRole("listitem").count(), { timeout: 30_000 }).toBe(1);
    await expect(changes.getByRole("listitem").textContent()).resolves.toMatch(/metric changed: order_total/);
    await card().getByRole("button", { name: "Dismiss" }).click();
    await expect
      .poll(
        () =>
          card()
            .getByText(/^Waiting for review/)
            .count(),
        { timeout: 30_000 },
      )
      .toBe(0);
    await card()
      .getByText(/^In use: 6 tables/)
      .waitFor();
  });

  it("an answer whose SQL used the imported metric names it under the answer", async () => {
    // Asked once every instance's copy of the imports is newer than the last apply.
    await importSeenEverywhere(db, ID);
    // Through the API first: the answer's message names the definitions it was given.
    const client = sdkClient(api, admin);
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "quarry", {
      input: { messages: [{ type: "human", content: `${QUESTION} [m-${randomUUID()}]` }] },
    });
    const state = await client.threads.getState(thread.thread_id);
    const msgs = (state.values as { messages: { response_metadata?: Record<string, unknown> }[] }).messages;
    expect(msgs[msgs.length - 1].response_metadata?.quarry_definitions).toContainEqual(
      expect.objectContaining({ name: "order total", source: "dbt", approved: true }),
    );
    await page.goto(web);
    await page.getByRole("button", { name: "+ New conversation" }).click();
    const box = page.getByLabel("Your question");
    await box.fill(QUESTION);
    await box.press("Enter");
    await page.locator('article.turn[data-status="done"]').last().waitFor({ timeout: 60_000 });
    const turn = page.locator("article.turn").last();
    await expect(turn.locator(".sql code").first().textContent()).resolves.toMatch(/jaffle\.orders/);
    const used = turn.getByRole("region", { name: "Team definitions used" });
    await used.waitFor();
    await expect(used.textContent()).resolves.toMatch(/order total\s*— dbt.*imported and reviewed in Quarry/);
    await screenshot(page, "imports-03-answer-names-definition");
  });
});

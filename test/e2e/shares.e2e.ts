/**
 * Sharing a conversation in Chromium against the whole local stack (closed access policy, DuckDB
 * with `shop` and the `jaffle` fixture): Olga (groups shop and jaffle) asks a question and makes a
 * link with **Share**; Ann (shop only) opens it and reads the conversation — the query, its rows and
 * the answer — with nothing to ask, vote on or schedule; Jay (jaffle only), whose scope does not
 * cover the `shop` query, gets the not-found view. Ann continues it in her own conversation: a new
 * thread of hers opens, is in her list, and her next question runs there. Olga revokes the link in
 * the page and it stops opening for Ann. People are in browser contexts of their own; groups are
 * written straight into Firestore (as the admin page leaves them) and taken away at the end, waiting
 * until the function no longer sees them. Every wait is on a condition.
 */
import { randomUUID } from "node:crypto";
import { Firestore } from "@google-cloud/firestore";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { signUp, type TestUser } from "../support/auth-emulator";
import { call } from "../support/api-client";
import { launchBrowser, reportFailure, screenshot } from "../support/browser";
import { E2E_MEMBER_DOMAIN } from "../support/e2e-access";
import { accessSeenEverywhere, seedAccess, until } from "../support/seed-access";
import { stackEnv } from "../support/stack-env";

const PASSWORD = "e2e-shares-pw";
const GROUPS = { "e2e-share-shop": ["shop"], "e2e-share-jaffle": ["jaffle"] };
/** The owner's question, unique to this run (its conversation's title). */
const QUESTION = `How many orders? ${randomUUID().slice(0, 8)}`;

let browser: Browser;
let web: string;
let api: string;
let db: Firestore;
let olga: TestUser;
let ann: TestUser;
let jay: TestUser;
let nobody: TestUser;
const contexts: BrowserContext[] = [];
let current: Page | undefined;
/** The link Olga made (its full URL) and her conversation's id. */
let link = "";
let olgasThread = "";

const me = async (u: TestUser) =>
  (await call(api, "/me", { token: u.idToken })).json as { scope: { datasets: string[] } };

/** A member's page, signed in through the email/password form at `url` (the page keeps the path). */
async function signedIn(u: TestUser, url = web): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  contexts.push(context);
  const page = await context.newPage();
  page.on("dialog", (d) => void d.accept());
  page.on("pageerror", (e) => console.log(`[page error] ${e.message}`));
  current = page;
  await page.goto(url);
  await page.getByLabel("Email", { exact: true }).fill(u.email);
  await page.getByLabel("Password", { exact: true }).fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  return page;
}

const person = (name: string) =>
  signUp(stackEnv().urls.auth!, `${name}-${Date.now()}-${randomUUID().slice(0, 4)}@${E2E_MEMBER_DOMAIN}`, {
    password: PASSWORD,
  });

const shared = (page: Page) => page.getByRole("region", { name: "Shared conversation" });

beforeAll(async () => {
  const stack = stackEnv();
  web = stack.urls.web!;
  api = stack.urls.api!;
  db = new Firestore({
    projectId: stack.env.GCLOUD_PROJECT,
    host: stack.env.FIRESTORE_EMULATOR_HOST,
    ssl: false,
  });
  [olga, ann, jay, nobody] = await Promise.all(["olga", "ann", "jay", "nobody"].map(person));
  await seedAccess(db, GROUPS, [
    [olga, "member", ["e2e-share-shop", "e2e-share-jaffle"]],
    [ann, "member", ["e2e-share-shop"]],
    [jay, "member", ["e2e-share-jaffle"]],
  ]);
  // The function reads groups through a short cache: wait until it sees them.
  await until(
    () => me(jay),
    (m) => m.scope.datasets.join() === "jaffle",
  );
  await until(
    () => me(ann),
    (m) => m.scope.datasets.join() === "shop",
  );
  browser = await launchBrowser();
}, 120_000);

afterEach(async (ctx) => {
  await reportFailure(current, ctx.task);
});

afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => undefined);
  await browser?.close();
  if (db) {
    for (const name of Object.keys(GROUPS)) await db.collection("groups").doc(name).delete();
    // Later files run with no groups: every instance's cache lets go of them, and one shows it.
    await accessSeenEverywhere();
    await until(
      () => me(nobody),
      (m) => m.scope.datasets.includes("shop") && m.scope.datasets.includes("jaffle"),
    );
    await db.terminate();
  }
}, 60_000);

describe("sharing a conversation in the page", () => {
  it("the owner makes a link with Share and copies it from the list", async () => {
    const page = await signedIn(olga);
    await page.getByRole("button", { name: "+ New conversation" }).click();
    const box = page.getByLabel("Your question");
    await box.fill(QUESTION);
    await box.press("Enter");
    await page.waitForURL(/\/t\/[0-9a-f-]{36}$/);
    olgasThread = page.url().split("/t/")[1];
    await page.locator('article.turn[data-status="done"]').last().waitFor({ timeout: 60_000 });
    await page.getByRole("button", { name: "Share" }).click();
    const panel = page.getByRole("region", { name: "Share this conversation" });
    await panel.getByText("No links yet.").waitFor();
    await panel.getByRole("button", { name: "Create link" }).click();
    const input = panel.getByRole("listitem").getByLabel("Share link");
    await input.waitFor();
    link = await input.inputValue();
    expect(link).toMatch(new RegExp(`^${web.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/s/[A-Za-z0-9_-]{24}$`));
    await expect(panel.getByRole("listitem").count()).resolves.toBe(1);
    await screenshot(page, "shares-01-link-made");
  });

  it("an in-scope member sees the conversation read-only: the query, its rows and the answer", async () => {
    const page = await signedIn(ann, link);
    const view = shared(page);
    await view.getByRole("heading", { name: QUESTION }).waitFor();
    await view.getByText(`Shared by ${olga.email} · read-only`).waitFor();
    const turn = view.locator('article.turn[data-status="done"]');
    await expect(turn.count()).resolves.toBe(1);
    await turn.getByText("Here is what I found").waitFor();
    await expect(turn.innerText()).resolves.toContain("FROM shop.orders");
    await turn.getByRole("table").waitFor();
    // Read-only: nothing to ask, ask again, vote on or schedule.
    await expect(page.getByLabel("Your question").count()).resolves.toBe(0);
    for (const name of ["Regenerate", "Edit", "Schedule…"]) {
      await expect(view.getByRole("button", { name, exact: true }).count()).resolves.toBe(0);
    }
    // Olga's planner listed jaffle's tables too: never shown here.
    await expect(view.innerText()).resolves.not.toMatch(/jaffle/i);
    await screenshot(page, "shares-02-shared-view");
  });

  it("a member whose scope does not cover it sees the not-found view", async () => {
    const page = await signedIn(jay, link);
    await page.getByRole("heading", { name: "Conversation not found" }).waitFor();
    await expect(page.locator("article.turn").count()).resolves.toBe(0);
    await expect(page.getByText(QUESTION).count()).resolves.toBe(0);
    await expect(page.getByRole("button", { name: "Continue in my own conversation" }).count()).resolves.toBe(
      0,
    );
    await screenshot(page, "shares-03-not-found");
  });

  it("Continue copies it into the viewer's own conversation, where the next question runs as them", async () => {
    const page = await signedIn(ann, link);
    const view = shared(page);
    await view.getByRole("heading", { name: QUESTION }).waitFor();
    await view.getByRole("button", { name: "Continue in my own conversation" }).click();
    await page.waitForURL(/\/t\/[0-9a-f-]{36}$/);
    const mine = page.url().split("/t/")[1];
    expect(mine).not.toBe(olgasThread);
    // Hers: in her list, with the shared turn loaded.
    await page
      .getByRole("navigation", { name: "Conversations" })
      .locator(`li[data-thread-id="${mine}"]`)
      .waitFor();
    await page
      .locator('article.turn[data-status="done"]')
      .first()
      .getByText("Here is what I found")
      .waitFor();
    const box = page.getByLabel("Your question");
    await box.fill("How many customers?");
    await box.press("Enter");
    await expect
      .poll(() => page.locator('article.turn[data-status="done"]').count(), { timeout: 60_000 })
      .toBe(2);
    await page.locator("article.turn").last().getByText("Here is what I found").waitFor();
    // The new thread is Ann's, not Olga's.
    const asAnn = await call(api, `/threads/${mine}`, { token: ann.idToken });
    expect(asAnn.json).toMatchObject({ metadata: { owner: ann.uid } });
    expect((await call(api, `/threads/${mine}`, { token: olga.idToken })).status).toBe(404);
    await screenshot(page, "shares-04-continued");
  });

  it("stops opening once the owner revokes it in the page", async () => {
    const page = await signedIn(olga, `${web}/t/${olgasThread}`);
    await page.locator('article.turn[data-status="done"]').first().waitFor();
    await page.getByRole("button", { name: "Share" }).click();
    const panel = page.getByRole("region", { name: "Share this conversation" });
    await panel.getByRole("button", { name: /^Revoke the link/ }).click();
    await panel.getByText("No links yet.").waitFor();
    const viewer = await signedIn(ann, link);
    await viewer.getByRole("heading", { name: "Conversation not found" }).waitFor();
    await screenshot(viewer, "shares-05-revoked");
  });
});

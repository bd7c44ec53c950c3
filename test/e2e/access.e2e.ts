/**
 * Access in Chromium against the whole local stack with a closed policy (test/support/e2e-access.ts):
 * an outsider sees the no-access card naming whom to ask; the admin (the page's test user) sees
 * the admin section and a member does not; the admin adds members, sets one's questions per
 * minute to 1 and that member's second question is refused with the quota's message; a member's
 * up-vote becomes a proposal that the admin edits and approves (after a failed dry run shown
 * inline), and `npm run context` prints it at once, while a rejected one never appears; the admin
 * makes a group in the page, puts a member in it, changes and deletes it (last: a group left would
 * take the data of every member in none away).
 * Each case signs its people in in browser contexts of their own. Screenshots go to test-results/e2e/.
 */
import { execFile } from "node:child_process";
import path from "node:path";
import { initializeApp } from "firebase-admin/app";
import { FieldValue, getFirestore } from "firebase-admin/firestore";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { signUp } from "../support/auth-emulator";
import { launchBrowser, reportFailure, screenshot } from "../support/browser";
import { E2E_CONTACT, E2E_MEMBER_DOMAIN, E2E_TEST_USER } from "../support/e2e-access";
import { stackEnv } from "../support/stack-env";
import { accessSeenEverywhere } from "../support/seed-access";

const PASSWORD = "e2e-access-pw";
const ROOT = path.resolve(__dirname, "../..");

let browser: Browser;
let web: string;
let contexts: BrowserContext[] = [];
/** The page that failed last is reported: the case's current one. */
let current: Page | undefined;
let n = 0;

/** A fresh page in a browser context of its own (a separate session). */
async function newPage(): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  contexts.push(context);
  const page = await context.newPage();
  page.on("dialog", (d) => void d.accept());
  page.on("pageerror", (e) => console.log(`[page error] ${e.message}`));
  current = page;
  return page;
}

/** A verified account (created through the Auth emulator's REST API) with an address of `domain`. */
async function account(name: string, domain = E2E_MEMBER_DOMAIN, verified = true) {
  const email = `${name}-${Date.now()}-${n++}@${domain}`;
  const user = await signUp(stackEnv().urls.auth!, email, { password: PASSWORD, verified });
  return { email, idToken: user.idToken };
}

/** Signs in through the page's email/password form. */
async function signInWithPassword(page: Page, email: string) {
  await page.goto(web);
  await page.getByLabel("Email", { exact: true }).fill(email);
  await page.getByLabel("Password", { exact: true }).fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
}

async function signInAsMember(page: Page, email: string) {
  await signInWithPassword(page, email);
  await page.getByRole("button", { name: "+ New conversation" }).waitFor();
}

/** Signs the admin (the one-click test user) in and opens the admin section from the header link. */
async function openAdmin(page: Page) {
  await page.goto(web);
  await page.getByRole("button", { name: "Continue as test user" }).click();
  await page.getByRole("link", { name: "Admin" }).click();
  await page.getByRole("heading", { name: "Administration" }).waitFor();
  await page.getByRole("heading", { name: "Members" }).waitFor();
}

/** Adds `email` as a member through the admin page and waits until the list shows them. */
async function addMember(page: Page, email: string) {
  const form = page.getByRole("form", { name: "Add a member" });
  await form.getByLabel("Email").fill(email);
  await form.getByLabel("Role of the new member").selectOption("member");
  await form.getByRole("button", { name: "Add member" }).click();
  await page.getByRole("list", { name: "Members" }).getByText(email, { exact: true }).waitFor();
}

async function ask(page: Page, question: string) {
  const box = page.getByLabel("Your question");
  await box.fill(question);
  await box.press("Enter");
}

/** Asks in a new conversation and waits for the answer. */
async function askInNewThread(page: Page, question: string) {
  await page.getByRole("button", { name: "+ New conversation" }).click();
  await page.getByRole("heading", { name: "Ask your data a question" }).waitFor();
  await ask(page, question);
  await page.waitForURL(/\/t\/[0-9a-f-]{36}$/);
  await page.locator('article.turn[data-status="done"]').last().waitFor({ timeout: 60_000 });
}

/** `npm run context -- <question>` against the stack's Firestore, as a developer runs it; its output. */
function context(question: string): Promise<string> {
  const { env } = stackEnv();
  return new Promise((resolve, reject) =>
    execFile(
      process.execPath,
      ["--import", "tsx", "scripts/context.ts", question],
      {
        cwd: ROOT,
        env: { ...process.env, ...env, QUARRY_WAREHOUSE: "duckdb", GOOGLE_CLOUD_PROJECT: env.GCLOUD_PROJECT },
        timeout: 90_000,
      },
      (err, out, errOut) => (err ? reject(new Error(`${err.message}\n${errOut}`)) : resolve(out)),
    ),
  );
}

/**
 * Runs `act` and waits for the page's `method` request on group `name`; fails with the API's answer
 * when it is not a success (a group left behind would take the data of every later file's members).
 */
async function groupCall(page: Page, name: string, method: "PATCH" | "DELETE", act: () => Promise<void>) {
  const answered = page
    .waitForResponse((r) => r.request().method() === method && r.url().endsWith(`/admin/groups/${name}`), {
      timeout: 30_000,
    })
    .catch((e: Error) => e);
  await act();
  const res = await answered;
  if (res instanceof Error) {
    const alerts = await page.getByRole("alert").allInnerTexts();
    throw new Error(
      `no answer to a ${method} of group ${name} from the page within 30 s (alerts: ${alerts.join(" | ") || "none"})`,
      {
        cause: res,
      },
    );
  }
  if (!res.ok()) throw new Error(`${method} group ${name}: ${res.status()} ${await res.text()}`);
}

/** Deletes a group with the row's button (the confirmation is accepted) once the server answered. */
async function deleteInPage(page: Page, name: string) {
  await groupCall(page, name, "DELETE", () => page.getByRole("button", { name: `Delete ${name}` }).click());
}

/** Every group in the stack's Firestore, deleted (and left by its members) after a failed case. */
async function deleteLeftoverGroups() {
  const { env } = stackEnv();
  const db = getFirestore(initializeApp({ projectId: env.GCLOUD_PROJECT }, `access-e2e-${Date.now()}`));
  const groups = await db.collection("groups").get();
  for (const g of groups.docs) {
    const members = await db.collection("members").where("groups", "array-contains", g.id).get();
    for (const m of members.docs) await m.ref.update({ groups: FieldValue.arrayRemove(g.id) });
    await g.ref.delete();
  }
  return groups.docs.map((g) => g.id);
}

const examplesLine = (out: string) => /^Verified examples: (.*)$/m.exec(out)?.[1] ?? "";

beforeAll(async () => {
  web = stackEnv().urls.web!;
  browser = await launchBrowser();
});

beforeEach(() => {
  contexts = [];
  current = undefined;
});

afterEach(async (ctx) => {
  await reportFailure(current, ctx.task);
  for (const c of contexts) await c.close();
});

afterAll(async () => {
  await browser?.close();
  // The cases delete their groups; after one that failed first, this keeps the later files' members
  // from landing in "no group, no data".
  const left = await deleteLeftoverGroups();
  if (left.length) console.log(`[access e2e] deleted groups left by a failed case: ${left.join(", ")}`);
});

describe("access in the browser", () => {
  it("an outsider is refused at the door: the sign-in form says whom to ask", async () => {
    const page = await newPage();
    const outsider = await account("outsider", "elsewhere.test");
    await signInWithPassword(page, outsider.email);
    const refusal = page.getByRole("alert").filter({ hasText: `Ask ${E2E_CONTACT} for access.` });
    await refusal.waitFor();
    await expect(refusal.innerText()).resolves.toContain(
      `${outsider.email} is not allowed to use this Quarry`,
    );
    // The words only: no HTTP request, no JSON.
    await expect(refusal.innerText()).resolves.not.toMatch(/HTTP|PERMISSION_DENIED|\{/);
    await expect(page.getByLabel("Your question").count()).resolves.toBe(0);
    await screenshot(page, "access-00-refused-at-the-door");
  });

  it("an unverified address in the domain gets past the door but sees the no-access card, not the chat", async () => {
    const page = await newPage();
    const unverified = await account("unverified", E2E_MEMBER_DOMAIN, false);
    await signInWithPassword(page, unverified.email);
    const card = page
      .getByRole("alert")
      .filter({ has: page.getByRole("heading", { name: "No access to Quarry" }) });
    await card.waitFor();
    await expect(card.innerText()).resolves.toContain(`Ask ${E2E_CONTACT} for access.`);
    await expect(card.innerText()).resolves.toContain(`Signed in as ${unverified.email}`);
    await expect(page.getByLabel("Your question").count()).resolves.toBe(0);
    await expect(page.getByRole("link", { name: "Admin" }).count()).resolves.toBe(0);
    await screenshot(page, "access-01-no-access");
    await card.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("button", { name: "Continue as test user" }).waitFor();
  });

  it("the admin sees the admin link and page; a member sees no link and 'admins only' by URL", async () => {
    const admin = await newPage();
    await openAdmin(admin);
    await expect(admin.locator(".topbar .role").textContent()).resolves.toBe("admin");
    for (const name of ["Usage", "Audit log", "Proposals"]) {
      await admin.getByRole("heading", { name, exact: true }).waitFor();
    }
    await admin.getByRole("button", { name: "Refresh usage" }).waitFor();
    await screenshot(admin, "access-02-admin-page");

    const page = await newPage();
    const member = await account("member");
    await signInAsMember(page, member.email);
    await expect(page.locator(".topbar .role").textContent()).resolves.toBe("member");
    await expect(page.getByRole("link", { name: "Admin" }).count()).resolves.toBe(0);
    await page.goto(`${web}/admin`);
    await page.getByRole("heading", { name: "Admins only" }).waitFor();
    await expect(page.getByRole("heading", { name: "Administration" }).count()).resolves.toBe(0);
    await screenshot(page, "access-03-admins-only");
  });

  it("the admin adds a member and removes another; the list and the audit log show it", async () => {
    const admin = await newPage();
    await openAdmin(admin);
    const added = `added-${Date.now()}@partner.test`;
    await addMember(admin, added);
    const gone = `gone-${Date.now()}@partner.test`;
    await addMember(admin, gone);
    await admin.getByRole("button", { name: `Remove ${gone}` }).click();
    await expect
      .poll(() => admin.getByRole("list", { name: "Members" }).getByText(gone, { exact: true }).count())
      .toBe(0);
    await expect(
      admin.getByRole("list", { name: "Members" }).getByText(added, { exact: true }).count(),
    ).resolves.toBe(1);

    const filter = admin.getByRole("form", { name: "Filter the audit log" });
    await filter.getByLabel("Person (email or uid)").fill(E2E_TEST_USER.email);
    await filter.getByRole("button", { name: "Show entries" }).click();
    const entries = admin.getByRole("list", { name: "Audit entries" });
    await entries.getByText(`member.add ${added}`).waitFor();
    await entries.getByText(`member.remove ${gone}`).waitFor();
    await screenshot(admin, "access-04-members");
  });

  it("the admin page shows every section with an audit log holding a failed and a refused query, errors in words", async () => {
    const admin = await newPage();
    await admin.goto(web);
    await admin.getByRole("button", { name: "Continue as test user" }).click();
    await admin.getByRole("button", { name: "+ New conversation" }).waitFor();
    // The model sends a query with a misspelt column, then one that writes: one fails, one is refused.
    await askInNewThread(admin, "[sql:bad-column] Which customers are there?");
    await askInNewThread(admin, "[sql:delete] Remove the first order");
    await admin.getByRole("link", { name: "Admin" }).click();
    await admin.getByRole("heading", { name: "Administration" }).waitFor();
    const filter = admin.getByRole("form", { name: "Filter the audit log" });
    // Query entries carry the person's email: the filter by email finds them.
    await filter.getByLabel("Person (email or uid)").fill(E2E_TEST_USER.email);
    await filter.getByRole("button", { name: "Show entries" }).click();
    const entries = admin.getByRole("list", { name: "Audit entries" });
    const row = (sql: string) => entries.locator("li.audit.query").filter({ hasText: sql }).first();
    await row("SELECT nme FROM shop.customers").waitFor();
    await expect(row("SELECT nme FROM shop.customers").innerText()).resolves.toMatch(
      /query error[\s\S]*invalid query: [\s\S]*nme/,
    );
    await expect(row("DELETE FROM shop.orders").innerText()).resolves.toMatch(
      /query refused[\s\S]*refused: Only read-only SELECT/,
    );
    for (const name of ["Members", "Groups", "Usage", "Audit log", "Proposals"]) {
      await admin.getByRole("heading", { name, exact: true }).waitFor();
    }
    await expect(admin.getByText("This part could not be shown").count()).resolves.toBe(0);
    await screenshot(admin, "access-05-audit-errors");
  });

  it("a member over their questions-per-minute quota sees the quota message in the turn", async () => {
    const member = await account("limited");
    const admin = await newPage();
    await openAdmin(admin);
    await addMember(admin, member.email);
    await admin.getByLabel(`Questions per minute for ${member.email}`).fill("1");
    const saved = admin.waitForResponse(
      (r) => r.url().includes("/admin/members/") && r.request().method() === "PATCH",
    );
    await admin.getByRole("button", { name: `Save quotas for ${member.email}` }).click();
    expect((await saved).status()).toBe(200);
    // The new limit as the API applies it (members are cached for up to 2 s here).
    await expect
      .poll(async () => {
        const res = await fetch(`${stackEnv().urls.api}/me`, {
          headers: { authorization: `Bearer ${member.idToken}` },
        });
        return ((await res.json()) as { quotas?: { questionsPerMinute: { limit: number } } }).quotas
          ?.questionsPerMinute.limit;
      })
      .toBe(1);

    const page = await newPage();
    await signInAsMember(page, member.email);
    await askInNewThread(page, "How many orders are there?");
    await ask(page, "And how many customers?");
    const refused = page.locator('article.turn[data-status="error"]').last();
    await refused.waitFor({ timeout: 60_000 });
    await expect(refused.getByRole("alert").textContent()).resolves.toMatch(
      /^You have asked 1 questions in the last minute; the limit is 1\. Ask again in \d+ s\.$/,
    );
    await screenshot(page, "access-05-over-quota");

    // Usage shows the member's answered question today, and bytes in binary units.
    const row = admin
      .getByRole("table", { name: "Usage per person" })
      .locator("tr")
      .filter({ hasText: member.email });
    await expect
      .poll(async () => {
        await admin.getByRole("button", { name: "Refresh usage" }).click();
        return (await row.count()) ? row.locator("td").first().textContent() : null;
      })
      .toBe("1");
    await expect(row.locator("td").nth(1).textContent()).resolves.toMatch(/^\d+(\.\d+)? (B|KiB|MiB|GiB)$/);
    await screenshot(admin, "access-07-admin-usage");
  });

  it("a member's up-vote becomes a proposal; approved, `npm run context` shows it; rejected, never", async () => {
    const tag = `t${Date.now().toString(36)}`;
    const kept = `How many orders came through each channel, ${tag} keep?`;
    const dropped = `How many orders came through each channel, ${tag} drop?`;
    const page = await newPage();
    const member = await account("voter");
    await signInAsMember(page, member.email);
    for (const question of [kept, dropped]) {
      await askInNewThread(page, question);
      const turn = page.locator("article.turn").last();
      await expect(turn.locator(".sql code").textContent()).resolves.toMatch(/SELECT channel/);
      await turn.getByRole("button", { name: "Good answer" }).click();
      await turn.getByText("Thanks, noted.").waitFor();
    }

    const admin = await newPage();
    await openAdmin(admin);
    const card = (q: string) => admin.getByRole("listitem", { name: `Proposal: ${q}` });
    await card(kept).waitFor();
    const approvedQuestion = `Orders per sales channel for the ${tag} zebra review`;
    await card(kept).getByLabel("Question").fill(approvedQuestion);
    // A broken SQL is refused by the dry run: the reason shows in the card.
    const sql = card(kept).getByLabel("SQL");
    const goodSql = await sql.inputValue();
    await sql.fill("SELECT nothing FROM shop.no_such_table");
    await card(kept).getByRole("button", { name: "Approve" }).click();
    await card(kept)
      .getByRole("alert")
      .filter({ hasText: /does not pass the dry run/ })
      .waitFor();
    await screenshot(admin, "access-06-proposal-refused");
    await sql.fill(goodSql);
    await card(kept).getByRole("button", { name: "Approve" }).click();
    await card(kept).waitFor({ state: "detached" });

    const rejectedQuestion = `Orders per sales channel for the ${tag} walrus audit`;
    await card(dropped).getByLabel("Question").fill(rejectedQuestion);
    await card(dropped).getByRole("button", { name: "Save changes" }).click();
    await card(rejectedQuestion).waitFor();
    await card(rejectedQuestion).getByRole("button", { name: "Reject" }).click();
    await card(rejectedQuestion).waitFor({ state: "detached" });

    // The running stack was not restarted: the command reads the approval from Firestore.
    const out = await context(`orders per sales channel ${tag} zebra review`);
    expect(out).toMatch(/Approved in the admin page: [1-9]\d* verified quer/);
    expect(examplesLine(out)).toContain(approvedQuestion);
    const other = await context(`orders per sales channel ${tag} walrus audit`);
    expect(other).not.toContain(rejectedQuestion);
    expect(examplesLine(other)).not.toContain("walrus");
  });

  it("the admin makes a group in the page, puts a member in it, changes its datasets and deletes it; the audit log shows each", async () => {
    const admin = await newPage();
    await openAdmin(admin);
    const email = `grouped-${Date.now()}@partner.test`;
    await addMember(admin, email);
    const name = `e2e-${Date.now().toString(36)}`;
    const create = admin.getByRole("form", { name: "Create a group" });
    await admin.getByText(/No groups yet: every member sees every allowed dataset/).waitFor();
    await create.getByLabel("Name").fill(name);
    // A dataset the warehouse does not have is refused with the ones it has.
    await create.getByLabel("Datasets").fill("nowhere");
    await create.getByRole("button", { name: "Create group" }).click();
    await create
      .getByRole("alert")
      .filter({ hasText: /no dataset or table nowhere.*Its datasets: (\w+, )*shop\b/ })
      .waitFor();
    await create.getByLabel("Datasets").fill("shop.orders, shop.customers");
    await create.getByRole("button", { name: "Create group" }).click();
    const datasets = admin.getByRole("textbox", { name: `Datasets of ${name}` });
    await expect.poll(() => datasets.count()).toBe(1);
    await expect(datasets.inputValue()).resolves.toBe("shop.customers, shop.orders");
    // The member's row now offers the group, and says a member in none sees nothing.
    const picker = admin.getByRole("group", { name: `Groups of ${email}` });
    await picker.getByText("In no group: sees no data.").waitFor();
    await picker.getByRole("checkbox", { name }).click();
    await expect.poll(() => picker.getByRole("checkbox", { name }).isChecked()).toBe(true);
    const row = admin.locator(`li[data-group="${name}"]`);
    await row.getByText(`Members: ${email}`).waitFor();
    await screenshot(admin, "access-08-groups");

    await datasets.fill("shop");
    await groupCall(admin, name, "PATCH", () =>
      admin.getByRole("button", { name: `Save datasets of ${name}` }).click(),
    );
    await expect.poll(() => row.getByRole("textbox").inputValue()).toBe("shop");
    await deleteInPage(admin, name);
    await row.waitFor({ state: "detached" });
    await expect.poll(() => picker.getByRole("checkbox").count()).toBe(0);

    const filter = admin.getByRole("form", { name: "Filter the audit log" });
    await filter.getByLabel("Person (email or uid)").fill(E2E_TEST_USER.email);
    await filter.getByRole("button", { name: "Show entries" }).click();
    const entries = admin.getByRole("list", { name: "Audit entries" });
    for (const text of [
      `group.create ${name}`,
      `member.update ${email}`,
      `group.update ${name}`,
      `group.delete ${name}`,
    ]) {
      await entries.getByText(text).waitFor();
    }
  });

  it("a member in a group sees only their group's data listed; with the group gone, everything again", async () => {
    const admin = await newPage();
    await openAdmin(admin);
    const member = await account("scoped");
    await addMember(admin, member.email);
    const name = `e2e-scope-${Date.now().toString(36)}`;
    const create = admin.getByRole("form", { name: "Create a group" });
    await create.getByLabel("Name").fill(name);
    await create.getByLabel("Datasets").fill("shop.orders");
    await create.getByRole("button", { name: "Create group" }).click();
    const picker = admin.getByRole("group", { name: `Groups of ${member.email}` });
    await picker.getByRole("checkbox", { name }).click();
    await expect.poll(() => picker.getByRole("checkbox", { name }).isChecked()).toBe(true);
    // The admin page's requests cached the groups before this one on their instances: the member's
    // page asks once every instance has it.
    await accessSeenEverywhere();
    let deleted = false;
    const deleteGroup = async () => {
      await deleteInPage(admin, name);
      await admin.locator(`li[data-group="${name}"]`).waitFor({ state: "detached" });
      deleted = true;
    };
    try {
      const page = await newPage();
      await signInAsMember(page, member.email);
      const listed = page.getByRole("region", { name: "Datasets you can ask about" });
      await listed.getByText("shop").waitFor();
      await expect.poll(() => listed.innerText()).toMatch(/shop\s*—\s*orders$/);
      await screenshot(page, "access-09-scoped-datasets");
      await deleteGroup();
      // No group left: every member sees every dataset again — at once on the instance that deleted
      // it, within QUARRY_ACCESS_CACHE_SECONDS (2 here) on the others, so the page is reloaded until then.
      await expect
        .poll(async () => {
          await page.reload();
          const region = page.getByRole("region", { name: "Datasets you can ask about" });
          await region.getByText("shop").waitFor();
          return region.innerText();
        })
        .toMatch(/customers/);
    } finally {
      if (!deleted) await deleteGroup();
      // Later files' members are in no group: every instance lets go of this one first.
      await accessSeenEverywhere();
    }
  });
});

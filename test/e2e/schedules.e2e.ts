/**
 * Scheduled questions (#33) in Chromium against the whole local stack (functions, tasks, auth,
 * hosting and Firestore emulators with the rules, DuckDB sample data, the Gemini stand-in): an
 * answer is scheduled from its "Schedule…" dialog with a change alert (a bad time zone first, whose
 * 400 shows in the API's words), run from the schedules page, made to fire (the previous run's
 * figure is raised, as the integration test does, since the sample data does not change), and the
 * bell shows the fired alert live from Firestore; choosing it marks it read and opens the
 * schedule's conversation with the scheduled answers. Then pause on the schedules page and resume
 * in the admin section. Every wait is on a condition on the page or in Firestore.
 */
import { randomUUID } from "node:crypto";
import { Firestore } from "@google-cloud/firestore";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, reportFailure, screenshot } from "../support/browser";
import { stackEnv } from "../support/stack-env";

/** A scheduled run goes through the task queue and the model stand-in's answer: allow for a slow machine. */
const RUN_TIMEOUT = 90_000;

let browser: Browser;
let page: Page;
let db: Firestore;

beforeAll(async () => {
  const stack = stackEnv();
  db = new Firestore({
    projectId: stack.env.GCLOUD_PROJECT,
    host: stack.env.FIRESTORE_EMULATOR_HOST,
    ssl: false,
  });
  browser = await launchBrowser();
  page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  page.on("dialog", (d) => void d.accept());
  page.on("pageerror", (e) => console.log(`[page error] ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error") console.log(`[page error] ${m.text()}`);
  });
  await page.goto(stack.urls.web!);
  await page.getByRole("button", { name: "Continue as test user" }).click();
  await page.getByRole("button", { name: "+ New conversation" }).waitFor();
});

afterEach((ctx) => reportFailure(page, ctx.task));

afterAll(async () => {
  await browser?.close();
  await db?.terminate();
});

const bell = () => page.getByRole("button", { name: /^Notifications, \d+ unread$/ });

describe("scheduled questions in the page", () => {
  it("schedules an answer with a change alert; the fired alert rings the bell and opens the scheduled answer", async () => {
    const marker = randomUUID().slice(0, 8);
    const name = `Orders e2e ${marker}`;
    await page.getByRole("button", { name: "+ New conversation" }).click();
    const box = page.getByLabel("Your question");
    await box.fill(`How many orders were placed? ${marker}`);
    await box.press("Enter");
    await page.waitForURL(/\/t\/[0-9a-f-]{36}$/);
    const threadId = page.url().split("/t/")[1];
    const turn = page.locator('article.turn[data-status="done"]').last();
    await turn.getByRole("button", { name: "Schedule…" }).waitFor({ timeout: 60_000 });
    const sql = (await turn.locator(".sql code").textContent())!;
    expect(sql).toMatch(/AS orders FROM shop\.orders/);

    // The dialog: a name, a change alert on the answer's column, first an unknown time zone.
    const posted: unknown[] = [];
    page.on("request", (r) => {
      if (r.method() === "POST" && r.url().endsWith("/schedules")) posted.push(r.postDataJSON());
    });
    await turn.getByRole("button", { name: "Schedule…" }).click();
    const dialog = page.getByRole("dialog", { name: "Schedule this question" });
    expect(await dialog.getByLabel("Name").inputValue()).toBe(`How many orders were placed? ${marker}`);
    expect(await dialog.getByLabel("Time zone").inputValue()).toBe(
      await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone),
    );
    await dialog.getByLabel("Name").fill(name);
    await dialog.getByLabel("Tell me").selectOption("change");
    expect(await dialog.getByLabel("Column").inputValue()).toBe("orders");
    await dialog.getByLabel("Direction").selectOption("down");
    await dialog.getByLabel("By at least (%)").fill("20");
    await dialog.getByLabel("Time zone").fill("Mars/Olympus");
    await dialog.getByRole("button", { name: "Save schedule" }).click();
    await dialog
      .getByRole("alert")
      .getByText(/timeZone is not a known IANA time zone/)
      .waitFor();
    await screenshot(page, "schedules-01-refused");
    await dialog.getByLabel("Time zone").fill("Europe/Berlin");
    await dialog.getByRole("button", { name: "Save schedule" }).click();
    await dialog
      .getByRole("status")
      .getByText(/Saved: /)
      .waitFor();
    expect(posted.at(-1)).toEqual({
      threadId,
      question: `How many orders were placed? ${marker}`,
      sql,
      schedule: { kind: "daily", time: "09:00", timeZone: "Europe/Berlin" },
      alert: { kind: "change", column: "orders", direction: "down", percent: 20 },
      name,
    });
    await dialog.getByRole("button", { name: "Open my schedules" }).click();

    const saved = (await db.collection("schedules").where("name", "==", name).get()).docs;
    expect(saved).toHaveLength(1);
    const id = saved[0].id;
    const { owner, scheduleThreadId } = saved[0].data() as { owner: string; scheduleThreadId: string };
    const mine = db.collection("notifications").where("uid", "==", owner);
    await Promise.all((await mine.get()).docs.map((d) => d.ref.delete()));
    await expect.poll(async () => bell().getAttribute("aria-label")).toBe("Notifications, 0 unread");

    // The schedules page: run it now; the first run has nothing to compare.
    const item = page.getByRole("listitem", { name });
    await item.getByText("Every day at 09:00 (Europe/Berlin)").waitFor();
    await item.getByText(/alert when orders falls by 20 % or more/).waitFor();
    await item.getByRole("button", { name: "Run now" }).click();
    await item.getByText(/first run, nothing to compare/).waitFor({ timeout: RUN_TIMEOUT });
    const figure = (await db.collection("schedules").doc(id).get()).get("lastRun.figure") as number;
    expect(figure).toBeGreaterThan(0);
    expect((await mine.get()).size).toBe(0);

    // The previous run saw a quarter more orders: this run is 20 % down, and the alert fires.
    await db
      .collection("schedules")
      .doc(id)
      .update({ "lastRun.figure": figure * 1.25 });
    await item.getByRole("button", { name: "Run now" }).click();
    await page
      .getByRole("button", { name: "Notifications, 1 unread", exact: true })
      .waitFor({ timeout: RUN_TIMEOUT });
    await item.getByText(/alert fired/).waitFor({ timeout: RUN_TIMEOUT });
    await bell().click();
    const note = page.getByRole("region", { name: "Notifications" }).getByRole("button", {
      name: new RegExp(`${name}: orders fell 20\\.0 %`),
    });
    await note.waitFor();
    await screenshot(page, "schedules-02-bell");
    await note.click();

    // Read (the rules let the page change `read` only), and the schedule's conversation is open.
    await expect.poll(async () => bell().getAttribute("aria-label")).toBe("Notifications, 0 unread");
    await page.waitForURL(new RegExp(`/t/${scheduleThreadId}$`));
    const notes = (await mine.get()).docs.map((d) => d.data());
    expect(notes).toEqual([expect.objectContaining({ scheduleId: id, fired: true, read: true })]);
    const turns = page.locator('article.turn[data-status="done"]');
    await expect.poll(() => turns.count()).toBe(2);
    expect(await turns.last().locator(".sql code").textContent()).toBe(sql);
    expect(((await turns.last().locator(".answer").textContent()) ?? "").length).toBeGreaterThan(0);
    await screenshot(page, "schedules-03-scheduled-answer");

    // Change it on the schedules page: the dialog opens with what is saved; the new time is kept.
    await page.getByRole("link", { name: "Schedules" }).click();
    await item.getByRole("button", { name: "Change" }).click();
    const change = page.getByRole("dialog", { name: `Change the schedule “${name}”` });
    expect(await change.getByLabel("Time", { exact: true }).inputValue()).toBe("09:00");
    expect(await change.getByLabel("Tell me").inputValue()).toBe("change");
    expect(await change.getByLabel("By at least (%)").inputValue()).toBe("20");
    await change.getByLabel("Time", { exact: true }).fill("07:30");
    await change.getByRole("button", { name: "Save changes" }).click();
    await change.getByText(/Saved: .* — every day at 07:30 \(Europe\/Berlin\)/i).waitFor();
    await change.getByRole("button", { name: "Close" }).click();
    await item.getByText("Every day at 07:30 (Europe/Berlin)").waitFor();
    await item.getByText(/alert when orders falls by 20 % or more/).waitFor();
    const changed = (await db.collection("schedules").doc(id).get()).data()!;
    expect(changed).toMatchObject({ cron: "30 7 * * *", alert: { kind: "change", percent: 20 } });

    // Pause on the schedules page.
    await item.getByRole("button", { name: "Pause" }).click();
    await item.getByText("Paused: paused by its owner").waitFor();
    expect((await db.collection("schedules").doc(id).get()).get("paused")).toBe(true);
    await item.getByRole("button", { name: "Run now" }).and(page.locator(":disabled")).waitFor();

    // The admin section lists it with its owner and resumes it.
    await page.getByRole("link", { name: "Back to chat" }).click();
    await page.getByRole("link", { name: "Admin" }).click();
    const row = page.locator(`tr[data-schedule-id="${id}"]`);
    await row.getByText("test-user@quarry.local").waitFor();
    await row.getByText(/Paused: paused by its owner/).waitFor();
    await row.getByRole("button", { name: `Resume ${name}` }).click();
    await row.getByText("Active").waitFor();
    expect((await db.collection("schedules").doc(id).get()).get("paused")).toBe(false);
    await screenshot(page, "schedules-04-admin");
  });
});

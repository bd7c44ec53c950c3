/**
 * Linking a Slack account through the page, in Chromium against the whole local stack: a Slack user
 * Quarry does not know asks in a DM and gets a private connect link (from the Slack Web API
 * stand-in's record); opened in the page, the person signs in with the Auth emulator's form, the
 * page links the account (`POST /chat/link`) and says so; the same Slack user's next question then
 * runs as that member — answered in the Slack thread, in a conversation the member owns. Then an
 * admin binds a room to a group in the admin section's Chat rooms, and unbinds it.
 */
import { randomUUID } from "node:crypto";
import { Firestore } from "@google-cloud/firestore";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { signUp, type TestUser } from "../support/auth-emulator";
import { launchBrowser, reportFailure } from "../support/browser";
import { E2E_MEMBER_DOMAIN } from "../support/e2e-access";
import { stackEnv } from "../support/stack-env";
import { accessSeenEverywhere } from "../support/seed-access";
import { messageEvent, slackCalls, slackPost } from "../support/slack";

const PASSWORD = "e2e-slack-link-pw";
let browser: Browser;
let web: string;
let api: string;
let db: Firestore;
let member: TestUser;
let page: Page | undefined;

beforeAll(async () => {
  const stack = stackEnv();
  web = stack.urls.web!;
  api = stack.urls.api!;
  db = new Firestore({
    projectId: stack.env.GCLOUD_PROJECT,
    host: stack.env.FIRESTORE_EMULATOR_HOST,
    ssl: false,
  });
  member = await signUp(stack.urls.auth!, `slack-${randomUUID().slice(0, 8)}@${E2E_MEMBER_DOMAIN}`, {
    password: PASSWORD,
  });
  browser = await launchBrowser();
});
afterEach(async (ctx) => {
  await reportFailure(page, ctx.task);
});
afterAll(async () => {
  await browser?.close();
  await db?.terminate();
});

const ask = (user: string, text: string) => {
  const event = messageEvent(user, text);
  return slackPost(api, "/slack/events", JSON.stringify(event)).then((res) => ({ res, event }));
};

describe("linking a Slack account in the page", () => {
  it("the connect link opens the page, signing in links the account, and the next question runs as the member", async () => {
    const user = `U${randomUUID().replace(/-/g, "").slice(0, 10).toUpperCase()}`;
    const first = await ask(user, "How many orders were placed in total?");
    expect(first.res.status).toBe(200);
    let link = "";
    await expect
      .poll(
        async () =>
          (link =
            /https?:\/\/\S+\/connect\?token=[^\s)]+/.exec(
              String(
                (await slackCalls("chat.postEphemeral")).find((c) => c.args.user === user)?.args.text ?? "",
              ),
            )?.[0] ?? ""),
        { timeout: 30_000 },
      )
      .not.toBe("");
    // Nothing ran for a person Quarry did not know.
    expect(
      (await slackCalls("chat.postMessage")).filter((c) => c.args.thread_ts === first.event.event.ts),
    ).toEqual([]);

    // The link's path on the local page (QUARRY_APP_URL is the deployed page's address).
    const url = new URL(link);
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    await page.goto(`${web}${url.pathname}${url.search}`);
    await page.getByLabel("Email", { exact: true }).fill(member.email);
    await page.getByLabel("Password", { exact: true }).fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await expect
      .poll(async () => page!.getByRole("status").allInnerTexts(), { timeout: 30_000 })
      .toContain("Your Slack account is connected to Quarry. Go back to Slack and ask your question again.");

    const second = await ask(user, "How many orders were placed in total?");
    expect(second.res.status).toBe(200);
    let answer: Record<string, unknown> | undefined;
    await expect
      .poll(
        async () =>
          (answer = (await slackCalls("chat.postMessage")).find(
            (c) => c.args.thread_ts === second.event.event.ts,
          )?.args),
        { timeout: 60_000 },
      )
      .toBeDefined();
    const threadId = /\/t\/([\w-]+)"/.exec(JSON.stringify(answer!.blocks))?.[1];
    expect((await db.collection("threads").doc(threadId!).get()).get("owner")).toBe(member.uid);
  });
});

describe("chat rooms in the admin section", () => {
  const GROUP = `e2e-rooms-${randomUUID().slice(0, 6)}`;
  const ROOM = "slack:T0QUARRY:C0E2EROOM";
  const bound = () => db.collection("chatRooms").where("room", "==", ROOM).get();

  it("an admin binds a room to a group, sees it listed, and unbinds it; a bad room name is refused in words", async () => {
    const now = new Date().toISOString();
    await db
      .collection("groups")
      .doc(GROUP)
      .set({ name: GROUP, datasets: ["shop"], createdBy: "e2e", createdAt: now, updatedAt: now });
    try {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      page = await context.newPage();
      page.on("dialog", (d) => void d.accept());
      await page.goto(web);
      await page.getByRole("button", { name: "Continue as test user" }).click();
      await page.getByRole("link", { name: "Admin" }).click();
      const section = page.locator("section#chat-rooms");
      await section.getByText("No room is bound to a group.").waitFor();
      const form = section.getByRole("form", { name: "Bind a room to a group" });
      await form.getByLabel("Room").fill("#general");
      await form.getByLabel("Group").selectOption(GROUP);
      await form.getByRole("button", { name: "Bind room" }).click();
      await form
        .getByRole("alert")
        .getByText(/A room is written/)
        .waitFor();
      expect((await bound()).empty).toBe(true);

      await form.getByLabel("Room").fill(ROOM);
      await form.getByRole("button", { name: "Bind room" }).click();
      const row = section.locator(`li[data-room="${ROOM}"]`);
      await row.getByText(GROUP).waitFor();
      expect((await bound()).docs.map((d) => d.get("group"))).toEqual([GROUP]);

      await row.getByRole("button", { name: `Unbind ${ROOM}` }).click();
      await section.getByText("No room is bound to a group.").waitFor();
      expect((await bound()).empty).toBe(true);
    } finally {
      await db.collection("groups").doc(GROUP).delete();
      for (const d of (await bound()).docs) await d.ref.delete();
      // Later files' members are in no group: every instance lets go of this one first.
      await accessSeenEverywhere();
    }
  });
});

/**
 * The Slack app through the functions emulator: requests signed as Slack signs them reach
 * `/slack/events` and `/slack/interactions`; the real `@slack/web-api` client in the function posts
 * to the loopback Web API stand-in (test/support/slack-standin.ts), whose record the tests read.
 * Linking goes through `POST /chat/link` with an Auth-emulator ID token (the page's call).
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { Firestore } from "@google-cloud/firestore";
import { signUp, type TestUser } from "../../support/auth-emulator";
import { call, sdkClient } from "../../support/api-client";
import { stackEnv } from "../../support/stack-env";
import { accessSeenEverywhere, seedAccess, until } from "../../support/seed-access";
import { SLACK_TEST, type SlackCall } from "../../support/slack-standin";
import { interactionBody, messageEvent, slackCalls, slackPost, slackUpload } from "../../support/slack";
import { darkPixels, readPng } from "../../support/png";
import { PLANTED, RETAIL_SALES_CSV } from "../../support/investigation-script";

let api: string;
let authUrl: string;
let db: Firestore;
let alice: TestUser;
let seq = 0;
const slackUser = () => `U${Date.now().toString(36).toUpperCase()}${seq++}`;
const eventDoc = (eventId: string) =>
  db.collection("chatEvents").doc(createHash("sha256").update(`slack:${eventId}`).digest("hex").slice(0, 40));

beforeAll(async () => {
  const stack = stackEnv();
  api = stack.urls.api!;
  authUrl = stack.urls.auth!;
  alice = await signUp(authUrl);
  db = new Firestore({
    projectId: stack.env.GCLOUD_PROJECT,
    host: stack.env.FIRESTORE_EMULATOR_HOST,
    ssl: false,
  });
});
afterAll(async () => {
  await db?.terminate();
});

const send = (body: unknown) => slackPost(api, "/slack/events", JSON.stringify(body));
/** An interaction (a button, a modal's submission) as Slack posts it. */
const interact = (payload: Record<string, unknown>) =>
  slackPost(api, "/slack/interactions", interactionBody(payload), {
    contentType: "application/x-www-form-urlencoded",
  });

/** Calls of `method` in the Slack thread `threadTs`. */
async function inThread(method: string, threadTs: string): Promise<SlackCall[]> {
  return (await slackCalls(method)).filter((c) => c.args.thread_ts === threadTs);
}

/** Waits for the connect link the unlinked `user` was sent privately, and returns its token. */
async function connectToken(user: string, threadTs: string): Promise<string> {
  // `until`, not expect.poll: this also runs in hooks.
  const text = await until(
    async () =>
      String(
        (await inThread("chat.postEphemeral", threadTs)).find((c) => c.args.user === user)?.args.text ?? "",
      ),
    (t) => /[?&]token=/.test(t),
  );
  return decodeURIComponent(/[?&]token=([^&\s)]+)/.exec(text)![1]);
}

/** A Slack user linked to `member` through a connect link, as the page links them. */
async function linked(member: TestUser): Promise<string> {
  const user = slackUser();
  const first = messageEvent(user, "hello");
  expect((await send(first)).status).toBe(200);
  const token = await connectToken(user, first.event.ts);
  const res = await call(api, "/chat/link", { method: "POST", token: member.idToken, body: { token } });
  expect(res.status).toBe(201);
  return user;
}

type Block = { type: string; [k: string]: unknown };
const blocksOf = (c: SlackCall) => (c.args.blocks ?? []) as Block[];
const openUrl = (c: SlackCall) =>
  blocksOf(c)
    .filter((b) => b.type === "actions")
    .flatMap((b) => b.elements as { action_id: string; url?: string; value?: string }[])
    .find((e) => e.action_id === "quarry_open")?.url;
const buttonValue = (c: SlackCall, action: string) =>
  blocksOf(c)
    .filter((b) => b.type === "actions")
    .flatMap((b) => b.elements as { action_id: string; value?: string }[])
    .find((e) => e.action_id === action)?.value;

/** Waits for `count` answers posted in the thread. */
async function answers(threadTs: string, count: number): Promise<SlackCall[]> {
  await expect
    .poll(async () => (await inThread("chat.postMessage", threadTs)).length, { timeout: 45_000 })
    .toBe(count);
  return inThread("chat.postMessage", threadTs);
}

describe("Slack: requests are Slack's", () => {
  it("answers the URL check; refuses a bad signature or a 6-minute-old timestamp with nothing stored", async () => {
    const check = await send({ type: "url_verification", challenge: "c-123", token: "x" });
    expect(check.status).toBe(200);
    expect(JSON.parse(check.text)).toEqual({ challenge: "c-123" });

    const forged = messageEvent(slackUser(), "How many orders were placed in total?");
    const bad = await slackPost(api, "/slack/events", JSON.stringify(forged), { secret: "not-the-secret" });
    expect(bad.status).toBe(401);
    expect(JSON.parse(bad.text)).toMatchObject({ error: "unauthorized:chat_signature" });
    const old = messageEvent(slackUser(), "How many orders were placed in total?");
    const stale = await slackPost(api, "/slack/events", JSON.stringify(old), {
      atSeconds: Math.floor(Date.now() / 1000) - 6 * 60,
    });
    expect(stale.status).toBe(401);
    expect(JSON.parse(stale.text).message).toMatch(/five minutes/);
    expect((await eventDoc(forged.event_id).get()).exists).toBe(false);
    expect((await eventDoc(old.event_id).get()).exists).toBe(false);
    const unsigned = await fetch(`${api}/slack/events`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(forged),
    });
    expect(unsigned.status).toBe(401);
  });

  it("ignores bots (Quarry itself too) and edits: acknowledged, nothing stored", async () => {
    const bot = messageEvent(slackUser(), "beep", { extra: { bot_id: "B1" } });
    const self = messageEvent(SLACK_TEST.botUser, "my own answer");
    const edit = messageEvent(slackUser(), "edited", { extra: { subtype: "message_changed" } });
    for (const e of [bot, self, edit]) {
      expect((await send(e)).status).toBe(200);
      expect((await eventDoc(e.event_id).get()).exists).toBe(false);
    }
  });
});

describe("Slack: linking", () => {
  it("an unlinked person gets a private connect link and nothing runs; a bad link is refused in words", async () => {
    const user = slackUser();
    const asked = messageEvent(user, "How many orders were placed in total?");
    expect((await send(asked)).status).toBe(200);
    const token = await connectToken(user, asked.event.ts);
    expect(await inThread("chat.postMessage", asked.event.ts)).toEqual([]);
    expect(await inThread("assistant.threads.setStatus", asked.event.ts)).toEqual([]);
    const tampered = `${token.slice(0, -2)}xx`;
    const refused = await call(api, "/chat/link", {
      method: "POST",
      token: alice.idToken,
      body: { token: tampered },
    });
    expect(refused.status).toBe(400);
    expect(refused.json).toMatchObject({ error: "bad_request:chat_link" });
    const anonymous = await call(api, "/chat/link", { method: "POST", body: { token } });
    expect(anonymous.status).toBe(401);
  });
});

describe("Slack: a member asks in a DM", () => {
  let user: string;
  beforeAll(async () => {
    user = await linked(alice);
  });

  it("answers once in the thread as the member (table, rows line, link to the same thread), audited as slack", async () => {
    const asked = messageEvent(user, "How many orders were placed in total?");
    expect((await send(asked)).status).toBe(200);
    // Slack's retry of the same event (same event_id), while the first is being answered.
    expect((await send(asked)).status).toBe(200);
    const [answer] = await answers(asked.event.ts, 1);
    const blocks = blocksOf(answer);
    expect(blocks[0]).toMatchObject({ type: "markdown" });
    const table = blocks.find((b) => b.type === "table") as unknown as { rows: { text: string }[][] };
    expect(table.rows[0].map((c) => c.text)).toEqual(["orders"]);
    expect(Number(table.rows[1][0].text)).toBeGreaterThan(0);
    expect(JSON.stringify(blocks)).toContain("1 row");
    const threadId = /\/t\/([\w-]+)$/.exec(openUrl(answer) ?? "")?.[1];
    expect(threadId).toBeTruthy();
    const thread = await db.collection("threads").doc(threadId!).get();
    expect(thread.get("owner")).toBe(alice.uid);
    // Progress was shown and cleared.
    const statuses = (await inThread("assistant.threads.setStatus", asked.event.ts)).map(
      (c) => c.args.status,
    );
    expect(statuses[0]).toMatch(/thinking/);
    await expect
      .poll(async () => (await inThread("assistant.threads.setStatus", asked.event.ts)).at(-1)?.args.status)
      .toBe("");
    const audit = await db.collection("audit").where("uid", "==", alice.uid).get();
    expect(audit.docs.map((d) => d.data())).toContainEqual(
      expect.objectContaining({ email: alice.email, via: expect.objectContaining({ channel: "slack" }) }),
    );

    // A follow-up in the thread continues the same Quarry thread (and the retry made no second answer).
    const followUp = messageEvent(user, "And how many customers are there?", { threadTs: asked.event.ts });
    expect((await send(followUp)).status).toBe(200);
    const both = await answers(asked.event.ts, 2);
    expect(openUrl(both[1])).toBe(openUrl(answer));
    // The page shows the same conversation: both questions, once each.
    const state = await call(api, `/threads/${threadId}/state`, { token: alice.idToken });
    const messages = (state.json.values as { messages: { type: string; content: unknown }[] }).messages;
    expect(messages.filter((m) => m.type === "human").map((m) => m.content)).toEqual([
      "How many orders were placed in total?",
      "And how many customers are there?",
    ]);
  });

  it("the chart comes as a PNG in the thread, drawn with its labels", async () => {
    const asked = messageEvent(user, "Orders by channel [sql:to-verify]");
    await send(asked);
    await answers(asked.event.ts, 1);
    let completed: SlackCall | undefined;
    await expect
      .poll(async () => (completed = (await inThread("files.completeUploadExternal", asked.event.ts))[0]), {
        timeout: 30_000,
      })
      .toBeDefined();
    expect(completed!.args.channel_id).toBe(asked.event.channel);
    const [file] = completed!.args.files as { id: string; title: string }[];
    const png = readPng(await slackUpload(file.id));
    expect(png.width).toBe(1280);
    expect(png.height).toBeGreaterThan(400);
    // Bars and labels: far from a blank image.
    expect(darkPixels(png)).toBeGreaterThan(2000);
  });

  it("Show SQL answers privately; 👍 and 👎 with a reason are stored as feedback for that turn", async () => {
    const asked = messageEvent(user, "How many orders were placed in total?");
    await send(asked);
    const [answer] = await answers(asked.event.ts, 1);
    const id = buttonValue(answer, "quarry_sql")!;
    expect(id).toBeTruthy();
    const click = (action: string) =>
      interact({
        type: "block_actions",
        team: { id: SLACK_TEST.team },
        user: { id: user },
        trigger_id: `trig-${action}`,
        channel: { id: asked.event.channel },
        container: { channel_id: asked.event.channel, message_ts: answer.ts, thread_ts: asked.event.ts },
        actions: [{ action_id: action, value: id }],
      });
    expect((await click("quarry_sql")).status).toBe(200);
    await expect
      .poll(async () =>
        JSON.stringify((await inThread("chat.postEphemeral", asked.event.ts)).map((c) => c.args.blocks)),
      )
      .toContain("SELECT COUNT(*) AS orders FROM shop.orders");

    expect((await click("quarry_up")).status).toBe(200);
    const feedback = () =>
      db.collection("feedback").where("uid", "==", alice.uid).where("via", "==", "slack").get();
    await expect.poll(async () => (await feedback()).docs.map((d) => d.get("score"))).toContain(1);

    expect((await click("quarry_down")).status).toBe(200);
    const opened = (await slackCalls("views.open")).find((c) => c.args.trigger_id === "trig-quarry_down");
    expect(opened?.args.view).toMatchObject({ callback_id: "quarry_downvote", private_metadata: id });
    const submitted = await interact({
      type: "view_submission",
      team: { id: SLACK_TEST.team },
      user: { id: user },
      view: {
        callback_id: "quarry_downvote",
        private_metadata: id,
        state: {
          values: { reason: { reason: { type: "plain_text_input", value: "Counts cancelled orders" } } },
        },
      },
    });
    expect(submitted.status).toBe(200);
    const threadId = /\/t\/([\w-]+)$/.exec(openUrl(answer)!)![1];
    const docs = (await feedback()).docs.map((d) => d.data()).filter((d) => d.threadId === threadId);
    expect(docs).toEqual([
      expect.objectContaining({
        score: -1,
        note: "Counts cancelled orders",
        sql: "SELECT COUNT(*) AS orders FROM shop.orders",
      }),
    ]);
  });
});

describe("Slack: shared rooms and removed members", () => {
  it("in a channel the answer is private to the asker until they Share to thread", async () => {
    const user = await linked(alice);
    const asked = messageEvent(user, "<@U0QUARRYBOT> How many orders were placed in total?", {
      type: "app_mention",
      channel: "C0SHARED",
      channelType: "channel",
    });
    expect((await send(asked)).status).toBe(200);
    let privateAnswer: SlackCall | undefined;
    await expect
      .poll(
        async () => {
          privateAnswer = (await inThread("chat.postEphemeral", asked.event.ts)).find((c) =>
            buttonValue(c, "quarry_share"),
          );
          return privateAnswer?.args.user;
        },
        { timeout: 45_000 },
      )
      .toBe(user);
    expect(await inThread("chat.postMessage", asked.event.ts)).toEqual([]);
    const share = (who: string) =>
      interact({
        type: "block_actions",
        team: { id: SLACK_TEST.team },
        user: { id: who },
        channel: { id: "C0SHARED" },
        container: { channel_id: "C0SHARED", thread_ts: asked.event.ts },
        actions: [{ action_id: "quarry_share", value: buttonValue(privateAnswer!, "quarry_share") }],
      });
    // Someone else (linked to another member) cannot share it.
    const other = await linked(await signUp(authUrl));
    expect((await share(other)).status).toBe(200);
    await expect
      .poll(async () =>
        (await inThread("chat.postEphemeral", asked.event.ts)).some(
          (c) => c.args.user === other && /Only the person who asked/.test(String(c.args.text)),
        ),
      )
      .toBe(true);
    expect(await inThread("chat.postMessage", asked.event.ts)).toEqual([]);
    expect((await share(user)).status).toBe(200);
    const [shared] = await answers(asked.event.ts, 1);
    expect(blocksOf(shared).some((b) => b.type === "table")).toBe(true);
  });

  it("a removed member is refused in the thread, in words", async () => {
    const outsider = await signUp(authUrl, `slack-outsider${Date.now()}@elsewhere.test`);
    const now = new Date().toISOString();
    await db.collection("members").doc(outsider.email).set({
      email: outsider.email,
      role: "member",
      groups: [],
      addedBy: "test",
      addedAt: now,
      updatedAt: now,
    });
    await expect
      .poll(async () => (await call(api, "/me", { token: outsider.idToken })).status, { timeout: 10_000 })
      .toBe(200);
    const user = await linked(outsider);
    await db.collection("members").doc(outsider.email).delete();
    const asked = messageEvent(user, "How many orders were placed in total?");
    expect((await send(asked)).status).toBe(200);
    const [refusal] = await answers(asked.event.ts, 1);
    expect(String(refusal.args.text)).toMatch(/cannot answer you/);
    expect(refusal.args.blocks).toBeUndefined();
  });
});

describe("Slack: a room an admin bound to a group", () => {
  const GROUP = "chat-room-shop";
  const ROOM = `slack:${SLACK_TEST.team}:C0BOUND`;
  const me = async (u: TestUser) =>
    (await call(api, "/me", { token: u.idToken })).json as { role?: string; scope?: { datasets: string[] } };

  it("answers there under the group's scope, for everyone; only admins bind rooms", async () => {
    const user = await linked(alice);
    const boss = await signUp(authUrl);
    await seedAccess(db, { [GROUP]: ["shop"] }, [[boss, "admin", []]]);
    try {
      await until(
        () => me(boss),
        (m) => m.role === "admin",
      );
      const bind = (who: TestUser) =>
        call(api, `/admin/chat/rooms/${encodeURIComponent(ROOM)}`, {
          method: "PUT",
          token: who.idToken,
          body: { group: GROUP },
        });
      expect((await bind(alice)).status).toBe(403);
      const bound = await bind(boss);
      expect(bound.status).toBe(200);
      expect(bound.json).toEqual({ room: ROOM, group: GROUP });

      const mention = (text: string) =>
        messageEvent(user, `<@${SLACK_TEST.botUser}> ${text}`, {
          type: "app_mention",
          channel: "C0BOUND",
          channelType: "channel",
        });
      const orders = mention("How many orders were placed in total?");
      await send(orders);
      const [answer] = await answers(orders.event.ts, 1);
      expect(blocksOf(answer).some((b) => b.type === "table")).toBe(true);
      // finance is outside the group's datasets: refused in this room (with no groups, Alice alone may read it).
      const pay = mention("How does pay vary across levels? [sql:salaries]");
      await send(pay);
      const [refused] = await answers(pay.event.ts, 1);
      expect(blocksOf(refused).some((b) => b.type === "table")).toBe(false);
      const audit = await db.collection("audit").where("uid", "==", alice.uid).get();
      const salaries = audit.docs
        .map((d) => d.data())
        .filter((e) => String(e.sql).includes("finance.salaries"));
      expect(salaries.map((e) => e.outcome)).toContain("refused");
    } finally {
      await call(api, `/admin/chat/rooms/${encodeURIComponent(ROOM)}`, {
        method: "DELETE",
        token: boss.idToken,
      });
      await db.collection("groups").doc(GROUP).delete();
      await db.collection("members").doc(boss.email).delete();
      // Later files run with no groups: every instance's cache lets go of them, and one shows it.
      await accessSeenEverywhere();
      await until(
        () => me(alice),
        (m) => !!m.scope?.datasets.includes("finance"),
      );
    }
  });

  it("a member scoped away from a dataset gets it as not found in a DM, exactly as in the page, audited as slack", async () => {
    const carol = await signUp(authUrl);
    await seedAccess(db, { [GROUP]: ["shop"] }, [[carol, "member", [GROUP]]]);
    try {
      await until(
        () => me(carol),
        (m) => JSON.stringify(m.scope?.datasets) === JSON.stringify(["shop"]),
      );
      const user = await linked(carol);
      const question = "Average pay by level [sql:salaries]";
      const asked = messageEvent(user, question);
      await send(asked);
      const [answer] = await answers(asked.event.ts, 1);
      expect(blocksOf(answer).some((b) => b.type === "table")).toBe(false);
      const viaSlack = /\/t\/([\w-]+)$/.exec(openUrl(answer)!)![1];
      // The same question asked in the page, by the same member.
      const page = sdkClient(api, carol);
      const thread = await page.threads.create();
      await page.runs.wait(thread.thread_id, "quarry", {
        input: { messages: [{ type: "human", content: question }] },
      });
      type Tool = { type: string; content: string; artifact: { category?: string } };
      const toolOf = async (threadId: string) =>
        ((await page.threads.getState(threadId)).values as { messages: Tool[] }).messages.find(
          (m) => m.type === "tool",
        )!;
      const [inSlack, inPage] = [await toolOf(viaSlack), await toolOf(thread.thread_id)];
      expect(inSlack.artifact.category).toBe("not_found");
      expect(inSlack.content).toBe(inPage.content);
      expect(inSlack.content).not.toMatch(/grade|scope/i);
      const audit = await db.collection("audit").where("uid", "==", carol.uid).get();
      const refused = audit.docs.map((d) => d.data()).filter((e) => e.outcome === "refused");
      // One refusal through Slack, one through the page (which names no channel).
      expect(refused.map((e) => String(e.via?.channel ?? "page")).sort()).toEqual(["page", "slack"]);
    } finally {
      await db.collection("groups").doc(GROUP).delete();
      await db.collection("members").doc(carol.email).delete();
      await accessSeenEverywhere();
      await until(
        () => me(alice),
        (m) => !!m.scope?.datasets.includes("finance"),
      );
    }
  });
});

describe("Slack: a schedule that posts to a channel", () => {
  const CHANNEL = "C0SCHEDULE";
  const ROOM = `slack:${SLACK_TEST.team}:${CHANNEL}`;
  const members = (list: string[]) =>
    fetch(`${process.env.QUARRY_TEST_SLACK_URL}/_test/channels/${CHANNEL}`, {
      method: "PUT",
      body: JSON.stringify({ members: list }),
    });
  const BY_CHANNEL = "SELECT channel, COUNT(*) AS orders FROM shop.orders GROUP BY channel ORDER BY channel";
  const create = async (who: TestUser, room: string, sql = "SELECT COUNT(*) AS orders FROM shop.orders") =>
    call(api, "/schedules", {
      method: "POST",
      token: who.idToken,
      body: {
        threadId: (await sdkClient(api, who).threads.create()).thread_id,
        question: "How many orders were placed in total?",
        sql,
        schedule: { kind: "daily", time: "09:00", timeZone: "Europe/Berlin" },
        room,
        name: `Orders ${Date.now()}`,
      },
    });

  it("is refused until its owner is linked and in the channel with the app", async () => {
    const dave = await signUp(authUrl);
    const unlinked = await create(dave, ROOM);
    expect(unlinked.status).toBe(400);
    expect(unlinked.json.message).toMatch(/link your Slack account first/);
    const user = await linked(dave);
    const appAbsent = await create(dave, `slack:${SLACK_TEST.team}:C0NOAPP`);
    expect(appAbsent.status).toBe(400);
    expect(appAbsent.json.message).toMatch(/invite it there/);
    await members(["U0SOMEONE", "U0ELSE", SLACK_TEST.botUser]);
    const notIn = await create(dave, ROOM);
    expect(notIn.json.message).toMatch(/you are not in that channel/);
    // Three pages of members (the stand-in answers two at a time): the owner is on the last.
    await members(["U0SOMEONE", "U0ELSE", SLACK_TEST.botUser, "U0MORE", user]);
    expect((await create(dave, ROOM)).status).toBe(201);
    const badRoom = await create(dave, "slack:#general");
    expect(badRoom.status).toBe(400);
    expect(badRoom.json.message).toMatch(/room must be a chat room's name/);
  });

  it("posts each answer as the app; the owner's follow-up in that thread continues the schedule's conversation", async () => {
    const user = await linked(alice);
    await members([SLACK_TEST.botUser, user]);
    const made = await create(alice, ROOM, BY_CHANNEL);
    expect(made.status).toBe(201);
    const schedule = made.json as { id: string; name: string; scheduleThreadId: string; room: string };
    expect(schedule.room).toBe(ROOM);
    const ran = await call(api, `/schedules/${schedule.id}/run`, { method: "POST", token: alice.idToken });
    expect(ran.status).toBe(202);
    let posted: SlackCall | undefined;
    await expect
      .poll(
        async () =>
          (posted = (await slackCalls("chat.postMessage")).find(
            (c) => c.args.channel === CHANNEL && String(c.args.text).includes(schedule.name),
          )),
        { timeout: 60_000 },
      )
      .toBeDefined();
    expect(posted!.args.thread_ts).toBeUndefined();
    const table = blocksOf(posted!).find((b) => b.type === "table") as unknown as {
      rows: { text: string }[][];
    };
    expect(table.rows[0].map((c) => c.text)).toEqual(["channel", "orders"]);
    expect(table.rows.length).toBe(4);
    expect(openUrl(posted!)).toMatch(new RegExp(`/t/${schedule.scheduleThreadId}$`));
    // Its chart, in the thread the answer starts.
    let completed: SlackCall | undefined;
    await expect
      .poll(async () => (completed = (await inThread("files.completeUploadExternal", posted!.ts!))[0]), {
        timeout: 30_000,
      })
      .toBeDefined();
    const [file] = completed!.args.files as { id: string }[];
    expect(readPng(await slackUpload(file.id)).width).toBe(1280);
    const sched = await db.collection("schedules").doc(schedule.id).get();
    expect(sched.get("deliveryError")).toBeNull();

    const followUp = messageEvent(user, `<@${SLACK_TEST.botUser}> And how many customers are there?`, {
      type: "app_mention",
      channel: CHANNEL,
      channelType: "channel",
      threadTs: posted!.ts,
    });
    expect((await send(followUp)).status).toBe(200);
    // In a room the answer is the asker's (with Share to thread), on the schedule's conversation.
    let reply: SlackCall | undefined;
    await expect
      .poll(
        async () =>
          (reply = (await inThread("chat.postEphemeral", posted!.ts!)).find((c) =>
            buttonValue(c, "quarry_share"),
          )),
        { timeout: 45_000 },
      )
      .toBeDefined();
    expect(openUrl(reply!)).toBe(openUrl(posted!));
    const state = await sdkClient(api, alice).threads.getState(schedule.scheduleThreadId);
    const asked = (state.values as { messages: { type: string; content: unknown }[] }).messages
      .filter((m) => m.type === "human")
      .map((m) => m.content);
    expect(asked).toEqual(["How many orders were placed in total?", "And how many customers are there?"]);
  });

  it("an owner who left the channel gets no post, and the schedule says why", async () => {
    const erin = await signUp(authUrl);
    const user = await linked(erin);
    await members([SLACK_TEST.botUser, user]);
    const made = await create(erin, ROOM);
    expect(made.status).toBe(201);
    const { id, name } = made.json as { id: string; name: string };
    await members([SLACK_TEST.botUser]);
    await call(api, `/schedules/${id}/run`, { method: "POST", token: erin.idToken });
    await expect
      .poll(async () => (await db.collection("schedules").doc(id).get()).get("deliveryError")?.message, {
        timeout: 60_000,
      })
      .toMatch(/you are not in that channel/);
    expect((await slackCalls("chat.postMessage")).filter((c) => String(c.args.text).includes(name))).toEqual(
      [],
    );
  });
});

describe("Slack: an investigation", () => {
  it("`investigate:` shows the plan in the thread; `run` there runs it and the report names the planted cause", async () => {
    const user = await linked(alice);
    const first = messageEvent(user, "How many orders were placed in total?");
    await send(first);
    const [answer] = await answers(first.event.ts, 1);
    const threadId = /\/t\/([\w-]+)$/.exec(openUrl(answer)!)![1];
    // The planted-cause table, uploaded to that conversation as the page uploads a file.
    const upload = await call(api, `/threads/${threadId}/files?name=sales.csv`, {
      method: "POST",
      token: alice.idToken,
      rawBody: readFileSync(RETAIL_SALES_CSV),
      headers: { "content-type": "text/csv" },
    });
    expect(upload.status, upload.text).toBe(201);

    const asked = messageEvent(
      user,
      "investigate: Why did revenue fall in March 2025? [investigation:good]",
      {
        threadTs: first.event.ts,
      },
    );
    await send(asked);
    const [, plan] = await answers(first.event.ts, 2);
    expect(String(plan.args.text)).toMatch(/^Investigation plan: /);
    expect(String(plan.args.text)).toMatch(/\n2\. .+\(contribution\)/);
    expect((await call(api, `/threads/${threadId}`, { token: alice.idToken })).json.status).toBe(
      "interrupted",
    );

    await send(messageEvent(user, "run", { threadTs: first.event.ts }));
    const [, , report] = await answers(first.event.ts, 3);
    const text = JSON.stringify(blocksOf(report));
    expect(text).toContain(`driven by ${PLANTED.channel} in ${PLANTED.region}`);
    const state = await sdkClient(api, alice).threads.getState(threadId);
    const last = (
      state.values as { messages: { response_metadata?: Record<string, unknown> }[] }
    ).messages.at(-1);
    expect(last?.response_metadata?.quarry_investigation).toBeDefined();
    const audit = await db
      .collection("audit")
      .where("threadId", "==", threadId)
      .where("kind", "==", "query")
      .get();
    expect(audit.docs.filter((d) => d.get("via")?.channel === "slack").length).toBeGreaterThanOrEqual(4);
  });
});

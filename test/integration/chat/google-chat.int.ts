/**
 * The Google Chat app through the functions emulator: events carry bearer tokens minted by the
 * stand-in as Chat mints them (test/support/google-chat-standin.ts), verified by the function with
 * google-auth-library against the stand-in's certificates; the real `@googleapis/chat` client in the
 * function posts the answer to the stand-in's Chat API, whose record the tests read.
 */
import { randomUUID } from "node:crypto";
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { signUp, type TestUser } from "../../support/auth-emulator";
import { Firestore } from "@google-cloud/firestore";
import { call, sdkClient } from "../../support/api-client";
import { stackEnv } from "../../support/stack-env";
import { darkPixels, readPng } from "../../support/png";
import {
  GOOGLE_CHAT_AUDIENCE,
  GOOGLE_CHAT_URL_ENV,
  type ChatApiCall,
} from "../../support/google-chat-standin";

let api: string;
let authUrl: string;
let alice: TestUser;
let standin: string;
let db: Firestore;

beforeAll(async () => {
  const stack = stackEnv();
  api = stack.urls.api!;
  authUrl = stack.urls.auth!;
  standin = stack.env[GOOGLE_CHAT_URL_ENV];
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

/** A token as Chat signs it for the app (project-number audience), or with the claims/key given. */
async function chatToken(claims: Record<string, unknown> = {}, key?: "rogue"): Promise<string> {
  const res = await fetch(`${standin}/_test/sign${key ? `?key=${key}` : ""}`, {
    method: "POST",
    body: JSON.stringify({ iss: "chat@system.gserviceaccount.com", aud: GOOGLE_CHAT_AUDIENCE, ...claims }),
  });
  return ((await res.json()) as { token: string }).token;
}

async function posted(): Promise<ChatApiCall[]> {
  return (await (await fetch(`${standin}/_test/messages`)).json()) as ChatApiCall[];
}

const space = `spaces/S${randomUUID().slice(0, 8)}`;

function messageEvent(
  user: string,
  text: string,
  opts: { thread?: string; space?: string; spaceType?: string; email?: string } = {},
) {
  const where = opts.space ?? space;
  return {
    type: "MESSAGE",
    eventTime: new Date().toISOString(),
    space: { name: where, spaceType: opts.spaceType ?? "DIRECT_MESSAGE" },
    user: { name: user, type: "HUMAN", displayName: "Test", ...(opts.email ? { email: opts.email } : {}) },
    message: {
      name: `${where}/messages/${randomUUID()}`,
      text,
      thread: { name: opts.thread ?? `${where}/threads/${randomUUID()}` },
    },
  };
}

async function send(body: unknown, token?: string) {
  const res = await fetch(`${api}/chat/events`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
}

/** A Chat user linked to `member` through the connect link the app answered with. */
async function linked(member: TestUser): Promise<string> {
  const user = `users/${randomUUID().slice(0, 12)}`;
  const first = await send(messageEvent(user, "hello"), await chatToken());
  expect(first.status).toBe(200);
  const token = decodeURIComponent(/[?&]token=([^&\s)]+)/.exec(String(first.json.text))![1]);
  const res = await call(api, "/chat/link", { method: "POST", token: member.idToken, body: { token } });
  expect(res.status).toBe(201);
  return user;
}

describe("Google Chat: requests are Chat's", () => {
  it("refuses no token, a key Chat did not publish, the wrong audience or issuer with 401", async () => {
    const event = messageEvent("users/x", "How many orders?");
    expect((await send(event)).status).toBe(401);
    expect((await send(event, await chatToken({}, "rogue"))).status).toBe(401);
    const wrongAudience = await send(event, await chatToken({ aud: "999" }));
    expect(wrongAudience.status).toBe(401);
    expect(wrongAudience.json).toMatchObject({ error: "unauthorized:chat_signature" });
    expect((await send(event, await chatToken({ iss: "someone@example.com" }))).status).toBe(401);
    expect((await send(event, await chatToken({ exp: Math.floor(Date.now() / 1000) - 600 }))).status).toBe(
      401,
    );
    expect(await posted()).toEqual([]);
  });
});

describe("Google Chat: a member asks", () => {
  let user: string;
  beforeAll(async () => {
    user = await linked(alice);
  });

  it("an unlinked person gets the connect link at once and nothing runs", async () => {
    const res = await send(messageEvent("users/stranger", "How many orders?"), await chatToken());
    expect(res.status).toBe(200);
    expect(String(res.json.text)).toMatch(/Connect your Quarry account.*\/connect\?token=/);
    expect(await posted()).toEqual([]);
  });

  it("a placeholder at once, then the answer as a card in the same thread; a retry makes no second answer", async () => {
    const event = messageEvent(user, "How many orders were placed in total?");
    const token = await chatToken();
    const first = await send(event, token);
    expect(first.status).toBe(200);
    expect(first.json).toEqual({ text: "Working on it…" });
    expect((await send(event, token)).json).toEqual({});
    const thread = event.message.thread.name;
    const inThread = async () =>
      (await posted()).filter((c) => (c.body.thread as { name?: string } | undefined)?.name === thread);
    await expect.poll(async () => (await inThread()).length, { timeout: 45_000 }).toBe(1);
    const [answer] = await inThread();
    expect(answer.parent).toBe(space);
    expect(answer.query.messageReplyOption).toBe("REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD");
    expect(answer.authorization).toMatch(/^Bearer /);
    expect(answer.body.privateMessageViewer).toBeUndefined();
    const card = JSON.stringify(answer.body.cardsV2);
    expect(card).toMatch(/orders: \d+/);
    expect(card).toContain("1 row");
    expect(card).toContain("SELECT COUNT(*) AS orders FROM shop.orders");
    const threadId = /\/t\/([\w-]+)"/.exec(card)?.[1];
    expect(threadId).toBeTruthy();

    // A follow-up in the Chat thread continues the same Quarry thread.
    await send(messageEvent(user, "And how many customers are there?", { thread }), await chatToken());
    await expect.poll(async () => (await inThread()).length, { timeout: 45_000 }).toBe(2);
    expect(JSON.stringify((await inThread())[1].body.cardsV2)).toContain(`/t/${threadId}`);
    const state = await call(api, `/threads/${threadId}/state`, { token: alice.idToken });
    const humans = (state.json.values as { messages: { type: string }[] }).messages.filter(
      (m) => m.type === "human",
    );
    expect(humans).toHaveLength(2);
  });

  it("the card shows the chart from a signed, expiring URL Quarry serves", async () => {
    const event = messageEvent(user, "Orders by channel [sql:to-verify]");
    await send(event, await chatToken());
    const thread = event.message.thread.name;
    let card = "";
    await expect
      .poll(
        async () =>
          (card = JSON.stringify(
            (await posted()).find((c) => (c.body.thread as { name?: string }).name === thread)?.body
              .cardsV2 ?? "",
          )),
        { timeout: 45_000 },
      )
      .toContain("imageUrl");
    const url = JSON.parse(/"imageUrl":("[^"]+")/.exec(card)![1]) as string;
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/png");
    const png = readPng(Buffer.from(await res.arrayBuffer()));
    expect(png.width).toBe(1280);
    expect(darkPixels(png)).toBeGreaterThan(2000);
    const tampered = new URL(url);
    tampered.searchParams.set("exp", String(Number(tampered.searchParams.get("exp")) + 1));
    expect((await fetch(tampered)).status).toBe(401);
    const forged = new URL(url);
    forged.searchParams.set("sig", "x".repeat(43));
    expect((await fetch(forged)).status).toBe(401);
  });

  it("👍 and 👎 (a dialog asking why) are stored as feedback on that turn; an unlinked clicker is told to connect", async () => {
    const event = messageEvent(user, "How many orders were placed in total?");
    await send(event, await chatToken());
    let card = "";
    await expect
      .poll(
        async () =>
          (card = JSON.stringify(
            (await posted()).find((c) => c.thread === event.message.thread.name)?.body.cardsV2 ?? "",
          )),
        { timeout: 45_000 },
      )
      .toContain("quarry_down");
    const answerId = /"key":"answer","value":"(\w+)"/.exec(card)![1];
    const threadId = /\/t\/([\w-]+)"/.exec(card)![1];
    const click = async (who: string, fn: string, extra: Record<string, unknown> = {}) =>
      (
        await send(
          {
            type: "CARD_CLICKED",
            space: { name: space, spaceType: "DIRECT_MESSAGE" },
            user: { name: who, type: "HUMAN" },
            common: { invokedFunction: fn, parameters: { answer: answerId } },
            ...extra,
          },
          await chatToken(),
        )
      ).json;
    const feedback = async () =>
      (await db.collection("feedback").where("threadId", "==", threadId).get()).docs.map((d) => d.data());
    expect(await click(user, "quarry_up")).toMatchObject({ text: "Thanks: your 👍 is recorded." });
    expect(await feedback()).toEqual([
      expect.objectContaining({ uid: alice.uid, score: 1, via: "google_chat" }),
    ]);
    const dialog = await click(user, "quarry_down", {
      isDialogEvent: true,
      dialogEventType: "REQUEST_DIALOG",
    });
    expect(JSON.stringify(dialog)).toContain('"function":"quarry_down_reason"');
    const sent = await click(user, "quarry_down_reason", {
      isDialogEvent: true,
      dialogEventType: "SUBMIT_DIALOG",
      common: {
        invokedFunction: "quarry_down_reason",
        parameters: { answer: answerId },
        formInputs: { reason: { stringInputs: { value: ["Counts cancelled orders"] } } },
      },
    });
    expect(sent).toMatchObject({ actionResponse: { dialogAction: { actionStatus: { statusCode: "OK" } } } });
    // Each person's vote replaces their earlier one.
    expect(await feedback()).toEqual([
      expect.objectContaining({ uid: alice.uid, score: -1, note: "Counts cancelled orders" }),
    ]);
    expect(String((await click("users/stranger", "quarry_up")).text)).toMatch(/Connect your Quarry account/);
    expect(
      (
        await click(user, "quarry_up", {
          common: { invokedFunction: "quarry_up", parameters: { answer: "x" } },
        })
      ).text,
    ).toMatch(/expired/);
  });

  it("in a space the answer is private to the asker", async () => {
    const room = `spaces/R${randomUUID().slice(0, 8)}`;
    const event = messageEvent(user, "How many orders were placed in total?", {
      space: room,
      spaceType: "SPACE",
    });
    const placeholder = await send(event, await chatToken());
    expect(placeholder.json).toMatchObject({ privateMessageViewer: { name: user } });
    await expect
      .poll(async () => (await posted()).filter((c) => c.parent === room).length, { timeout: 45_000 })
      .toBe(1);
    const [answer] = (await posted()).filter((c) => c.parent === room);
    expect(answer.body.privateMessageViewer).toEqual({ name: user });
  });
});

describe("Google Chat: linking by Workspace email (QUARRY_GOOGLE_CHAT_TRUSTED_DOMAINS)", () => {
  const linkOf = async (user: string) =>
    (await db.collection("chatLinks").where("user", "==", `google_chat:${user}`).get()).docs.map((d) =>
      d.data(),
    );

  it("a trusted domain's verified account is linked by the email Chat gives, and the question runs", async () => {
    const bea = await signUp(authUrl);
    const user = `users/${randomUUID().slice(0, 12)}`;
    const event = messageEvent(user, "How many orders were placed in total?", {
      email: bea.email.toUpperCase(),
    });
    const res = await send(event, await chatToken());
    expect(res.json).toEqual({ text: "Working on it…" });
    expect(await linkOf(user)).toEqual([
      expect.objectContaining({
        uid: bea.uid,
        email: bea.email,
        trusted: "workspace_email",
        platform: "google_chat",
      }),
    ]);
    await expect
      .poll(async () => (await posted()).filter((c) => c.thread === event.message.thread.name).length, {
        timeout: 45_000,
      })
      .toBe(1);
    const audit = await db.collection("audit").where("uid", "==", bea.uid).get();
    expect(audit.docs.map((d) => d.data())).toContainEqual(
      expect.objectContaining({ email: bea.email, via: expect.objectContaining({ channel: "google_chat" }) }),
    );
  });

  it("an unverified account, another domain, or no account gets the connect link and nothing is linked", async () => {
    const unverified = await signUp(authUrl, undefined, { verified: false });
    const outside = await signUp(authUrl, `chat${Date.now()}@elsewhere.test`);
    for (const email of [unverified.email, outside.email, `nobody${Date.now()}@example.com`]) {
      const user = `users/${randomUUID().slice(0, 12)}`;
      const res = await send(messageEvent(user, "How many orders?", { email }), await chatToken());
      expect(String(res.json.text), email).toMatch(/Connect your Quarry account/);
      expect(await linkOf(user)).toEqual([]);
    }
  });
});

describe("Google Chat: a schedule that posts to a space", () => {
  const SPACE = `spaces/SCHED${randomUUID().slice(0, 6)}`;
  const ROOM = `google_chat:${SPACE}`;
  const members = (list: string[]) =>
    fetch(`${standin}/_test/${SPACE}/members`, { method: "PUT", body: JSON.stringify({ members: list }) });

  it("posts each answer as the app in a new thread; the owner's follow-up there continues its conversation", async () => {
    const user = await linked(alice);
    const create = async () =>
      call(api, "/schedules", {
        method: "POST",
        token: alice.idToken,
        body: {
          threadId: (await sdkClient(api, alice).threads.create()).thread_id,
          question: "How many orders were placed in total?",
          sql: "SELECT COUNT(*) AS orders FROM shop.orders",
          schedule: { kind: "daily", time: "09:00", timeZone: "Europe/Berlin" },
          room: ROOM,
          name: `Orders ${Date.now()}`,
        },
      });
    const notIn = await create();
    expect(notIn.status).toBe(400);
    expect(notIn.json.message).toMatch(/not in that space/);
    await members([user]);
    const made = await create();
    expect(made.status).toBe(201);
    const { id, name, scheduleThreadId } = made.json as {
      id: string;
      name: string;
      scheduleThreadId: string;
    };
    expect((await call(api, `/schedules/${id}/run`, { method: "POST", token: alice.idToken })).status).toBe(
      202,
    );
    let post: ChatApiCall | undefined;
    await expect
      .poll(async () => (post = (await posted()).find((c) => c.parent === SPACE)), { timeout: 60_000 })
      .toBeDefined();
    expect(post!.body.thread).toBeUndefined();
    expect(post!.body.privateMessageViewer).toBeUndefined();
    const card = JSON.stringify(post!.body.cardsV2);
    expect(card).toContain(name);
    expect(card).toMatch(/orders: \d+/);
    expect(card).toContain(`/t/${scheduleThreadId}`);

    const followUp = messageEvent(user, "And how many customers are there?", {
      space: SPACE,
      spaceType: "SPACE",
      thread: post!.thread,
    });
    expect((await send(followUp, await chatToken())).status).toBe(200);
    await expect
      .poll(async () => (await posted()).filter((c) => c.thread === post!.thread).length, { timeout: 45_000 })
      .toBe(2);
    const state = await sdkClient(api, alice).threads.getState(scheduleThreadId);
    const asked = (state.values as { messages: { type: string; content: unknown }[] }).messages
      .filter((m) => m.type === "human")
      .map((m) => m.content);
    expect(asked).toEqual(["How many orders were placed in total?", "And how many customers are there?"]);
  });
});

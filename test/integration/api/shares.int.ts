/**
 * Sharing a conversation through the functions emulator, on the stack with `shop` and
 * `finance.salaries`: Olga (groups shop and finance) asks "How many orders?" — the scripted planner
 * lists the tables first, so her conversation's schema look-up names finance.salaries — and shares
 * it. Ann (shop only) opens the link and sees the questions, the query with its rows and the answer
 * with what its message carries, but nothing of finance (schema look-ups are not shared); Bob
 * (finance only) gets exactly the not-found of a missing conversation, as does a revoked or unknown
 * link. Someone else's thread cannot be shared, listed or revoked, and nothing is stored then. Ann
 * continues the conversation in a thread of her own, where a new question runs as her: in her
 * scope, so finance is refused there although Olga could query it. The audit log holds the opens.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Firestore } from "@google-cloud/firestore";
import { signUp, type TestUser } from "../../support/auth-emulator";
import { call, sdkClient } from "../../support/api-client";
import { FINANCE_WORDS } from "../../support/finance";
import { accessSeenEverywhere, seedAccess, until } from "../../support/seed-access";
import { stackEnv } from "../../support/stack-env";

let api: string;
let admin: TestUser;
let olga: TestUser;
let ann: TestUser;
let bob: TestUser;
let nobody: TestUser;
let db: Firestore;
const GROUPS = { "share-shop": ["shop"], "share-finance": ["finance"] };

type Message = {
  type: string;
  id?: string;
  name?: string;
  content?: unknown;
  tool_calls?: { name: string }[];
  artifact?: { kind?: string; category?: string; result?: { rows?: unknown[] } };
  response_metadata?: Record<string, unknown>;
};
type Link = { id: string; url: string; createdAt: string };

const me = async (u: TestUser) =>
  (await call(api, "/me", { token: u.idToken })).json as { scope: { datasets: string[] } };
const financeIn = (text: string) => FINANCE_WORDS.filter((w) => text.toLowerCase().includes(w.toLowerCase()));

/** Asks `question` in `threadId` (a new thread when absent) and waits for the answer; the thread's messages. */
async function ask(u: TestUser, question: string, threadId?: string) {
  const client = sdkClient(api, u);
  const id = threadId ?? (await client.threads.create()).thread_id;
  await client.runs.wait(id, "quarry", { input: { messages: [{ type: "human", content: question }] } });
  const state = await client.threads.getState(id);
  return { threadId: id, messages: (state.values as { messages: Message[] }).messages };
}

const share = (u: TestUser, threadId: string) =>
  call(api, `/threads/${threadId}/shares`, { method: "POST", token: u.idToken, body: {} });
const links = (u: TestUser, threadId: string) =>
  call(api, `/threads/${threadId}/shares`, { token: u.idToken });
const revoke = (u: TestUser, threadId: string, shareId: string) =>
  call(api, `/threads/${threadId}/shares/${shareId}`, { method: "DELETE", token: u.idToken });
const open = (u: TestUser, shareId: string) => call(api, `/shares/${shareId}`, { token: u.idToken });
const carryOn = (u: TestUser, shareId: string) =>
  call(api, `/shares/${shareId}/continue`, { method: "POST", token: u.idToken, body: {} });

/** A share id that was never made (the right shape, so only its absence answers). */
const unknownId = () => randomUUID().replace(/-/g, "").slice(0, 24);

/** What a missing conversation answers, with `id` in place of the missing one's. */
async function missingAs(u: TestUser, id: string) {
  const other = randomUUID();
  const res = await call(api, `/threads/${other}`, { token: u.idToken });
  expect(res.status).toBe(404);
  return JSON.parse(res.text.split(other).join(id)) as Record<string, unknown>;
}

/** The share documents of a thread (the test reads Firestore as the function wrote it). */
const storedShares = async (threadId: string) =>
  (await db.collection("shares").where("threadId", "==", threadId).get()).docs.map((d) => ({
    id: d.id,
    ...(d.data() as { revokedAt: unknown }),
  }));

let asked: { threadId: string; messages: Message[] };
let link: Link;

beforeAll(async () => {
  const stack = stackEnv();
  api = stack.urls.api!;
  [admin, olga, ann, bob, nobody] = await Promise.all([1, 2, 3, 4, 5].map(() => signUp(stack.urls.auth!)));
  db = new Firestore({
    projectId: stack.env.GCLOUD_PROJECT,
    host: stack.env.FIRESTORE_EMULATOR_HOST,
    ssl: false,
  });
  await seedAccess(db, GROUPS, [
    [admin, "admin", []],
    [olga, "member", ["share-shop", "share-finance"]],
    [ann, "member", ["share-shop"]],
    [bob, "member", ["share-finance"]],
  ]);
  // The function reads groups through a short cache: wait until it sees them.
  await until(
    () => me(ann),
    (m) => m.scope.datasets.join() === "shop",
  );
  await until(
    () => me(olga),
    (m) => m.scope.datasets.join() === "finance,shop",
  );
  asked = await ask(olga, "How many orders?");
  const made = await share(olga, asked.threadId);
  expect(made.status, made.text).toBe(201);
  link = made.json as unknown as Link;
}, 180_000);

afterAll(async () => {
  if (db) {
    for (const name of Object.keys(GROUPS)) await db.collection("groups").doc(name).delete();
    // Later files run with no groups: every instance's cache lets go of them, and one shows it.
    await accessSeenEverywhere();
    await until(
      () => me(nobody),
      (m) => m.scope.datasets.includes("shop") && m.scope.datasets.includes("finance"),
    );
    await db.terminate();
  }
}, 60_000);

describe("sharing a conversation", () => {
  it("makes an unguessable link the owner lists", async () => {
    expect(link.id).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect(link.url).toBe(`/s/${link.id}`);
    expect(Date.parse(link.createdAt)).toBeGreaterThan(Date.now() - 10 * 60_000);
    // Olga's conversation did look at finance (the planner listed the tables): what sharing must not show.
    expect(financeIn(JSON.stringify(asked.messages))).toContain("salaries");
    const listed = await links(olga, asked.threadId);
    expect(listed.status).toBe(200);
    expect((listed.json as { shares: Link[] }).shares).toContainEqual(link);
  });

  it("shows an in-scope member the conversation read-only: questions, the query's rows, the answer as stored", async () => {
    const res = await open(ann, link.id);
    expect(res.status, res.text).toBe(200);
    const body = res.json as { id: string; title: string; sharedBy: string; messages: Message[] };
    expect(body).toMatchObject({ id: link.id, title: "How many orders?", sharedBy: olga.email });
    expect(body.messages.find((m) => m.type === "human")?.content).toBe("How many orders?");
    const result = body.messages.find((m) => m.type === "tool");
    expect(result).toMatchObject({ name: "bq_query", artifact: { kind: "query" } });
    expect(result?.artifact?.result?.rows?.length).toBe(1);
    // The answer message as the thread stores it, with whatever it carries (response_metadata).
    const answer = asked.messages.at(-1)!;
    expect(answer.type).toBe("ai");
    expect(body.messages.at(-1)).toEqual(answer);
    // The schema look-ups (Olga's list_tables, naming finance.salaries) are not shared.
    expect(body.messages.some((m) => m.type === "tool" && m.name !== "bq_query")).toBe(false);
    expect(financeIn(res.text)).toEqual([]);
  });

  it("answers a member whose scope does not cover it exactly like a missing conversation", async () => {
    const refused = await open(bob, link.id);
    expect(refused.status).toBe(404);
    expect(refused.json).toEqual({ error: "not_found:thread", message: `Thread ${link.id} not found.` });
    expect(refused.json).toEqual(await missingAs(bob, link.id));
    // An unknown link answers the same.
    const unknown = unknownId();
    const never = await open(bob, unknown);
    expect(never.status).toBe(404);
    expect(JSON.parse(never.text.split(unknown).join(link.id))).toEqual(refused.json);
    // And continuing it too, with no thread made for Bob.
    const before = (await call(api, "/threads/search", { method: "POST", token: bob.idToken, body: {} }))
      .json;
    const carried = await carryOn(bob, link.id);
    expect(carried.status).toBe(404);
    expect(carried.json).toEqual(refused.json);
    const after = (await call(api, "/threads/search", { method: "POST", token: bob.idToken, body: {} })).json;
    expect(after).toEqual(before);
  });

  it("refuses sharing, listing and revoking someone else's thread as a missing one, storing nothing", async () => {
    const before = await storedShares(asked.threadId);
    const missing = await missingAs(ann, asked.threadId);
    for (const res of [
      await share(ann, asked.threadId),
      await links(ann, asked.threadId),
      await revoke(ann, asked.threadId, link.id),
    ]) {
      expect(res.status).toBe(404);
      expect(res.json).toEqual(missing);
    }
    expect(await storedShares(asked.threadId)).toEqual(before);
    // Olga's link still opens: Ann's revoke did nothing.
    expect((await open(ann, link.id)).status).toBe(200);
    // Revoking a link that is not one on her own thread: not found, nothing changed.
    const wrong = await revoke(olga, asked.threadId, unknownId());
    expect(wrong.status).toBe(404);
    expect(wrong.json).toMatchObject({ error: "not_found:thread" });
    expect(await storedShares(asked.threadId)).toEqual(before);
  });

  it("continues it in the viewer's own thread, where a new question runs as the viewer, in their scope", async () => {
    const shared = (await open(ann, link.id)).json as { messages: Message[] };
    const res = await carryOn(ann, link.id);
    expect(res.status, res.text).toBe(201);
    const { thread_id: mine } = res.json as { thread_id: string };
    expect(mine).not.toBe(asked.threadId);
    const thread = await call(api, `/threads/${mine}`, { token: ann.idToken });
    expect(thread.json).toMatchObject({
      status: "idle",
      metadata: { title: "How many orders?" },
      values: { messages: [{ type: "human", content: "How many orders?" }, { type: "ai" }] },
    });
    expect(thread.json).toMatchObject({ metadata: { owner: ann.uid } });
    // Ann's: in her list, not Olga's.
    const annsList = (await call(api, "/threads/search", { method: "POST", token: ann.idToken, body: {} }))
      .json as unknown as { thread_id: string }[];
    expect(annsList.map((t) => t.thread_id)).toContain(mine);
    expect((await call(api, `/threads/${mine}`, { token: olga.idToken })).status).toBe(404);
    // The copy holds the shared messages.
    const copied = await sdkClient(api, ann).threads.getState(mine);
    expect((copied.values as { messages: Message[] }).messages).toEqual(shared.messages);

    // A new question there runs, as Ann.
    const next = await ask(ann, "How many orders?", mine);
    expect(next.messages.filter((m) => m.type === "human")).toHaveLength(2);
    const newResults = next.messages.slice(shared.messages.length).filter((m) => m.name === "bq_query");
    expect(newResults.at(-1)?.artifact?.kind).toBe("query");
    // In her scope: finance, which Olga could query, is not found for Ann there.
    const refused = await ask(ann, "Average pay by level [sql:salaries]", mine);
    const salaries = refused.messages.filter((m) => m.name === "bq_query").at(-1);
    expect(salaries?.artifact?.category).toBe("not_found");
  });

  it("writes opening, refusing and continuing to the audit log", async () => {
    type Entry = { kind: string; action?: string; shareId?: string; outcome?: string; email: string };
    const entries = async (u: TestUser) =>
      (
        (
          await call(api, `/admin/audit?person=${encodeURIComponent(u.email)}&limit=100`, {
            token: admin.idToken,
          })
        ).json as { entries: Entry[] }
      ).entries.filter((e) => e.kind === "share" && e.shareId === link.id);
    const anns = await entries(ann);
    expect(anns).toContainEqual(
      expect.objectContaining({ action: "share.open", outcome: "ok", email: ann.email }),
    );
    expect(anns).toContainEqual(expect.objectContaining({ action: "share.continue", outcome: "ok" }));
    const bobs = await entries(bob);
    expect(bobs).toContainEqual(expect.objectContaining({ action: "share.open", outcome: "refused" }));
    const olgas = await entries(olga);
    expect(olgas).toContainEqual(expect.objectContaining({ action: "share.create", outcome: "ok" }));
  });

  it("stops working once revoked: the same not-found, and gone from the owner's list", async () => {
    const other = (await share(olga, asked.threadId)).json as unknown as Link;
    expect(other.id).not.toBe(link.id);
    const gone = await revoke(olga, asked.threadId, link.id);
    expect(gone.status).toBe(204);
    const res = await open(ann, link.id);
    expect(res.status).toBe(404);
    expect(res.json).toEqual(await missingAs(ann, link.id));
    expect((await carryOn(ann, link.id)).status).toBe(404);
    // Revoked once: a second revoke is not found, and the other link still opens.
    expect((await revoke(olga, asked.threadId, link.id)).status).toBe(404);
    const listed = (await links(olga, asked.threadId)).json as { shares: Link[] };
    expect(listed.shares.map((l) => l.id)).toEqual([other.id]);
    expect((await open(ann, other.id)).status).toBe(200);
  });
});

/**
 * firestore.rules for the access control data (members, groups, usage, the questions window, the
 * audit log, approved verified queries): server-only. A signed-in person — even one whose token says
 * they are QUARRY_ADMINS' admin, with a verified address — cannot get, list, create, update or
 * delete any of it; neither can a signed-out visitor.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import {
  assertFails,
  assertSucceeds,
  initializeTestEnvironment,
  type RulesTestEnvironment,
} from "@firebase/rules-unit-testing";
import firebase from "firebase/compat/app";
import { afterAll, beforeAll, beforeEach, describe, it, expect } from "vitest";
import { stackEnv } from "../support/stack-env";

type Db = firebase.firestore.Firestore;

let env: RulesTestEnvironment;
const ALICE = "alice";
const ADMIN = "admin-uid";
const ADMIN_EMAIL = "admin@quarry-admins.test";

/** Each collection with a document the server wrote, its id and a field a client would like to change. */
const COLLECTIONS = [
  ["members", "alice@example.com", { email: "alice@example.com", role: "member" }],
  ["groups", "finance", { name: "finance", datasets: ["finance"] }],
  ["usage", `${ALICE}_2026-11-02`, { uid: ALICE, day: "2026-11-02", questions: 3, bytes: 10, tokens: 5 }],
  ["quota_rate", ALICE, { uid: ALICE, recent: [1, 2, 3] }],
  ["audit", "a1", { kind: "query", uid: ALICE, email: "alice@example.com", sql: "SELECT 1", outcome: "ok" }],
  ["approved_queries", "p1", { id: "p1", question: "How many orders?", sql: "SELECT 1", approvedBy: "x" }],
  // A person's view: set through the API, not even the person writes it directly.
  ["preferences", ALICE, { view: "business", updatedAt: "2026-11-29T00:00:00Z" }],
  // Imported dbt and LookML layers: an admin reviews them through the API, never from the client.
  ["context_imports", "dbt-jaffle_shop", { source: "dbt", project: "jaffle_shop", activeVersion: "v1" }],
  // Share links: the id is the secret, and opening one is the API's scope check — never a client read.
  ["shares", "AbCdEfGhIjKlMnOpQrStUvWx", { owner: ALICE, threadId: "t1", revokedAt: null }],
  // Personal access tokens (MCP), keyed by a public id and owned by uid: not even the owner may read the hash.
  ["access_tokens", "0123456789abcdef", { uid: ALICE, name: "laptop", hash: "ab".repeat(32) }],
  // Which run an MCP call started (for its cancellation).
  ["mcp_calls", "c1", { uid: ALICE, threadId: "t1", runId: "r1" }],
  ["oauth", "Session:s1", { model: "Session", uid: "s1", payload: { accountId: ALICE } }],
  // User identity mode's BigQuery grant, keyed by the owner's own uid: not even they may read it.
  [
    "bigquery_credentials",
    ALICE,
    { email: "alice@example.com", refreshToken: { data: "x", iv: "y", tag: "z" } },
  ],
] as const;

beforeAll(async () => {
  const { env: stack } = stackEnv();
  const [host, port] = stack.FIRESTORE_EMULATOR_HOST!.split(":");
  env = await initializeTestEnvironment({
    projectId: "demo-quarry-rules-access",
    firestore: {
      host,
      port: Number(port),
      rules: readFileSync(path.resolve(__dirname, "../../firestore.rules"), "utf8"),
    },
  });
});

afterAll(async () => {
  await env?.cleanup();
});

beforeEach(async () => {
  await env.clearFirestore();
  // Seeded as the function writes them (the Admin SDK bypasses rules).
  await env.withSecurityRulesDisabled(async (ctx) => {
    const db = ctx.firestore();
    for (const [collection, id, data] of COLLECTIONS) await db.doc(`${collection}/${id}`).set(data);
  });
});

const people = {
  "a signed-in member": () =>
    env.authenticatedContext(ALICE, { email: "alice@example.com", email_verified: true }),
  "a signed-in admin": () => env.authenticatedContext(ADMIN, { email: ADMIN_EMAIL, email_verified: true }),
  "a signed-out visitor": () => env.unauthenticatedContext(),
};

describe.each(Object.entries(people))("access control data is closed to %s", (_who, context) => {
  const db = () => context().firestore() as unknown as Db;

  it.each(COLLECTIONS)("%s: no get, no list, no query on its own records", async (collection, id) => {
    await assertFails(db().doc(`${collection}/${id}`).get());
    await assertFails(db().collection(collection).get());
    await assertFails(db().collection(collection).where("uid", "==", ALICE).get());
    await assertFails(db().collection(collection).where("email", "==", "alice@example.com").get());
  });

  it.each(COLLECTIONS)("%s: no create, update, overwrite or delete", async (collection, id, data) => {
    await assertFails(db().doc(`${collection}/new`).set(data));
    await assertFails(db().collection(collection).add(data));
    await assertFails(db().doc(`${collection}/${id}`).update({ forged: true }));
    await assertFails(
      db()
        .doc(`${collection}/${id}`)
        .set({ ...data, forged: true }),
    );
    await assertFails(db().doc(`${collection}/${id}`).delete());
  });

  it("cannot read the share links of its own threads (a link's id is its secret)", async () => {
    await assertFails(db().collection("shares").where("owner", "==", ALICE).get());
    await assertFails(db().collection("shares").where("threadId", "==", "t1").get());
  });

  it("cannot make itself an admin on the members list", async () => {
    await assertFails(db().doc(`members/${ADMIN_EMAIL}`).set({ email: ADMIN_EMAIL, role: "admin" }));
    await assertFails(db().doc("members/alice@example.com").update({ role: "admin" }));
  });

  it("cannot put itself in a group or widen a group's datasets", async () => {
    await assertFails(
      db()
        .doc("members/alice@example.com")
        .update({ groups: ["finance"] }),
    );
    await assertFails(
      db()
        .doc("groups/finance")
        .update({ datasets: ["finance", "hr"] }),
    );
    await assertFails(
      db()
        .doc("groups/everything")
        .set({ name: "everything", datasets: ["shop"] }),
    );
  });
});

describe("the seeded documents are there (a refusal above is the rules', not a missing document)", () => {
  it.each(COLLECTIONS)("%s", async (collection, id) => {
    await env.withSecurityRulesDisabled(async (ctx) => {
      const snap = await assertSucceeds(ctx.firestore().doc(`${collection}/${id}`).get());
      expect(snap.exists).toBe(true);
    });
  });
});

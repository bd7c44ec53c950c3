/**
 * firestore.rules for scheduled questions: a person reads only their own notifications (one by id
 * or a query filtered on their uid) and may change only `read` on them; schedules are the
 * function's alone (owner included: the page reads them through the API).
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
import { afterAll, beforeAll, beforeEach, describe, it } from "vitest";
import { stackEnv } from "../support/stack-env";

type Db = firebase.firestore.Firestore;

let env: RulesTestEnvironment;
const ALICE = "alice";
const BOB = "bob";

beforeAll(async () => {
  const { env: stack } = stackEnv();
  const [host, port] = stack.FIRESTORE_EMULATOR_HOST!.split(":");
  env = await initializeTestEnvironment({
    projectId: "demo-quarry-rules-schedules",
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
  await env.withSecurityRulesDisabled(async (ctx) => {
    const db = ctx.firestore();
    const now = firebase.firestore.Timestamp.now();
    const note = {
      scheduleId: "s1",
      threadId: "t1",
      title: "Revenue fell",
      body: "…",
      fired: true,
      read: false,
      createdAt: now,
    };
    await db.doc("notifications/n-alice").set({ ...note, uid: ALICE });
    await db.doc("notifications/n-bob").set({ ...note, uid: BOB });
    await db
      .doc("schedules/s-alice")
      .set({ owner: ALICE, name: "Revenue", sql: "SELECT 1", webhook: "https://x" });
  });
});

const as = (uid: string | null): Db =>
  (uid ? env.authenticatedContext(uid) : env.unauthenticatedContext()).firestore() as unknown as Db;

describe("notifications", () => {
  it("the owner reads their own, by id and by a query on their uid", async () => {
    await assertSucceeds(as(ALICE).doc("notifications/n-alice").get());
    await assertSucceeds(as(ALICE).collection("notifications").where("uid", "==", ALICE).get());
  });

  it("nobody else reads them, and an unfiltered query is refused", async () => {
    await assertFails(as(BOB).doc("notifications/n-alice").get());
    await assertFails(as(null).doc("notifications/n-alice").get());
    await assertFails(as(ALICE).collection("notifications").get());
    await assertFails(as(BOB).collection("notifications").where("uid", "==", ALICE).get());
  });

  it("the owner may mark one read, and change nothing else", async () => {
    await assertSucceeds(as(ALICE).doc("notifications/n-alice").update({ read: true }));
    await assertFails(as(ALICE).doc("notifications/n-alice").update({ read: "yes" }));
    await assertFails(as(ALICE).doc("notifications/n-alice").update({ title: "forged" }));
    await assertFails(as(ALICE).doc("notifications/n-alice").update({ read: true, uid: BOB }));
    await assertFails(as(BOB).doc("notifications/n-alice").update({ read: true }));
  });

  it("no client creates or deletes one", async () => {
    await assertFails(as(ALICE).doc("notifications/n-new").set({ uid: ALICE, read: false, title: "x" }));
    await assertFails(as(ALICE).doc("notifications/n-alice").delete());
  });
});

describe("schedules", () => {
  it("are server-only: not even the owner reads or writes them", async () => {
    await assertFails(as(ALICE).doc("schedules/s-alice").get());
    await assertFails(as(ALICE).collection("schedules").where("owner", "==", ALICE).get());
    await assertFails(as(ALICE).doc("schedules/s-alice").update({ paused: true }));
    await assertFails(as(ALICE).doc("schedules/s-new").set({ owner: ALICE }));
    await assertFails(as(BOB).doc("schedules/s-alice").get());
  });
});

/**
 * firestore.rules against Google's Firestore emulator: for each collection and each operation,
 * the owner, another signed-in user and a signed-out visitor.
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
const BOB = "bob";

beforeAll(async () => {
  const { env: stack } = stackEnv();
  const [host, port] = stack.FIRESTORE_EMULATOR_HOST!.split(":");
  env = await initializeTestEnvironment({
    projectId: "demo-quarry-rules",
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
  // Seed as the server would (Admin SDK bypasses rules).
  await env.withSecurityRulesDisabled(async (ctx) => {
    const db = ctx.firestore();
    const now = firebase.firestore.Timestamp.now();
    await db.doc("threads/t-alice").set({ owner: ALICE, title: "Revenue", status: "idle", createdAt: now });
    await db.doc("threads/t-alice-2").set({ owner: ALICE, title: "Orders", status: "idle", createdAt: now });
    await db.doc("threads/t-bob").set({ owner: BOB, title: "Bob's", status: "idle", createdAt: now });
    await db.doc(`settings/${ALICE}`).set({ theme: "dark", pageSize: 25 });
    await db.doc("checkpoints/t-alice").set({ owner: ALICE, blob: "x" });
    await db.doc("checkpoints/t-alice/checkpoints/c1").set({ v: 1 });
    await db.doc("leases/t-alice").set({ runId: "r1" });
    await db.doc("feedback/f-alice").set({ uid: ALICE, threadId: "t-alice", score: 1, status: "proposed" });
    await db.doc("catalogs/k").set({ version: 1, parts: 1 });
  });
});

const as = (uid: string | null): Db =>
  (uid ? env.authenticatedContext(uid) : env.unauthenticatedContext()).firestore() as unknown as Db;

describe("threads/{id} (thread metadata, server-written)", () => {
  it("the owner can get their thread", async () => {
    await assertSucceeds(as(ALICE).doc("threads/t-alice").get());
  });

  it("another user cannot get it; a signed-out visitor cannot either", async () => {
    await assertFails(as(BOB).doc("threads/t-alice").get());
    await assertFails(as(null).doc("threads/t-alice").get());
  });

  it("the owner can list with owner == uid and sees only their threads", async () => {
    const snap = await assertSucceeds(
      as(ALICE).collection("threads").where("owner", "==", ALICE).orderBy("createdAt", "desc").get(),
    );
    const ids = snap.docs.map((d) => d.id).sort();
    expect(ids).toEqual(["t-alice", "t-alice-2"]);
  });

  it("listing without the owner filter, or with someone else's uid, is refused", async () => {
    await assertFails(as(ALICE).collection("threads").get());
    await assertFails(as(ALICE).collection("threads").where("owner", "==", BOB).get());
    await assertFails(as(null).collection("threads").where("owner", "==", ALICE).get());
  });

  it("nobody writes thread metadata from a client (create, update, delete)", async () => {
    for (const uid of [ALICE, BOB, null]) {
      const db = as(uid);
      await assertFails(db.doc("threads/new").set({ owner: uid ?? "x", title: "t" }));
      await assertFails(db.doc("threads/t-alice").update({ title: "renamed" }));
      await assertFails(db.doc("threads/t-alice").set({ owner: ALICE, title: "overwritten" }));
      await assertFails(db.doc("threads/t-alice").delete());
    }
  });
});

describe("feedback/{id} and catalogs/{key} (server-only)", () => {
  it.each([ALICE, BOB, null])("%s can neither read nor write feedback, even their own", async (uid) => {
    const db = as(uid);
    await assertFails(db.doc("feedback/f-alice").get());
    await assertFails(db.collection("feedback").where("uid", "==", ALICE).get());
    await assertFails(db.doc("feedback/f-new").set({ uid: uid ?? "x", threadId: "t-alice", score: 1 }));
    await assertFails(db.doc("feedback/f-alice").update({ status: "approved" }));
    await assertFails(db.doc("feedback/f-alice").delete());
  });

  it.each([ALICE, null])("%s cannot read or write the schema catalog", async (uid) => {
    const db = as(uid);
    await assertFails(db.doc("catalogs/k").get());
    await assertFails(db.doc("catalogs/k/parts/0").set({ data: "x" }));
  });
});

describe("the chat apps' collections (server-only)", () => {
  const CHAT = ["chatEvents", "chatLinks", "chatThreads", "chatAnswers", "chatRooms", "chatCharts"];
  it.each([ALICE, null])(
    "%s can neither read nor write them (a link or a binding would be impersonation)",
    async (uid) => {
      const db = as(uid);
      for (const c of CHAT) {
        await assertFails(db.doc(`${c}/x`).get());
        await assertFails(db.collection(c).where("uid", "==", ALICE).get());
        await assertFails(db.doc(`${c}/x`).set({ uid: ALICE }));
      }
    },
  );
});

describe("settings/{uid}", () => {
  it("the owner reads, creates, updates and deletes their settings", async () => {
    const db = as(ALICE);
    await assertSucceeds(db.doc(`settings/${ALICE}`).get());
    await assertSucceeds(
      db.doc(`settings/${ALICE}`).set({
        theme: "light",
        chartType: "line",
        pageSize: 50,
        showSql: true,
        updatedAt: firebase.firestore.FieldValue.serverTimestamp(),
      }),
    );
    await assertSucceeds(db.doc(`settings/${ALICE}`).update({ pageSize: 10 }));
    const snap = await db.doc(`settings/${ALICE}`).get();
    expect(snap.data()?.pageSize).toBe(10);
    await assertSucceeds(db.doc(`settings/${ALICE}`).delete());
    // Create from nothing, with a subset of fields.
    await assertSucceeds(db.doc(`settings/${ALICE}`).set({ chartType: "auto" }));
  });

  it("another user and a signed-out visitor can do nothing with it", async () => {
    for (const uid of [BOB, null]) {
      const db = as(uid);
      await assertFails(db.doc(`settings/${ALICE}`).get());
      await assertFails(db.doc(`settings/${ALICE}`).set({ theme: "dark" }));
      await assertFails(db.doc(`settings/${ALICE}`).update({ theme: "dark" }));
      await assertFails(db.doc(`settings/${ALICE}`).delete());
    }
  });

  it("nobody lists the settings collection", async () => {
    await assertFails(as(ALICE).collection("settings").get());
    await assertFails(as(null).collection("settings").get());
  });

  it.each([
    ["an unknown field", { theme: "dark", isAdmin: true }],
    ["a theme outside the list", { theme: "neon" }],
    ["a theme of the wrong type", { theme: 1 }],
    ["a chart type outside the list", { chartType: "pie" }],
    ["a page size not offered", { pageSize: 37 }],
    ["a page size as a string", { pageSize: "25" }],
    ["a fractional page size", { pageSize: 25.5 }],
    ["showSql as a string", { showSql: "yes" }],
    ["a client-chosen timestamp", { updatedAt: firebase.firestore.Timestamp.fromMillis(0) }],
  ])("refuses %s", async (_label, data) => {
    const db = as(ALICE);
    await assertFails(db.doc(`settings/${ALICE}`).set(data));
    await assertFails(db.doc(`settings/${ALICE}`).update(data));
  });

  it("refuses an update that would make the merged document invalid", async () => {
    // The seeded doc is valid; merging a bad field in must fail even though the other fields are fine.
    await assertFails(as(ALICE).doc(`settings/${ALICE}`).set({ extra: "x" }, { merge: true }));
  });
});

describe("everything else is server-only", () => {
  it.each([ALICE, BOB, null])("checkpoints, leases and unknown collections are closed to %s", async (uid) => {
    const db = as(uid);
    await assertFails(db.doc("checkpoints/t-alice").get());
    await assertFails(db.doc("checkpoints/t-alice/checkpoints/c1").get());
    await assertFails(db.collection("checkpoints").get());
    await assertFails(db.collectionGroup("checkpoints").get());
    await assertFails(db.doc("checkpoints/t-alice").set({ blob: "y" }));
    await assertFails(db.doc("checkpoints/t-alice").delete());
    await assertFails(db.doc("leases/t-alice").get());
    await assertFails(db.doc("leases/t-alice").set({ runId: "r2" }));
    await assertFails(db.doc(`users/${uid ?? "x"}`).set({ any: 1 }));
    await assertFails(db.doc(`users/${uid ?? "x"}`).get());
  });

  it("a subcollection under the user's own thread is still closed", async () => {
    await assertFails(as(ALICE).doc("threads/t-alice/secrets/s").get());
    await assertFails(as(ALICE).doc("threads/t-alice/secrets/s").set({ a: 1 }));
  });
});

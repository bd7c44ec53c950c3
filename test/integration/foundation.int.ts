import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { initializeApp, deleteApp, type App } from "firebase-admin/app";
import { getFirestore } from "firebase-admin/firestore";
import { signUp, type TestUser } from "../support/auth-emulator";
import { stackEnv, type ProvidedStack } from "../support/stack-env";

let stack: ProvidedStack;
let api: string;
let admin: App;
let alice: TestUser;

beforeAll(async () => {
  stack = stackEnv();
  api = stack.urls.api!;
  admin = initializeApp({ projectId: stack.env.GCLOUD_PROJECT }, `foundation-${Date.now()}`);
  alice = await signUp(stack.urls.auth!);
});

afterAll(async () => {
  await deleteApp(admin);
});

describe("the api function in the functions emulator", () => {
  it("answers GET /ok without a token", async () => {
    const res = await fetch(`${api}/ok`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });
  });

  it("also answers under the Hosting rewrite prefix /api", async () => {
    const res = await fetch(`${api}/api/ok`);
    expect(res.status).toBe(200);
  });

  it("rejects a missing token with 401 and says what to send", async () => {
    const res = await fetch(`${api}/threads`, { method: "POST" });
    expect(res.status).toBe(401);
    const body = await res.json();
    expect(body.error).toBe("unauthorized:token");
    expect(body.message).toMatch(/Authorization/);
  });

  it("rejects a garbage token with 401", async () => {
    for (const header of ["Bearer not-a-jwt", "Bearer a.b.c", "Basic abc", "Bearer"]) {
      const res = await fetch(`${api}/threads`, { method: "POST", headers: { authorization: header } });
      expect(res.status, header).toBe(401);
    }
  });

  it("verifies an Auth-emulator ID token and writes and reads Firestore", async () => {
    const res = await fetch(`${api}/threads`, {
      method: "POST",
      headers: { authorization: `Bearer ${alice.idToken}`, "content-type": "application/json" },
      body: JSON.stringify({ metadata: { topic: "sales" } }),
    });
    expect(res.status).toBe(200);
    const thread = await res.json();
    expect(thread.thread_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(thread.metadata.owner).toBe(alice.uid);

    // The document really is in the Firestore emulator, written by the function.
    const snap = await getFirestore(admin).collection("threads").doc(thread.thread_id).get();
    expect(snap.exists).toBe(true);
    expect(snap.get("owner")).toBe(alice.uid);
    expect(snap.get("metadata")).toEqual({ topic: "sales" });

    // And the function reads it back.
    const again = await fetch(`${api}/threads/${thread.thread_id}`, {
      headers: { authorization: `Bearer ${alice.idToken}` },
    });
    expect(again.status).toBe(200);
    expect((await again.json()).thread_id).toBe(thread.thread_id);
  });

  it("hides one user's thread from another (404)", async () => {
    const created = await fetch(`${api}/threads`, {
      method: "POST",
      headers: { authorization: `Bearer ${alice.idToken}` },
    }).then((r) => r.json());
    const bob = await signUp(stack.urls.auth!);
    const res = await fetch(`${api}/threads/${created.thread_id}`, {
      headers: { authorization: `Bearer ${bob.idToken}` },
    });
    expect(res.status).toBe(404);
  });
});

import { describe, it, expect, beforeAll } from "vitest";
import { randomUUID } from "node:crypto";
import { signUp, type TestUser } from "../../support/auth-emulator";
import { call, craftToken } from "../../support/api-client";
import { stackEnv } from "../../support/stack-env";

let api: string;
let alice: TestUser;
let bob: TestUser;
let aliceThread: string;

beforeAll(async () => {
  const stack = stackEnv();
  api = stack.urls.api!;
  alice = await signUp(stack.urls.auth!);
  bob = await signUp(stack.urls.auth!);
  const created = await call(api, "/threads", {
    method: "POST",
    token: alice.idToken,
    body: { metadata: { title: "Alice's" } },
  });
  aliceThread = created.json.thread_id as string;
});

/** Resolves once this machine's clock reads at least `ms` (epoch milliseconds). */
async function untilClock(ms: number): Promise<void> {
  while (Date.now() < ms) await new Promise((r) => setTimeout(r, ms - Date.now()));
}

describe("tokens", () => {
  const now = Math.floor(Date.now() / 1000);
  const claims = (over: Record<string, unknown>) => ({
    iss: "https://securetoken.google.com/demo-quarry",
    aud: "demo-quarry",
    sub: "someone",
    user_id: "someone",
    iat: now - 7200,
    auth_time: now - 7200,
    exp: now - 3600,
    firebase: { sign_in_provider: "password", identities: {} },
    ...over,
  });

  it.each([
    ["missing", undefined, /Missing Authorization header/],
    ["garbage", "garbage", /not valid/],
    ["not a JWT", "a.b", /not valid/],
    ["expired", craftToken(claims({})), /expired/],
    ["for another project", craftToken(claims({ aud: "demo-other", exp: now + 3600 })), /not valid/],
  ])("a %s token gets 401", async (_name, token, says) => {
    for (const path of ["/threads", "/threads/search"]) {
      const res = await call(api, path, { method: "POST", token, body: {} });
      expect(res.status).toBe(401);
      expect(res.json.error).toBe("unauthorized:token");
      expect(res.json.message).toMatch(says);
    }
  });

  it("a revoked token gets 401 and is told to sign in again", async () => {
    const { initializeApp, deleteApp } = await import("firebase-admin/app");
    const { getAuth } = await import("firebase-admin/auth");
    const carol = await signUp(stackEnv().urls.auth!);
    expect(
      (await call(api, "/threads/search", { method: "POST", token: carol.idToken, body: {} })).status,
    ).toBe(200);
    const app = initializeApp({ projectId: "demo-quarry" }, `revoke-${Date.now()}`);
    try {
      // Revocation is recorded with second precision: it must fall in a later second than the token's
      // auth_time. Wait for exactly that (same clock as the Auth emulator), not a fixed time.
      const authTime = (
        JSON.parse(Buffer.from(carol.idToken.split(".")[1], "base64url").toString()) as {
          auth_time: number;
        }
      ).auth_time;
      await untilClock((authTime + 1) * 1000);
      await getAuth(app).revokeRefreshTokens(carol.uid);
    } finally {
      await deleteApp(app);
    }
    const res = await call(api, "/threads/search", { method: "POST", token: carol.idToken, body: {} });
    expect(res.status).toBe(401);
    expect(res.json.message).toMatch(/revoked/);
  });

  it("/ok needs no token", async () => {
    expect((await call(api, "/ok")).status).toBe(200);
  });
});

describe("another user's thread is invisible (404 on every endpoint)", () => {
  const probes: Array<[string, string, (id: string) => string, unknown]> = [
    ["get", "GET", (id) => `/threads/${id}`, undefined],
    ["patch", "PATCH", (id) => `/threads/${id}`, { metadata: { title: "mine now" } }],
    ["delete", "DELETE", (id) => `/threads/${id}`, undefined],
    ["state", "GET", (id) => `/threads/${id}/state`, undefined],
    ["history (POST)", "POST", (id) => `/threads/${id}/history`, { limit: 5 }],
    ["history (GET)", "GET", (id) => `/threads/${id}/history`, undefined],
    [
      "run",
      "POST",
      (id) => `/threads/${id}/runs/stream`,
      { assistant_id: "quarry", input: { messages: [{ type: "human", content: "hi" }] } },
    ],
    ["cancel", "POST", (id) => `/threads/${id}/runs/${randomUUID()}/cancel`, undefined],
    ["get run", "GET", (id) => `/threads/${id}/runs/${randomUUID()}`, undefined],
  ];

  it.each(probes)("%s", async (_name, method, path, body) => {
    const res = await call(api, path(aliceThread), { method, token: bob.idToken, body });
    expect(res.status).toBe(404);
    expect(res.json.message).toMatch(/not found/i);
  });

  it("bob cannot create a thread with alice's id", async () => {
    const res = await call(api, "/threads", {
      method: "POST",
      token: bob.idToken,
      body: { thread_id: aliceThread },
    });
    expect(res.status).toBe(409);
    const mine = await call(api, `/threads/${aliceThread}`, { token: alice.idToken });
    expect((mine.json.metadata as Record<string, unknown>).owner).toBe(alice.uid);
  });

  it("search returns only the caller's threads", async () => {
    await call(api, "/threads", { method: "POST", token: bob.idToken, body: {} });
    const bobs = await call(api, "/threads/search", {
      method: "POST",
      token: bob.idToken,
      body: { limit: 100 },
    });
    const ids = bobs.json as unknown as Array<{ thread_id: string; metadata: { owner: string } }>;
    expect(ids.length).toBeGreaterThan(0);
    expect(ids.every((t) => t.metadata.owner === bob.uid)).toBe(true);
    expect(ids.map((t) => t.thread_id)).not.toContain(aliceThread);
  });

  it("alice's thread survived all the probes, title unchanged", async () => {
    const res = await call(api, `/threads/${aliceThread}`, { token: alice.idToken });
    expect(res.status).toBe(200);
    expect((res.json.metadata as Record<string, unknown>).title).toBe("Alice's");
  });
});

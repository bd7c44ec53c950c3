/**
 * Outsiders refused at the door: the function's Auth blocking functions (`beforeCreate`,
 * `beforeSignIn`), which firebase-tools' functions emulator registers with the Auth emulator, run
 * on every sign-up and sign-in through the Identity Toolkit REST API (what the Firebase JS SDK
 * calls). The integration stack's policy: example.com addresses and admin@quarry-admins.test.
 */
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { Firestore } from "@google-cloud/firestore";
import { MEMBER_DOMAIN, TEST_ADMIN_EMAIL, signUp } from "../support/auth-emulator";
import { stackEnv } from "../support/stack-env";

let authUrl: string;
let db: Firestore;
let seq = 0;
const unique = (local: string, domain: string) => `${local}${Date.now()}-${seq++}@${domain}`;

beforeAll(() => {
  const stack = stackEnv();
  authUrl = stack.urls.auth!;
  db = new Firestore({
    projectId: stack.env.GCLOUD_PROJECT,
    host: stack.env.FIRESTORE_EMULATOR_HOST,
    ssl: false,
  });
});
afterAll(async () => {
  await db?.terminate();
});

/** An Identity Toolkit call as a browser makes it (an API key, no admin credentials). */
async function publicCall(
  method: string,
  body: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${authUrl}/identitytoolkit.googleapis.com/v1/${method}?key=fake-api-key`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

const signUpPublic = (email: string) =>
  publicCall("accounts:signUp", { email, password: "password123", returnSecureToken: true });

/** The refusal as the client sees it: the blocking function's message inside the emulator's error. */
function refusal(res: { json: Record<string, unknown> }): string {
  return String((res.json.error as { message?: string } | undefined)?.message ?? "");
}

/** Whether the Auth emulator holds an account for `email`. */
async function accountExists(email: string): Promise<boolean> {
  const res = await fetch(`${authUrl}/identitytoolkit.googleapis.com/v1/accounts:lookup?key=fake-api-key`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer owner" },
    body: JSON.stringify({ email: [email] }),
  });
  return Boolean(((await res.json()) as { users?: unknown[] }).users?.length);
}

describe("the door (Auth blocking functions)", () => {
  it("refuses to sign up x@elsewhere.test, saying whom to ask, and makes no account", async () => {
    const res = await signUpPublic("x@elsewhere.test");
    expect(res.status).toBe(400);
    expect(refusal(res)).toContain("BLOCKING_FUNCTION_ERROR_RESPONSE");
    expect(refusal(res)).toContain("x@elsewhere.test is not allowed to use this Quarry");
    expect(refusal(res)).toContain("data-team@example.com");
    expect(await accountExists("x@elsewhere.test")).toBe(false);
  });

  it("signs up y@example.com (an allowed domain, not yet verified)", async () => {
    const y = unique("y", MEMBER_DOMAIN);
    const res = await signUpPublic(y);
    expect([res.status, typeof res.json.idToken]).toEqual([200, "string"]);
    // The API still requires the address verified: the door lets in, the API decides what it may do.
    const claims = JSON.parse(
      Buffer.from(String(res.json.idToken).split(".")[1], "base64url").toString(),
    ) as { email: string; email_verified: boolean };
    expect(claims).toMatchObject({ email: y, email_verified: false });
  });

  it("refuses a sign-in of an account outside the policy (made by an admin, past beforeCreate)", async () => {
    const outsider = await signUp(authUrl, unique("outsider", "elsewhere.test"));
    const res = await publicCall("accounts:signInWithPassword", {
      email: outsider.email,
      password: "password123",
      returnSecureToken: true,
    });
    expect(res.status).toBe(400);
    expect(refusal(res)).toContain(`${outsider.email} is not allowed to use this Quarry`);
  });

  it("lets in an outside address once it is on the members list (read fresh, no cache)", async () => {
    const guest = unique("guest", "partner.test");
    expect(refusal(await signUpPublic(guest))).toContain("not allowed to use this Quarry");
    const now = new Date().toISOString();
    await db
      .collection("members")
      .doc(guest)
      .set({ email: guest, role: "member", addedBy: TEST_ADMIN_EMAIL, addedAt: now, updatedAt: now });
    const res = await signUpPublic(guest);
    expect([res.status, refusal(res)]).toEqual([200, ""]);
    const again = await publicCall("accounts:signInWithPassword", {
      email: guest,
      password: "password123",
      returnSecureToken: true,
    });
    expect(again.status).toBe(200);
  });
});

/**
 * Signs users up on the Auth emulator through its Identity Toolkit REST API (what the Firebase JS
 * SDK calls), returning real emulator-minted ID tokens.
 */
export interface TestUser {
  uid: string;
  email: string;
  idToken: string;
  refreshToken: string;
}

let counter = 0;

/** The domain of the test users `signUp` makes; the integration stack admits its verified addresses. */
export const MEMBER_DOMAIN = "example.com";

/** Admin from the start in the integration stack (QUARRY_ADMINS); outside the member domain. */
export const TEST_ADMIN_EMAIL = "admin@quarry-admins.test";

/**
 * The integration stack's access policy (the emulated function and the in-process app get the
 * same): verified addresses of MEMBER_DOMAIN are members, TEST_ADMIN_EMAIL is an admin. The
 * questions quota is high by default (tests ask many questions) with a long window, so a test
 * that lowers one person's limit counts exactly, however slowly its requests arrive.
 */
export const INTEGRATION_ACCESS_ENV = {
  QUARRY_ALLOWED_DOMAINS: MEMBER_DOMAIN,
  QUARRY_ADMINS: TEST_ADMIN_EMAIL,
  QUARRY_ACCESS_CONTACT: "data-team@example.com",
  // Short, so a test sees a removed member refused soon; production allows up to 60 s.
  QUARRY_ACCESS_CACHE_SECONDS: "2",
  QUARRY_QUOTA_QUESTIONS_PER_MINUTE: "1000",
  QUARRY_QUOTA_WINDOW_SECONDS: "600",
};

export const PASSWORD = "password123";

async function identityToolkit<T>(authUrl: string, method: string, body: unknown, owner = false): Promise<T> {
  const res = await fetch(`${authUrl}/identitytoolkit.googleapis.com/v1/${method}?key=fake-api-key`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(owner ? { authorization: "Bearer owner" } : {}) },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`Auth emulator ${method} failed: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** Whether the integration stack's blocking functions let `email` in (its member domain, its admin). */
function admittedAtTheDoor(email: string): boolean {
  const addr = email.toLowerCase();
  return addr === TEST_ADMIN_EMAIL || addr.endsWith(`@${MEMBER_DOMAIN}`);
}

/**
 * Signs a user up (email/password, `password123` unless `password` is given). `verified` (default
 * true) marks the email verified, as a confirmed address is, and signs in again so the ID token
 * says so (`email_verified: true`); an unverified address proves nothing to Quarry's access policy.
 *
 * The function's blocking functions refuse to sign up or sign in an address outside the policy
 * (test/integration/auth-blocking.int.ts). Tests still need such people *with* a token — the API
 * must refuse them too: a member removed after signing in keeps an hour-long token — so an address
 * the integration stack's door refuses gets its account the way an admin makes one (the Identity
 * Toolkit as owner, which runs no blocking function) and its token from a custom-token sign-in.
 */
export async function signUp(
  authUrl: string,
  email?: string,
  opts: { verified?: boolean; password?: string } = {},
): Promise<TestUser> {
  const addr = email ?? `user${Date.now()}-${counter++}@${MEMBER_DOMAIN}`;
  const password = opts.password ?? PASSWORD;
  if (!admittedAtTheDoor(addr)) return signUpPastTheDoor(authUrl, addr, opts.verified !== false, password);
  type Tokens = { localId: string; idToken: string; refreshToken: string };
  const created = await identityToolkit<Tokens>(authUrl, "accounts:signUp", {
    email: addr,
    password,
    returnSecureToken: true,
  });
  if (opts.verified === false) {
    return {
      uid: created.localId,
      email: addr,
      idToken: created.idToken,
      refreshToken: created.refreshToken,
    };
  }
  await identityToolkit(authUrl, "accounts:update", { localId: created.localId, emailVerified: true }, true);
  const body = await identityToolkit<Tokens>(authUrl, "accounts:signInWithPassword", {
    email: addr,
    password,
    returnSecureToken: true,
  });
  return { uid: body.localId, email: addr, idToken: body.idToken, refreshToken: body.refreshToken };
}

/** An account made as an admin makes one, with a token from a custom-token sign-in (no blocking function). */
async function signUpPastTheDoor(
  authUrl: string,
  email: string,
  verified: boolean,
  password: string,
): Promise<TestUser> {
  const created = await identityToolkit<{ localId: string }>(
    authUrl,
    "accounts:signUp",
    { email, password },
    true,
  );
  if (verified) {
    await identityToolkit(
      authUrl,
      "accounts:update",
      { localId: created.localId, emailVerified: true },
      true,
    );
  }
  // The Auth emulator takes a custom token as plain JSON; the ID token carries the account's email.
  const body = await identityToolkit<{ idToken: string; refreshToken: string }>(
    authUrl,
    "accounts:signInWithCustomToken",
    { token: JSON.stringify({ uid: created.localId }), returnSecureToken: true },
  );
  return { uid: created.localId, email, idToken: body.idToken, refreshToken: body.refreshToken };
}

/**
 * Waits until the functions emulator answers the Auth emulator's blocking-function calls within
 * the Auth emulator's own deadline: the first call loads the function's code in a fresh worker,
 * which on a busy machine can take longer than that deadline (the sign-up then fails with
 * BLOCKING_FUNCTION_ERROR_RESPONSE "Deadline exceeded", and no account is made). Signs up (a
 * throwaway person, or `signUpOnce`) until a sign-up goes through, bounded, so no test's own first
 * sign-up meets a cold worker.
 */
export async function warmBlockingFunctions(
  authUrl: string,
  signUpOnce: () => Promise<unknown> = () => signUp(authUrl),
  attempts = 6,
): Promise<void> {
  for (let i = 1; ; i++) {
    try {
      await signUpOnce();
      return;
    } catch (err) {
      const cold = /BLOCKING_FUNCTION_ERROR_RESPONSE.*Deadline exceeded/s.test(String(err));
      if (!cold || i >= attempts) throw err;
    }
  }
}

/** An ID token for an existing email/password account (the Auth emulator's sign-in, as the page does it). */
export async function signIn(authUrl: string, email: string, password: string): Promise<TestUser> {
  type Tokens = { localId: string; idToken: string; refreshToken: string };
  const body = await identityToolkit<Tokens>(authUrl, "accounts:signInWithPassword", {
    email,
    password,
    returnSecureToken: true,
  });
  return { uid: body.localId, email, idToken: body.idToken, refreshToken: body.refreshToken };
}

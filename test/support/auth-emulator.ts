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

export async function signUp(authUrl: string, email?: string): Promise<TestUser> {
  const addr = email ?? `user${Date.now()}-${counter++}@example.com`;
  const res = await fetch(`${authUrl}/identitytoolkit.googleapis.com/v1/accounts:signUp?key=fake-api-key`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: addr, password: "password123", returnSecureToken: true }),
  });
  if (!res.ok) throw new Error(`Auth emulator signUp failed: ${res.status} ${await res.text()}`);
  const body = (await res.json()) as { localId: string; idToken: string; refreshToken: string };
  return { uid: body.localId, email: addr, idToken: body.idToken, refreshToken: body.refreshToken };
}

/**
 * Google's OAuth 2.0 endpoints for web-server apps, spoken directly (three form posts and a
 * redirect URL; no client library needed): the authorization URL the page's browser goes to
 * (offline access, consent prompt, PKCE S256, the person's email as login hint), the code
 * exchange and refresh grants at the token endpoint, and revocation. Endpoints are settings, so
 * tests point them at a loopback stand-in. Nothing here logs or puts a token in an error message.
 */
import type { IdentityConfig } from "../config";

/** The scopes asked for: BigQuery, and the person's email to check it is the signed-in person's. */
const BIGQUERY_SCOPES = ["openid", "email", "https://www.googleapis.com/auth/bigquery"];
const BIGQUERY_SCOPE = "https://www.googleapis.com/auth/bigquery";

/** The token endpoint refused the grant: the consent is gone (revoked, expired, or never given). */
export class GrantRefused extends Error {
  constructor(readonly reason: string) {
    super(`The token endpoint refused the grant (${reason}).`);
    this.name = "GrantRefused";
  }
}

export interface AccessToken {
  token: string;
  /** ms since the epoch. */
  expiresAt: number;
}

export interface CodeExchange extends AccessToken {
  refreshToken?: string;
  /** The id_token's claims (read, not verified: it came straight from the token endpoint over TLS). */
  claims: { aud?: string; iss?: string; email?: string; email_verified?: boolean | string };
  /** Whether the person granted the BigQuery scope (Google lets them untick it). */
  bigqueryGranted: boolean;
}

type OAuth = IdentityConfig["oauth"];

export function authorizationUrl(
  oauth: OAuth,
  p: { state: string; challenge: string; loginHint: string },
): string {
  const url = new URL(oauth.authorizationUrl);
  const q = {
    client_id: oauth.clientId ?? "",
    redirect_uri: oauth.redirectUri,
    response_type: "code",
    scope: BIGQUERY_SCOPES.join(" "),
    access_type: "offline",
    prompt: "consent",
    include_granted_scopes: "true",
    state: p.state,
    code_challenge: p.challenge,
    code_challenge_method: "S256",
    login_hint: p.loginHint,
  };
  for (const [k, v] of Object.entries(q)) url.searchParams.set(k, v);
  return url.toString();
}

async function tokenCall(oauth: OAuth, form: Record<string, string>): Promise<Record<string, unknown>> {
  const res = await fetch(oauth.tokenUrl, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      client_id: oauth.clientId ?? "",
      client_secret: oauth.clientSecret ?? "",
      ...form,
    }),
    signal: AbortSignal.timeout(15_000),
  });
  const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (res.ok && typeof body.access_token === "string") return body;
  const reason = typeof body.error === "string" ? body.error : `HTTP ${res.status}`;
  // invalid_grant: revoked, expired, or a code used twice; unauthorized_client/invalid_client: our side.
  if (res.status === 400 || res.status === 401) throw new GrantRefused(reason);
  throw new Error(`Google's token endpoint failed (${reason}).`);
}

function expiry(body: Record<string, unknown>, now: number): number {
  const seconds = Number(body.expires_in ?? 3599);
  return now + (Number.isFinite(seconds) ? seconds : 3599) * 1000;
}

/** Exchanges an authorization code (with its PKCE verifier) for tokens. */
export async function exchangeCode(oauth: OAuth, code: string, verifier: string): Promise<CodeExchange> {
  const now = Date.now();
  const body = await tokenCall(oauth, {
    grant_type: "authorization_code",
    code,
    code_verifier: verifier,
    redirect_uri: oauth.redirectUri,
  });
  const scopes = String(body.scope ?? "").split(/\s+/);
  return {
    token: String(body.access_token),
    expiresAt: expiry(body, now),
    ...(typeof body.refresh_token === "string" ? { refreshToken: body.refresh_token } : {}),
    claims: claimsOf(body.id_token),
    bigqueryGranted: scopes.includes(BIGQUERY_SCOPE),
  };
}

/** A fresh access token from a refresh token (and a new refresh token when Google rotates it). */
export async function refreshAccess(
  oauth: OAuth,
  refreshToken: string,
): Promise<AccessToken & { refreshToken?: string }> {
  const now = Date.now();
  const body = await tokenCall(oauth, { grant_type: "refresh_token", refresh_token: refreshToken });
  return {
    token: String(body.access_token),
    expiresAt: expiry(body, now),
    ...(typeof body.refresh_token === "string" ? { refreshToken: body.refresh_token } : {}),
  };
}

/** Revokes a token (and with a refresh token, the whole grant). An already-invalid token is fine. */
export async function revoke(oauth: OAuth, token: string): Promise<void> {
  const res = await fetch(oauth.revokeUrl, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ token }),
    signal: AbortSignal.timeout(15_000),
  });
  if (!res.ok && res.status !== 400)
    throw new Error(`Google's revocation endpoint failed (HTTP ${res.status}).`);
}

/**
 * An id_token's claims. Its signature is not checked: it came in the token endpoint's answer over
 * TLS to our own request (OpenID Connect Core §3.1.3.7 allows TLS server validation instead); the
 * caller checks its audience, issuer and email.
 */
function claimsOf(idToken: unknown): CodeExchange["claims"] {
  if (typeof idToken !== "string") return {};
  try {
    return JSON.parse(
      Buffer.from(idToken.split(".")[1] ?? "", "base64url").toString("utf8"),
    ) as CodeExchange["claims"];
  } catch {
    return {};
  }
}

/**
 * Who an MCP request is from: `Authorization: Bearer <token>` with a personal access token
 * (`qry_…`, access/tokens.ts) or a Firebase ID token. Either resolves to the same person (uid,
 * email, whether it is verified) as the page's sign-in, then the access gate decides as for any
 * route. Every refusal is a 401 with `WWW-Authenticate: Bearer` (RFC 6750), so a client knows to
 * authenticate, and words saying what to send.
 */
import type { NextFunction, Request, Response } from "express";
import { config } from "../config";
import { QuarryError } from "../errors";
import { accessStores } from "../access/gate";
import { isPersonalToken, tokenRefused } from "../access/tokens";
import { adminAuth } from "../services";
import { verifyIdToken, type Caller } from "../access/caller";
import { Lru } from "../lru";
import { bearerChallenge, metadataUrl } from "./oauth/metadata";
import { isOAuthToken, verifyAccessToken } from "./oauth/verify";

const BEARER = /^Bearer\s+([A-Za-z0-9._-]+)$/;

/** People one instance remembers the account of (email, verified, disabled), for the access cache's time. */
const CACHED_ACCOUNTS = 10_000;
/** A token's account as Firebase Auth holds it, and since when its sessions are valid (ms). */
type Account = Omit<Caller, "uid"> & { validSince: number | undefined };

const accounts = new Lru<string, { until: number; account: Promise<Account> }>(CACHED_ACCOUNTS);

/** Express middleware: sets `req.caller` (with `via: mcp`) or refuses with a 401 and its challenge. */
export async function requireMcpUser(req: Request, _res: Response, next: NextFunction): Promise<void> {
  const header = req.get("authorization");
  if (!header) {
    throw new QuarryError(
      "unauthorized:token",
      "Missing Authorization header: send `Authorization: Bearer <token>` with a personal access token " +
        "(POST /me/tokens; see docs/mcp.md).",
      { headers: { "WWW-Authenticate": mcpChallenge() } },
    );
  }
  const bearer = BEARER.exec(header.trim())?.[1];
  if (!bearer) throw tokenRefused("Malformed Authorization header: expected `Bearer <token>`.");
  if (isPersonalToken(bearer)) {
    const { tokens } = await accessStores();
    const { uid, tokenId, createdAt } = await tokens.verify(bearer);
    const { validSince, ...account } = await accountOf(uid);
    // "Sign out everywhere" (revoking the account's sessions) ends the tokens made before it too.
    if (validSince !== undefined && createdAt.getTime() < validSince) {
      throw tokenRefused(
        "This token was made before the account's sessions were revoked: sign in and create a new one.",
      );
    }
    req.caller = { uid, ...account, via: { channel: "mcp", tokenId } };
  } else if (isOAuthToken(bearer)) {
    const { uid, clientId, issuedAt } = await verifyAccessToken(bearer);
    const { validSince, ...account } = await accountOf(uid);
    // As for a personal token: revoking the account's sessions ends the access tokens issued before
    // (and the authorization server refuses to refresh them: provider.ts's findAccount).
    if (validSince !== undefined && issuedAt < validSince) {
      throw tokenRefused(
        "This access token was issued before the account's sessions were revoked: authorize again.",
      );
    }
    req.caller = { uid, ...account, via: { channel: "mcp", clientId } };
  } else {
    const caller = await verifyIdToken(bearer).catch((err: unknown) => {
      throw err instanceof QuarryError ? tokenRefused(err.message) : err;
    });
    req.caller = { ...caller, via: { channel: "mcp" } };
  }
  next();
}

/**
 * The challenge of a 401 from `/mcp` (RFC 6750 §3): with OAuth on, it names the protected-resource
 * metadata (RFC 9728 §5.1), which is how a hosted assistant finds where to authorize.
 */
export function mcpChallenge(error?: "invalid_token"): string {
  const { oauth, apiUrl } = config();
  return bearerChallenge({ error, ...(oauth.enabled ? { metadata: metadataUrl(apiUrl) } : {}) });
}

/**
 * The account behind a token as Firebase Auth holds it now: its email and whether it is verified
 * (what the access policy decides on), refused when the account is disabled or deleted. Cached per
 * instance as long as the members cache, so a token stops within the same window.
 */
async function accountOf(uid: string): Promise<Account> {
  const hit = accounts.get(uid);
  if (hit && hit.until > Date.now()) return hit.account;
  const account = adminAuth()
    .then((auth) => auth.getUser(uid))
    .then(
      (user) => {
        if (user.disabled) throw tokenRefused("The account this token acts for is disabled.");
        const validSince = user.tokensValidAfterTime ? Date.parse(user.tokensValidAfterTime) : undefined;
        return { email: user.email, emailVerified: user.emailVerified, validSince };
      },
      (err: unknown) => {
        if ((err as { code?: string }).code === "auth/user-not-found")
          throw tokenRefused("The account this token acts for no longer exists.");
        throw err;
      },
    );
  account.catch(() => accounts.delete(uid));
  accounts.set(uid, { until: Date.now() + config().access.cacheMs, account });
  return account;
}

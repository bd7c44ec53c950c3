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
import { currentAccount, revokedSince, type Account } from "../access/account";
import { verifyIdToken } from "../access/caller";
import { bearerChallenge, metadataUrl } from "./oauth/metadata";
import { isOAuthToken, verifyAccessToken } from "./oauth/verify";

const BEARER = /^Bearer\s+([A-Za-z0-9._-]+)$/;

/** The caller's email fields from the account. */
const callerFields = ({ email, emailVerified }: Account) => ({ email, emailVerified });

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
    const account = await accountOf(uid);
    // "Sign out everywhere" (revoking the account's sessions) ends the tokens made before it too.
    if (revokedSince(account, createdAt.getTime())) {
      throw tokenRefused(
        "This token was made before the account's sessions were revoked: sign in and create a new one.",
      );
    }
    req.caller = { uid, ...callerFields(account), via: { channel: "mcp", tokenId } };
  } else if (isOAuthToken(bearer)) {
    const { uid, clientId, issuedAt, grantId } = await verifyAccessToken(bearer);
    const [account, granted] = await Promise.all([
      accountOf(uid),
      accessStores().then(({ oauthGrants }) => oauthGrants.isLive(grantId, uid, clientId)),
    ]);
    // The person disconnected this client (GET|DELETE /me/oauth-clients): its tokens end with it.
    if (!granted) throw tokenRefused("This client was disconnected from Quarry: authorize it again.");
    // As for a personal token: revoking the account's sessions ends the access tokens issued before
    // (and the authorization server refuses to refresh them: provider.ts's findAccount).
    if (revokedSince(account, issuedAt)) {
      throw tokenRefused(
        "This access token was issued before the account's sessions were revoked: authorize again.",
      );
    }
    req.caller = { uid, ...callerFields(account), via: { channel: "mcp", clientId } };
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
 * The account behind a token as Firebase Auth holds it now (access/account.ts): refused when the
 * account is disabled or deleted, within the access cache's window.
 */
async function accountOf(uid: string): Promise<Account> {
  const account = await currentAccount(uid);
  if ("gone" in account) {
    throw tokenRefused(
      account.gone === "disabled"
        ? "The account this token acts for is disabled."
        : "The account this token acts for no longer exists.",
    );
  }
  return account;
}

/**
 * The credential broker: a person's BigQuery access token by uid, for the warehouse in user
 * identity mode (`tools/types.ts` CredentialSource). Access tokens live only in this instance's
 * memory, kept until five minutes before they expire; each is minted with the refresh grant from
 * the person's stored refresh token, so a run needs no page open and a run longer than the token's
 * hour gets a new one (before its expiry, or when BigQuery refuses it: `fresh`). Missing, revoked
 * or expired consent throws `auth:bigquery_consent` — never a fall-back to the service account.
 */
import * as logger from "firebase-functions/logger";
import type { IdentityConfig } from "../config";
import { QuarryError } from "../errors";
import type { CredentialSource } from "../tools/types";
import { GrantRefused, refreshAccess, type AccessToken } from "./google-oauth";
import type { CredentialStore } from "./store";
import { Lru } from "../lru";

/** People whose BigQuery access token one instance keeps (each lives an hour at most). */
const CACHED_TOKENS = 1000;

/** A cached token is replaced this long before it expires. */
const EARLY_MS = 5 * 60_000;

function consentNeeded(why: "missing" | "revoked"): QuarryError {
  return new QuarryError(
    "auth:bigquery_consent",
    why === "missing"
      ? "Quarry runs BigQuery with your own Google account here, and you have not connected it yet. Click Connect BigQuery, allow access, then ask again."
      : "Your BigQuery access for Quarry was revoked or has expired. Click Connect BigQuery to allow it again, then ask again.",
  );
}

export class CredentialBroker implements CredentialSource {
  /** Access tokens by uid; an hour-long token of someone not seen since is dropped first. */
  private readonly tokens = new Lru<string, AccessToken>(CACHED_TOKENS);
  private readonly pending = new Map<string, Promise<AccessToken>>();

  constructor(
    private readonly oauth: IdentityConfig["oauth"],
    private readonly store: CredentialStore,
    private readonly now: () => number = Date.now,
  ) {}

  async accessToken(uid: string, opts: { fresh?: boolean } = {}): Promise<string> {
    const cached = this.tokens.get(uid);
    if (!opts.fresh && cached && cached.expiresAt - EARLY_MS > this.now()) return cached.token;
    if (opts.fresh) this.tokens.delete(uid);
    let minting = this.pending.get(uid);
    if (!minting) {
      minting = this.mint(uid).finally(() => this.pending.delete(uid));
      this.pending.set(uid, minting);
    }
    return (await minting).token;
  }

  /** Forgets the person's access token (disconnected). */
  forget(uid: string): void {
    this.tokens.delete(uid);
  }

  private async mint(uid: string): Promise<AccessToken> {
    const refreshToken = await this.store.refreshToken(uid);
    if (!refreshToken) throw consentNeeded("missing");
    try {
      const fresh = await refreshAccess(this.oauth, refreshToken);
      if (fresh.refreshToken) await this.store.put(uid, "", fresh.refreshToken, true);
      const token = { token: fresh.token, expiresAt: fresh.expiresAt };
      this.tokens.set(uid, token);
      return token;
    } catch (err) {
      if (!(err instanceof GrantRefused)) throw err;
      if (err.reason !== "invalid_grant") {
        // invalid_client, unauthorized_client…: the deployment's OAuth client, not the person's consent.
        throw new QuarryError(
          "auth:bigquery_not_configured",
          `Google refused Quarry's OAuth client (${err.reason}): an admin must check QUARRY_OAUTH_CLIENT_ID and QUARRY_OAUTH_CLIENT_SECRET.`,
        );
      }
      // Revoked or expired: the stored grant is useless; the person connects again.
      logger.info("BigQuery consent refused by Google; removed", { uid, reason: err.reason });
      this.tokens.delete(uid);
      await this.store.delete(uid).catch(() => undefined);
      throw consentNeeded("revoked");
    }
  }
}

/**
 * The MCP clients a person has allowed (docs/mcp.md#oauth-for-hosted-assistants): each consent is an OAuth **grant** that
 * oidc-provider keeps in the server-only `oauth` collection (`Grant:<id>`, beside its sessions,
 * codes and refresh tokens, all tagged with the grant's id). A person lists theirs and revokes one
 * (`GET|DELETE /me/oauth-clients`): the grant and everything issued under it are deleted, so the
 * client can refresh nothing more, and its access tokens — which name their grant — stop at the
 * next check of the grant, within the access cache's window rather than at their expiry.
 */
import type { Firestore } from "firebase-admin/firestore";
import type { ConnectedClient } from "../contract/tokens";
import { config } from "../config";
import { TtlCache } from "../lru";

/** Where oidc-provider's models are stored (mcp/oauth/adapter.ts), one document per `<model>:<id>`. */
export const OAUTH_COLLECTION = "oauth";

/** The document id of one of oidc-provider's models. */
export const oauthDocId = (model: string, id: string) => `${model}:${encodeURIComponent(id)}`;

/** Grants one instance remembers as live or gone, for the access cache's time. */
const CACHED_GRANTS = 10_000;

interface GrantPayload {
  accountId?: string;
  clientId?: string;
  iat?: number;
  exp?: number;
}

/** Whether a stored document's `expireAt` has passed (the TTL policy deletes within a day, not at once). */
export const expired = (expireAt: { toMillis?: () => number } | Date | undefined) => {
  const ms = expireAt instanceof Date ? expireAt.getTime() : expireAt?.toMillis?.();
  return ms !== undefined && ms <= Date.now();
};

/** The host a client is known by: its metadata document's (a URL client id), else the id itself. */
export function clientHost(clientId: string): string {
  return URL.parse(clientId)?.host || clientId;
}

export class OAuthGrants {
  /** Each grant as last read (null: gone), by id. */
  private readonly grants = new TtlCache<string, GrantPayload | null>(
    CACHED_GRANTS,
    () => config().access.cacheMs,
  );

  constructor(private readonly db: Firestore) {}

  private grantRef(grantId: string) {
    return this.db.collection(OAUTH_COLLECTION).doc(oauthDocId("Grant", grantId));
  }

  /** The person's allowed clients, newest first. */
  async list(uid: string): Promise<ConnectedClient[]> {
    const snap = await this.db
      .collection(OAUTH_COLLECTION)
      .where("model", "==", "Grant")
      .where("payload.accountId", "==", uid)
      .get();
    const grants = snap.docs
      .filter((d) => !expired(d.get("expireAt")))
      .map((d) => ({ id: String(d.id.slice("Grant:".length)), payload: d.get("payload") as GrantPayload }));
    const names = await this.clientNames(grants.map((g) => g.payload.clientId ?? ""));
    return grants
      .map(({ id, payload }) => {
        const clientId = payload.clientId ?? "";
        return {
          id: decodeURIComponent(id),
          clientId,
          clientHost: clientHost(clientId),
          clientName: names.get(clientId) ?? null,
          allowedAt: payload.iat ? new Date(payload.iat * 1000).toISOString() : null,
          expiresAt: payload.exp ? new Date(payload.exp * 1000).toISOString() : null,
        };
      })
      .sort((a, b) => String(b.allowedAt).localeCompare(String(a.allowedAt)));
  }

  /** Client names as their registrations or metadata documents gave them, when stored. */
  private async clientNames(clientIds: string[]): Promise<Map<string, string>> {
    const ids = [...new Set(clientIds.filter(Boolean))];
    if (!ids.length) return new Map();
    const refs = ids.map((id) => this.db.collection(OAUTH_COLLECTION).doc(oauthDocId("Client", id)));
    const snaps = await this.db.getAll(...refs);
    const names = new Map<string, string>();
    snaps.forEach((s, i) => {
      const name = s.get("payload.client_name") as unknown;
      if (typeof name === "string" && name) names.set(ids[i], name);
    });
    return names;
  }

  /**
   * Revokes the person's grant: the grant and everything issued under it (refresh tokens, codes,
   * sessions' consent) deleted. False when it is not theirs or does not exist (nothing deleted).
   */
  async revoke(uid: string, grantId: string): Promise<boolean> {
    const grant = await this.grantRef(grantId).get();
    if (!grant.exists || (grant.get("payload.accountId") as unknown) !== uid) return false;
    const issued = await this.db.collection(OAUTH_COLLECTION).where("grantId", "==", grantId).get();
    const batch = this.db.batch();
    for (const d of issued.docs) batch.delete(d.ref);
    batch.delete(grant.ref);
    await batch.commit();
    this.grants.set(grantId, null);
    return true;
  }

  /** Whether an access token's grant still stands for this person and client (cached per instance). */
  async isLive(grantId: string, uid: string, clientId: string): Promise<boolean> {
    const grant = await this.grants.get(grantId, async () => {
      const snap = await this.grantRef(grantId).get();
      return snap.exists && !expired(snap.get("expireAt")) ? (snap.get("payload") as GrantPayload) : null;
    });
    return grant?.accountId === uid && grant.clientId === clientId;
  }
}

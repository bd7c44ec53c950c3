/**
 * Refresh tokens at rest: `bigquery_credentials/{uid}` in Firestore, server-only (firestore.rules
 * denies every client), the token encrypted with AES-256-GCM under a key from Secret Manager
 * (`crypto.ts`). The document holds no access token and nothing a client could use without the key.
 */
import type { Firestore } from "firebase-admin/firestore";
import type { Sealed, TokenCrypto } from "./crypto";

const CREDENTIALS_COLLECTION = "bigquery_credentials";

interface CredentialDoc {
  /** The Google account that consented (the person's own email). */
  email: string;
  refreshToken: Sealed;
  connectedAt: string;
  updatedAt: string;
}

export class CredentialStore {
  constructor(
    private readonly db: Firestore,
    private readonly crypto: TokenCrypto,
  ) {}

  private doc(uid: string) {
    return this.db.collection(CREDENTIALS_COLLECTION).doc(uid);
  }

  /** Stores (or replaces) the person's refresh token. */
  async put(uid: string, email: string, refreshToken: string, replacing = false): Promise<void> {
    const now = new Date().toISOString();
    const sealed = this.crypto.seal(refreshToken, uid);
    if (replacing) await this.doc(uid).update({ refreshToken: sealed, updatedAt: now });
    else
      await this.doc(uid).set({
        email,
        refreshToken: sealed,
        connectedAt: now,
        updatedAt: now,
      } satisfies CredentialDoc);
  }

  /** The person's refresh token, or undefined when they have not connected (or it cannot be opened). */
  async refreshToken(uid: string): Promise<string | undefined> {
    const snap = await this.doc(uid).get();
    const doc = snap.data() as CredentialDoc | undefined;
    if (!doc?.refreshToken) return undefined;
    try {
      return this.crypto.open(doc.refreshToken, uid);
    } catch {
      return undefined; // another key (rotated) or tampered: as good as no consent
    }
  }

  /** Whether the person has connected, and as whom. */
  async status(uid: string): Promise<{ connected: boolean; email?: string }> {
    const doc = (await this.doc(uid).get()).data() as CredentialDoc | undefined;
    return doc ? { connected: true, email: doc.email } : { connected: false };
  }

  async delete(uid: string): Promise<void> {
    await this.doc(uid).delete();
  }
}

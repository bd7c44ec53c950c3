/**
 * Personal access tokens (`access_tokens/{id}`, server-only): how an IDE, a CLI or a script acts
 * as its person on `/mcp`. A token is `qry_<id>_<secret>`: the id names its document (so revoking
 * and looking it up are one read, no query), the secret is 32 random bytes that are never stored —
 * only the SHA-256 of the whole token is, compared in constant time. A high-entropy secret needs no
 * slow hash: nobody can guess it from its digest. The token carries no grant of its own: the person
 * behind it still goes through the access gate on every request, so a removed member's tokens stop
 * with the members cache.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { Firestore } from "firebase-admin/firestore";
import { QuarryError } from "../errors";
import type { NewToken, TokenInfo } from "../contract/tokens";

/** What every token starts with, so a leaked one is recognisable (secret scanners, logs). */
const TOKEN_PREFIX = "qry_";
/** Tokens one person may hold at once. */
const MAX_TOKENS_PER_PERSON = 20;
/** `lastUsedAt` is written at most this often per token (not one write per request). */
const LAST_USED_EVERY_MS = 60_000;

const TOKEN_SHAPE = /^qry_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;

/** A token as stored: who it acts for and when it stops. Never the secret. */
export interface TokenDoc {
  uid: string;
  name: string;
  /** SHA-256 (hex) of the whole token. */
  hash: string;
  createdAt: Date;
  expiresAt: Date;
  lastUsedAt?: Date;
}

/** A new token: its id and the whole token, to be shown once. */
export function newToken(): { id: string; token: string } {
  const id = randomBytes(8).toString("hex");
  return { id, token: `${TOKEN_PREFIX}${id}_${randomBytes(32).toString("base64url")}` };
}

/** The token's id when it has the shape of one of ours; undefined otherwise. */
export function tokenId(token: string): string | undefined {
  return TOKEN_SHAPE.exec(token)?.[1];
}

/** Whether a bearer credential is a personal access token (and not a Firebase ID token). */
export function isPersonalToken(bearer: string): boolean {
  return bearer.startsWith(TOKEN_PREFIX);
}

export function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/** Whether `token` is the one `doc` was made for, in constant time. */
export function matches(doc: Pick<TokenDoc, "hash">, token: string): boolean {
  const a = Buffer.from(hashToken(token), "hex");
  const b = Buffer.from(doc.hash, "hex");
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The 401 every bad token gets: the header says how to authenticate (RFC 6750), the words what to do. */
export function tokenRefused(why: string): QuarryError {
  return new QuarryError("unauthorized:token", why, {
    headers: { "WWW-Authenticate": `Bearer realm="quarry", error="invalid_token"` },
  });
}

export class TokenStore {
  constructor(
    private readonly db: Firestore,
    private readonly timestamp: typeof import("firebase-admin/firestore").Timestamp,
    private readonly collection = "access_tokens",
  ) {}

  /** Makes a token for `uid`; the whole token is returned once and never again. */
  async create(uid: string, name: string, days: number, now = Date.now()): Promise<NewToken> {
    const { id, token } = newToken();
    const expiresAt = now + days * 86_400_000;
    const tokens = this.db.collection(this.collection);
    // Counted and created in one transaction, so requests at once cannot pass the limit; expired
    // tokens (kept a while for their TTL) do not count.
    await this.db.runTransaction(async (tx) => {
      const held = await tx.get(tokens.where("uid", "==", uid));
      const live = held.docs.filter((d) => fromStored(d.data()).expiresAt.getTime() > now).length;
      if (live >= MAX_TOKENS_PER_PERSON) {
        throw new QuarryError(
          "conflict:token",
          `You already have ${MAX_TOKENS_PER_PERSON} tokens: revoke one you no longer use (DELETE /me/tokens/:id) first.`,
        );
      }
      tx.create(tokens.doc(id), {
        uid,
        name,
        hash: hashToken(token),
        createdAt: this.timestamp.fromMillis(now),
        expiresAt: this.timestamp.fromMillis(expiresAt),
        // A Firestore TTL policy on `expireAt` deletes tokens a while after they stopped working.
        expireAt: this.timestamp.fromMillis(expiresAt + 30 * 86_400_000),
      });
    });
    return { token, ...info(id, { name, createdAt: new Date(now), expiresAt: new Date(expiresAt) }) };
  }

  /** The person's tokens, newest first, without their secrets. */
  async list(uid: string): Promise<TokenInfo[]> {
    const snap = await this.db.collection(this.collection).where("uid", "==", uid).get();
    return snap.docs
      .map((d) => info(d.id, fromStored(d.data())))
      .sort((a, b) => b.created_at.localeCompare(a.created_at));
  }

  /** Revokes one of the person's tokens; false when they hold none by that id. */
  async revoke(uid: string, id: string): Promise<boolean> {
    return this.db.runTransaction(async (tx) => {
      const ref = this.db.collection(this.collection).doc(id);
      const snap = await tx.get(ref);
      if (!snap.exists || snap.get("uid") !== uid) return false;
      tx.delete(ref);
      return true;
    });
  }

  /** Whose token this is, or the 401 that says why it is refused. */
  async verify(token: string, now = Date.now()): Promise<{ uid: string; tokenId: string; createdAt: Date }> {
    const id = tokenId(token);
    if (!id) throw tokenRefused("This is not a Quarry token: create one with POST /me/tokens (docs/mcp.md).");
    const snap = await this.db.collection(this.collection).doc(id).get();
    const stored = snap.exists ? fromStored(snap.data()!) : undefined;
    if (!stored || !matches(stored, token)) {
      throw tokenRefused("This token is not valid: it was revoked or never existed. Create a new one.");
    }
    if (stored.expiresAt.getTime() <= now) {
      throw tokenRefused(
        `This token expired on ${stored.expiresAt.toISOString()}. Create a new one (POST /me/tokens).`,
      );
    }
    if (!stored.lastUsedAt || now - stored.lastUsedAt.getTime() > LAST_USED_EVERY_MS) {
      // Written beside the request: when a token was last used is a hint, never worth a failure.
      snap.ref.update({ lastUsedAt: this.timestamp.fromMillis(now) }).catch(() => {});
    }
    return { uid: stored.uid, tokenId: id, createdAt: stored.createdAt };
  }
}

type Stamp = { toDate(): Date };

function fromStored(d: Record<string, unknown>): TokenDoc {
  return {
    uid: String(d.uid),
    name: String(d.name),
    hash: String(d.hash),
    createdAt: (d.createdAt as Stamp).toDate(),
    expiresAt: (d.expiresAt as Stamp).toDate(),
    ...(d.lastUsedAt ? { lastUsedAt: (d.lastUsedAt as Stamp).toDate() } : {}),
  };
}

function info(id: string, d: Pick<TokenDoc, "name" | "createdAt" | "expiresAt" | "lastUsedAt">): TokenInfo {
  return {
    id,
    name: d.name,
    created_at: d.createdAt.toISOString(),
    expires_at: d.expiresAt.toISOString(),
    last_used_at: d.lastUsedAt?.toISOString() ?? null,
  };
}

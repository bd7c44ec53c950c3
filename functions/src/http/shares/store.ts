/**
 * Share links in Firestore (`shares/{id}`, server-only: firestore.rules denies every client): whose
 * conversation, which thread, when made, when revoked. The id is the link's secret — 144 random
 * bits — so it cannot be guessed; a revoked link keeps its document (the audit log names it).
 */
import { randomBytes } from "node:crypto";
import type { Firestore, Timestamp } from "firebase-admin/firestore";
import { SHARE_ID, sharePath, type ShareLink } from "../../contract/shares";

export interface ShareDoc {
  /** The uid of the thread's owner, who made the link. */
  owner: string;
  ownerEmail: string | null;
  threadId: string;
  createdAt: Timestamp;
  revokedAt: Timestamp | null;
}

/** 18 random bytes as base64url: 24 characters, what `SHARE_ID` accepts. */
const newShareId = () => randomBytes(18).toString("base64url");

export class ShareStore {
  constructor(
    private readonly db: Firestore,
    private readonly timestamp: typeof import("firebase-admin/firestore").Timestamp,
    private readonly collection = "shares",
  ) {}

  /** A new link to `threadId` (the caller has checked that `owner` owns it). */
  async create(owner: string, ownerEmail: string | null, threadId: string): Promise<ShareLink> {
    const id = newShareId();
    const doc: ShareDoc = { owner, ownerEmail, threadId, createdAt: this.timestamp.now(), revokedAt: null };
    await this.db.collection(this.collection).doc(id).create(doc);
    return linkOf(id, doc);
  }

  /** The thread's links its owner has not revoked, newest first. */
  async list(owner: string, threadId: string): Promise<ShareLink[]> {
    const snap = await this.db
      .collection(this.collection)
      .where("threadId", "==", threadId)
      .where("owner", "==", owner)
      .get();
    return snap.docs
      .map((d) => ({ id: d.id, doc: d.data() as ShareDoc }))
      .filter(({ doc }) => !doc.revokedAt)
      .sort((a, b) => b.doc.createdAt.toMillis() - a.doc.createdAt.toMillis())
      .map(({ id, doc }) => linkOf(id, doc));
  }

  /** The link `id` if it exists and is not revoked (a malformed id is simply unknown). */
  async active(id: string): Promise<ShareDoc | undefined> {
    if (!SHARE_ID.test(id)) return undefined;
    const doc = (await this.db.collection(this.collection).doc(id).get()).data() as ShareDoc | undefined;
    return doc && !doc.revokedAt ? doc : undefined;
  }

  /**
   * Revokes the owner's link `id` to `threadId`; false (nothing written) when there is no such
   * active link of theirs on that thread.
   */
  async revoke(owner: string, threadId: string, id: string): Promise<boolean> {
    if (!SHARE_ID.test(id)) return false;
    const ref = this.db.collection(this.collection).doc(id);
    return this.db.runTransaction(async (tx) => {
      const doc = (await tx.get(ref)).data() as ShareDoc | undefined;
      if (!doc || doc.owner !== owner || doc.threadId !== threadId || doc.revokedAt) return false;
      tx.update(ref, { revokedAt: this.timestamp.now() });
      return true;
    });
  }
}

function linkOf(id: string, doc: ShareDoc): ShareLink {
  return { id, url: sharePath(id), createdAt: doc.createdAt.toDate().toISOString() };
}

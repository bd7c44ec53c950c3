/**
 * oidc-provider's storage in Firestore: every model (sessions, interactions, grants, codes,
 * refresh tokens, registered clients) in the server-only `oauth` collection, one document per
 * `<model>:<id>`, with `expireAt` for the collection's TTL policy. Access tokens are JWTs and are
 * not stored. Denied to clients by `firestore.rules`.
 */
import type { Firestore } from "firebase-admin/firestore";
import { firestore } from "../../services";
import { OAUTH_COLLECTION, expired, oauthDocId } from "../../access/oauth-grants";

type Payload = Record<string, unknown> & {
  grantId?: string;
  uid?: string;
  userCode?: string;
  consumed?: unknown;
};

interface StoredDoc {
  model: string;
  payload: Payload;
  grantId?: string;
  uid?: string;
  userCode?: string;
  expireAt?: Date;
}

/** The adapter class oidc-provider instantiates once per model name. */
export class FirestoreAdapter {
  constructor(private readonly model: string) {}

  private async doc(id: string) {
    const db: Firestore = await firestore();
    return db.collection(OAUTH_COLLECTION).doc(oauthDocId(this.model, id));
  }

  async upsert(id: string, payload: Payload, expiresIn?: number): Promise<void> {
    const stored: StoredDoc = {
      model: this.model,
      payload,
      ...(payload.grantId ? { grantId: payload.grantId } : {}),
      ...(payload.uid ? { uid: payload.uid } : {}),
      ...(payload.userCode ? { userCode: payload.userCode } : {}),
      ...(expiresIn ? { expireAt: new Date(Date.now() + expiresIn * 1000) } : {}),
    };
    await (await this.doc(id)).set(stored);
  }

  async find(id: string): Promise<Payload | undefined> {
    const snap = await (await this.doc(id)).get();
    return live(snap.data() as StoredDoc | undefined);
  }

  async findByUid(uid: string): Promise<Payload | undefined> {
    return this.findBy("uid", uid);
  }

  async findByUserCode(userCode: string): Promise<Payload | undefined> {
    return this.findBy("userCode", userCode);
  }

  /** Marks a code or refresh token used, once: a second use at the same time fails instead of passing. */
  async consume(id: string): Promise<void> {
    const ref = await this.doc(id);
    await ref.firestore.runTransaction(async (tx) => {
      const snap = await tx.get(ref);
      if ((snap.data() as StoredDoc | undefined)?.payload.consumed) {
        throw new Error(`${this.model} ${id} was already used`);
      }
      tx.update(ref, { "payload.consumed": Math.floor(Date.now() / 1000) });
    });
  }

  async destroy(id: string): Promise<void> {
    await (await this.doc(id)).delete();
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    const db = await firestore();
    const docs = await db.collection(OAUTH_COLLECTION).where("grantId", "==", grantId).get();
    await Promise.all(docs.docs.map((d) => d.ref.delete()));
  }

  private async findBy(field: "uid" | "userCode", value: string): Promise<Payload | undefined> {
    const db = await firestore();
    const q = await db
      .collection(OAUTH_COLLECTION)
      .where(field, "==", value)
      .where("model", "==", this.model)
      .limit(1)
      .get();
    return live(q.docs[0]?.data() as StoredDoc | undefined);
  }
}

/** A stored payload unless it has expired (the TTL policy deletes within a day, not at once). */
function live(doc: StoredDoc | undefined): Payload | undefined {
  return !doc || expired(doc.expireAt) ? undefined : doc.payload;
}

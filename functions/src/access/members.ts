/**
 * The members list in Firestore (`members/{email}`, server-only): who an admin added, with which
 * role and which quota overrides. Read through a short per-instance cache: a removed member or a
 * changed role takes effect on every instance within the cache's lifetime (at most 60 s, the
 * setting is refused above that) — on the instance that made the change, at once.
 */
import type { Firestore, Transaction } from "firebase-admin/firestore";
import type { QuotaLimits, Role } from "../contract/access";
import type { MemberRecord } from "./policy";
import { TtlCache } from "../lru";

/** A members-list entry as stored. */
export interface MemberDoc extends MemberRecord {
  /** Per-person quota overrides; a missing one is the deployment's default. */
  quotas?: Partial<QuotaLimits>;
  /** The groups whose datasets this person may see (`groups/{name}`); none = no data once any group exists. */
  groups?: string[];
  addedBy: string;
  addedAt: string;
  updatedAt: string;
}

/** The document id of an email: lower case (addresses compare case-insensitively). */
function memberId(email: string): string {
  return email.trim().toLowerCase();
}

/** People whose entry one instance remembers (a refused address too), least recently asked dropped first. */
const CACHED_PEOPLE = 10_000;

export class MemberStore {
  private readonly cache: TtlCache<string, MemberDoc | undefined>;

  constructor(
    private readonly db: Firestore,
    private readonly collection: string,
    cacheMs: number,
  ) {
    this.cache = new TtlCache(CACHED_PEOPLE, () => cacheMs);
  }

  /** The member's entry, from the cache when it is fresh. */
  get(email: string): Promise<MemberDoc | undefined> {
    return this.cache.get(memberId(email), () => this.read(email));
  }

  /** The member's entry as stored now (and cached). */
  fresh(email: string): Promise<MemberDoc | undefined> {
    return this.cache.get(memberId(email), () => this.read(email), { fresh: true });
  }

  private async read(email: string): Promise<MemberDoc | undefined> {
    const snap = await this.db.collection(this.collection).doc(memberId(email)).get();
    return snap.exists ? (snap.data() as MemberDoc) : undefined;
  }

  async list(): Promise<MemberDoc[]> {
    const snap = await this.db.collection(this.collection).orderBy("email").limit(1000).get();
    return snap.docs.map((d) => d.data() as MemberDoc);
  }

  /**
   * Adds or changes a member; returns the entry as stored. A field left out keeps its value;
   * `quotas: null` clears the overrides, `groups: []` takes the member out of every group.
   */
  async put(
    email: string,
    change: { role?: Role; quotas?: Partial<QuotaLimits> | null; groups?: string[] },
    by: string,
  ): Promise<MemberDoc> {
    const id = memberId(email);
    const ref = this.db.collection(this.collection).doc(id);
    const now = new Date().toISOString();
    const doc = await this.db.runTransaction(async (tx) => {
      const before = (await tx.get(ref)).data() as MemberDoc | undefined;
      const next: MemberDoc = {
        email: id,
        role: change.role ?? before?.role ?? "member",
        addedBy: before?.addedBy ?? by,
        addedAt: before?.addedAt ?? now,
        updatedAt: now,
      };
      const quotas = change.quotas === null ? undefined : (change.quotas ?? before?.quotas);
      if (quotas && Object.keys(quotas).length) next.quotas = quotas;
      const groups = change.groups ?? before?.groups;
      if (groups?.length) next.groups = groups;
      tx.set(ref, next);
      return next;
    });
    this.cache.delete(id);
    return doc;
  }

  /**
   * In `tx` (reads, then writes): takes `group` out of every entry that names it; the emails of the
   * entries changed. Call `forget` with them once the transaction has committed.
   */
  async leaveGroup(tx: Transaction, group: string): Promise<string[]> {
    const snap = await tx.get(this.db.collection(this.collection).where("groups", "array-contains", group));
    for (const d of snap.docs) {
      const groups = ((d.data() as MemberDoc).groups ?? []).filter((g) => g !== group);
      tx.update(d.ref, { groups, updatedAt: new Date().toISOString() });
    }
    return snap.docs.map((d) => (d.data() as MemberDoc).email).sort();
  }

  /** Drops these entries from this instance's cache (after a change made outside `put`). */
  forget(emails: readonly string[]): void {
    for (const e of emails) this.cache.delete(memberId(e));
  }

  /** Removes a member; false when there was none. */
  async remove(email: string): Promise<boolean> {
    const id = memberId(email);
    const ref = this.db.collection(this.collection).doc(id);
    const existed = (await ref.get()).exists;
    if (existed) await ref.delete();
    this.cache.delete(id);
    return existed;
  }
}

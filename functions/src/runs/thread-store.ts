/**
 * Thread metadata in Firestore (`threads/{threadId}`, shaped in thread-doc.ts): create, read,
 * rename, search and delete a person's threads. The run lease and the run documents are the run
 * store's (runs/run-store.ts).
 */
import type { DocumentReference, Firestore, WriteBatch } from "firebase-admin/firestore";
import { MAX_TITLE_CHARS } from "../contract/limits";
import type { ThreadStatus } from "../contract/protocol";
import { QuarryError } from "../errors";
import { isAlreadyExists } from "../storage";
import { ZERO_TOTALS, leaseHolder, ownedBy, type ThreadDoc } from "./thread-doc";
import { coveredBy, scopeFromKey, type Scope } from "../tools/scope";

export class ThreadStore {
  constructor(
    private readonly db: Firestore,
    private readonly collection: string,
    private readonly fieldValue: typeof import("firebase-admin/firestore").FieldValue,
    private readonly timestamp: typeof import("firebase-admin/firestore").Timestamp,
  ) {}

  ref(id: string): DocumentReference {
    return this.db.collection(this.collection).doc(id);
  }

  /** The caller's thread, or 404. */
  async get(id: string, uid: string): Promise<ThreadDoc> {
    return ownedBy(id, await this.ref(id).get(), uid);
  }

  /**
   * Creates the thread's document; `commit` (when given) commits it together with writes of its
   * own — the thread's empty start checkpoint (see `rootCommit`).
   */
  async create(
    id: string,
    uid: string,
    metadata: Record<string, unknown>,
    ifExists: "raise" | "do_nothing",
    commit?: (along: (batch: WriteBatch) => void) => Promise<unknown>,
  ) {
    const now = this.timestamp.now();
    const title = typeof metadata.title === "string" ? metadata.title.slice(0, MAX_TITLE_CHARS) : "";
    const { title: _t, owner: _o, ...rest } = metadata;
    const doc: ThreadDoc = {
      owner: uid,
      title,
      status: "idle",
      metadata: rest,
      createdAt: now,
      updatedAt: now,
      usage: { ...ZERO_TOTALS },
      run: null,
    };
    try {
      if (commit) await commit((batch) => batch.create(this.ref(id), doc));
      else await this.ref(id).create(doc);
      return doc;
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      const existing = await this.ref(id).get();
      const found = existing.data() as ThreadDoc | undefined;
      if (ifExists === "do_nothing" && found?.owner === uid) return found;
      // Never reveal that someone else's thread id exists.
      throw new QuarryError("conflict:thread", `Thread ${id} already exists: choose another thread_id.`);
    }
  }

  async patchMetadata(id: string, uid: string, metadata: Record<string, unknown>): Promise<ThreadDoc> {
    return this.db.runTransaction(async (tx) => {
      const doc = ownedBy(id, await tx.get(this.ref(id)), uid);
      const { title, owner: _o, ...rest } = metadata;
      const next: ThreadDoc = {
        ...doc,
        title: typeof title === "string" ? title.slice(0, MAX_TITLE_CHARS) : doc.title,
        metadata: { ...doc.metadata, ...rest },
        updatedAt: this.timestamp.now(),
      };
      tx.set(this.ref(id), next);
      return next;
    });
  }

  /** The caller's threads, newest first (needs the composite index owner + updatedAt). */
  async search(
    uid: string,
    opts: { limit: number; offset: number; status?: ThreadStatus; order: "asc" | "desc" },
  ) {
    let q = this.db.collection(this.collection).where("owner", "==", uid);
    if (opts.status) q = q.where("status", "==", opts.status);
    const snap = await q.orderBy("updatedAt", opts.order).offset(opts.offset).limit(opts.limit).get();
    return snap.docs.map((d) => ({ id: d.id, doc: d.data() as ThreadDoc }));
  }

  /**
   * The team's most asked questions: titles of the newest `sample` threads (a thread's title is its
   * first question unless renamed) that at least `minPeople` different people asked, most asked
   * first. One person's question is never shown to others: it must be the team's.
   */
  async popularQuestions(opts: {
    sample: number;
    minPeople: number;
    limit: number;
    /** The asking person's scope: a question asked in a scope they do not wholly see is not theirs to see. */
    scope: Scope;
  }): Promise<string[]> {
    const snap = await this.db
      .collection(this.collection)
      .orderBy("updatedAt", "desc")
      .limit(opts.sample)
      .get();
    // Questions count as the same when they differ only in case and trailing punctuation; the
    // wording most people used is shown.
    const askers = new Map<string, { people: Set<string>; wordings: Map<string, number> }>();
    for (const d of snap.docs) {
      const { title, owner, scopeKey } = d.data() as Partial<ThreadDoc>;
      if (typeof title !== "string" || !title.trim() || typeof owner !== "string") continue;
      if (!coveredBy(scopeFromKey(scopeKey), opts.scope)) continue;
      const text = title.trim();
      const key = text.toLowerCase().replace(/[?.!\s]+$/, "");
      const entry = askers.get(key) ?? { people: new Set<string>(), wordings: new Map<string, number>() };
      entry.people.add(owner);
      entry.wordings.set(text, (entry.wordings.get(text) ?? 0) + 1);
      askers.set(key, entry);
    }
    return [...askers.values()]
      .filter((e) => e.people.size >= opts.minPeople)
      .sort((a, b) => b.people.size - a.people.size)
      .slice(0, opts.limit)
      .map((e) => [...e.wordings].sort((a, b) => b[1] - a[1])[0][0]);
  }

  /**
   * Starts deleting the caller's thread: no run may start from now on, and a running one is asked to
   * stop. Returns that run's id, if any, for `RunStore.waitForRelease`.
   */
  async beginDelete(id: string, uid: string): Promise<string | undefined> {
    return this.db.runTransaction(async (tx) => {
      const doc = ownedBy(id, await tx.get(this.ref(id)), uid);
      const running = leaseHolder(doc);
      tx.update(this.ref(id), { deleting: true, ...(running ? { "run.cancel": true } : {}) });
      return running;
    });
  }

  /** Deletes the thread's metadata, its runs' event logs (`runs/{runId}/log`) and its files' records. */
  async delete(id: string): Promise<void> {
    await this.db.recursiveDelete(this.ref(id).collection("runs"));
    await this.db.recursiveDelete(this.ref(id).collection("files"));
    await this.ref(id).delete();
  }
}

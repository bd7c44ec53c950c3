/**
 * Thread metadata in Firestore (`threads/{threadId}`, shaped in thread-doc.ts): create, read,
 * rename, search and delete a person's threads, and the run lease's Firestore operations (claim
 * with the first checkpoint, renew, release, cancel from any instance, wait for release).
 */
import type { DocumentReference, DocumentSnapshot, Firestore, WriteBatch } from "firebase-admin/firestore";
import { MAX_TITLE_CHARS, autoTitle } from "../contract/limits";
import type { ThreadStatus } from "../contract/protocol";
import { QuarryError } from "../errors";
import { StorageTimeout, isAlreadyExists, isStale, within } from "../storage";
import {
  ZERO_TOTALS,
  leaseHolder,
  notFound,
  ownedBy,
  threadValues,
  type RunClaim,
  type ThreadDoc,
  type ThreadValues,
  type UsageTotals,
} from "./thread-doc";

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

  /** A run's document (`threads/{id}/runs/{runId}`): a background run's status; its event log below it. */
  runRef(id: string, runId: string): DocumentReference {
    return this.ref(id).collection("runs").doc(runId);
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
  async popularQuestions(opts: { sample: number; minPeople: number; limit: number }): Promise<string[]> {
    const snap = await this.db
      .collection(this.collection)
      .orderBy("updatedAt", "desc")
      .limit(opts.sample)
      .get();
    // Questions count as the same when they differ only in case and trailing punctuation; the
    // wording most people used is shown.
    const askers = new Map<string, { people: Set<string>; wordings: Map<string, number> }>();
    for (const d of snap.docs) {
      const { title, owner } = d.data() as Partial<ThreadDoc>;
      if (typeof title !== "string" || !title.trim() || typeof owner !== "string") continue;
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
   * Checks a run may start on the thread as read in `snap` (404 not the caller's, 409 another run
   * holds an unexpired lease) and returns the update that takes the lease (title from the first
   * question).
   */
  leaseUpdate(id: string, snap: DocumentSnapshot, uid: string, run: RunClaim) {
    const doc = ownedBy(id, snap, uid);
    if (doc.deleting) throw notFound(id);
    const now = Date.now();
    if (doc.run && doc.run.expiresAt.toMillis() > now) {
      throw new QuarryError(
        "conflict:run",
        `Thread ${id} already has a run in progress (${doc.run.runId}). Wait for it to finish or cancel it.`,
      );
    }
    return {
      status: "busy" as const,
      updatedAt: this.timestamp.fromMillis(now),
      run: {
        runId: run.runId,
        expiresAt: this.timestamp.fromMillis(now + run.leaseMs),
        cancel: false,
        ...(run.from ? { from: run.from } : {}),
        ...(run.strategy ? { strategy: run.strategy } : {}),
      },
      lastRunId: run.runId,
      ...(doc.title ? {} : { title: autoTitle(run.question) }),
      // A new thread carries its question from the commit that takes the lease (as the Agent
      // Server's values do from the first checkpoint): clients that label threads by their values
      // show the question while the first answer runs. Replaced by the full values at release.
      ...(doc.values || !run.question.trim()
        ? {}
        : {
            values: threadValues([
              { type: "human", ...(run.questionId ? { id: run.questionId } : {}), content: run.question },
            ]),
          }),
    };
  }

  /**
   * Takes the run lease in the commit that `commit` makes (the run's first checkpoint), guarded by
   * the update time of the thread document as read in `snap` — one commit, no transaction. If the
   * document changed since, it is read again: a lease taken meanwhile gives this run the 409, and so
   * does a whole other run in between (this run's checkpoint would hang off a stale one); an
   * unrelated change (a rename) is retried, and a commit that landed although the client saw it fail
   * (a retried request) counts as taken.
   */
  async claimLease(
    id: string,
    uid: string,
    run: RunClaim,
    snap: DocumentSnapshot,
    commit: (along: (batch: WriteBatch) => void) => Promise<unknown>,
  ): Promise<void> {
    const firstRead = snap.data() as ThreadDoc | undefined;
    let current = snap;
    for (let attempt = 0; ; attempt++) {
      const update = this.leaseUpdate(id, current, uid, run);
      const readAt = current.updateTime;
      try {
        await commit((batch) => batch.update(this.ref(id), update, { lastUpdateTime: readAt }));
        return;
      } catch (err) {
        if (!isStale(err) || attempt >= 4) throw err;
        current = await this.ref(id).get();
        const now = current.data() as ThreadDoc | undefined;
        if (now?.run?.runId === run.runId) return;
        if (now && now.lastRunId !== firstRead?.lastRunId) {
          throw new QuarryError(
            "conflict:run",
            `Thread ${id} had another run (${now.lastRunId}) start while this one was starting: send it again.`,
          );
        }
      }
    }
  }

  /** Commits a batch holding only what `along` adds to it. */
  async commitAlone(along: (batch: WriteBatch) => void): Promise<void> {
    const batch = this.db.batch();
    along(batch);
    await batch.commit();
  }

  /** Extends our lease; false when it is no longer ours (expired and taken). */
  async renewLease(id: string, runId: string, leaseMs: number): Promise<boolean> {
    return this.db.runTransaction(async (tx) => {
      const snap = await tx.get(this.ref(id));
      const run = (snap.data() as ThreadDoc | undefined)?.run;
      if (!run || run.runId !== runId) return false;
      tx.update(this.ref(id), { "run.expiresAt": this.timestamp.fromMillis(Date.now() + leaseMs) });
      return true;
    });
  }

  /** Releases our lease (only ours) and records the run's outcome and usage. */
  async releaseLease(
    id: string,
    runId: string,
    status: ThreadStatus,
    usage?: Partial<UsageTotals>,
    values?: ThreadValues,
  ): Promise<void> {
    await this.db.runTransaction(async (tx) => {
      const snap = await tx.get(this.ref(id));
      const doc = snap.data() as ThreadDoc | undefined;
      if (!doc) return;
      const update: Record<string, unknown> = { updatedAt: this.timestamp.now() };
      if (doc.run?.runId === runId) {
        update.run = null;
        update.status = status;
        if (values) update.values = values;
      }
      if (usage) {
        for (const [k, v] of Object.entries(usage)) {
          if (typeof v === "number" && v !== 0) update[`usage.${k}`] = this.fieldValue.increment(v);
        }
      }
      tx.update(this.ref(id), update);
    });
  }

  /** Asks the run to stop, from any instance. False when that run is not the thread's current run. */
  async requestCancel(id: string, uid: string, runId: string): Promise<boolean> {
    return this.db.runTransaction(async (tx) => {
      const doc = ownedBy(id, await tx.get(this.ref(id)), uid);
      if (doc.run?.runId !== runId) return false;
      tx.update(this.ref(id), { "run.cancel": true });
      return true;
    });
  }

  /** Watches the thread for a cancel flag on our run; returns the unsubscribe function. */
  watchCancel(id: string, runId: string, onCancel: () => void): () => void {
    return this.ref(id).onSnapshot(
      (snap) => {
        const run = (snap.data() as ThreadDoc | undefined)?.run;
        if (run?.runId === runId && run.cancel) onCancel();
      },
      () => {
        /* a broken listener must not crash the run; the lease renewal still bounds it */
      },
    );
  }

  /**
   * Starts deleting the caller's thread: no run may start from now on, and a running one is asked to
   * stop. Returns that run's id, if any, for {@link waitForRelease}.
   */
  async beginDelete(id: string, uid: string): Promise<string | undefined> {
    return this.db.runTransaction(async (tx) => {
      const doc = ownedBy(id, await tx.get(this.ref(id)), uid);
      const running = leaseHolder(doc);
      tx.update(this.ref(id), { deleting: true, ...(running ? { "run.cancel": true } : {}) });
      return running;
    });
  }

  /**
   * Waits until the run lets go of the thread (it writes its last checkpoints first) or its lease
   * runs out, so nothing it writes outlives a delete. Bounded by the lease as first read.
   */
  async waitForRelease(id: string, runId: string, leaseMs: number): Promise<void> {
    let stop = () => {};
    let expiry: NodeJS.Timeout | undefined;
    const released = new Promise<void>((resolve, reject) => {
      stop = this.ref(id).onSnapshot((snap) => {
        const run = (snap.data() as ThreadDoc | undefined)?.run;
        clearTimeout(expiry);
        if (run?.runId !== runId) return resolve();
        // A lease that is not renewed runs out without a change to listen for: wake at its end.
        expiry = setTimeout(resolve, Math.max(run.expiresAt.toMillis() - Date.now(), 0));
      }, reject);
    });
    try {
      // Bounded like the lease as first read; a run renewing past it is given up on, as before.
      await within(leaseMs, released, "waiting for the run to stop").catch((err: unknown) => {
        if (!(err instanceof StorageTimeout)) throw err;
      });
    } finally {
      clearTimeout(expiry);
      stop();
    }
  }

  /** Deletes the thread's metadata and its runs' event logs (`runs/{runId}/log`). */
  async delete(id: string): Promise<void> {
    await this.db.recursiveDelete(this.ref(id).collection("runs"));
    await this.ref(id).delete();
  }
}

/**
 * The run's records in Firestore, in one place: the run lease on the thread document (taken with
 * the run's first checkpoint, renewed, watched for a cancel, released with the outcome; waited on
 * by a delete or an interrupting run) and the run documents below the thread
 * (`threads/{threadId}/runs/{runId}`: a background run's status, every run's event log below it),
 * with the reads the run routes make of them. Threads themselves are the thread store's.
 */
import type { DocumentReference, DocumentSnapshot, Firestore, WriteBatch } from "firebase-admin/firestore";
import { autoTitle } from "../contract/limits";
import type { MultitaskStrategy, RunOutcome, ThreadStatus } from "../contract/protocol";
import { QuarryError } from "../errors";
import { StorageTimeout, isStale, within } from "../storage";
import {
  leaseEnd,
  leaseHolder,
  notFound,
  ownedBy,
  threadValues,
  type RunClaim,
  type ThreadDoc,
  type ThreadValues,
  type UsageTotals,
} from "./thread-doc";
import type { ThreadStore } from "./thread-store";
import type { ChargeWrite } from "../access/quota";
import { runLog } from "./event-log";

/** What a run's end writes through: a batch or a transaction. */
interface EndWriter {
  create(ref: DocumentReference, data: Record<string, unknown>): unknown;
  set(ref: DocumentReference, data: Record<string, unknown>, options: { merge: true }): unknown;
}

/** A version of a thread document as a watch saw it. */
export interface SeenThread {
  doc: ThreadDoc;
  updateTime: import("firebase-admin/firestore").Timestamp;
}

/** How a run ends, as its release records it. */
export interface ReleaseEnd {
  status: ThreadStatus;
  usage?: Partial<UsageTotals>;
  values?: ThreadValues;
  outcome?: RunOutcome;
  attempt?: number;
}

/**
 * A release that records itself: the attempt's end mark (`runs/{runId}/ended/a{attempt}`) is
 * created in the same commit, with the charge of what the run spent — so a release and its charge
 * land once, whichever of the run's commits carries them first, and a later one finds the mark.
 */
export interface MarkedEnd extends ReleaseEnd {
  /** Merged into the person's day with the release (quota's `chargeWrite`). */
  charge?: ChargeWrite;
  /** How long the mark is kept, ms (the run log's TTL: `expireAt`). */
  markTtlMs: number;
}

/** Bytes per kept-body document (a Firestore document holds at most 1 MiB). */
const BODY_PIECE = 900 * 1024;

/** A background run's status as its document records it. */
export type QueuedRunStatus = "pending" | "running" | RunOutcome;

/** A run document (`threads/{threadId}/runs/{runId}`), written for background runs. */
export interface RunDoc {
  status: QueuedRunStatus;
  strategy?: MultitaskStrategy;
  uid?: string;
  createdAt?: { toDate(): Date };
  /** Why it failed (an error body), when it did. */
  error?: unknown;
}

/** How a run ended, as the last document of its event log says (`end`), and when that was written. */
export interface LoggedEnd {
  status?: RunOutcome;
  at: Date;
}

/** What a run's watcher sees (`RunStore.watchRun`). */
export interface RunSeen {
  /** The thread document (undefined: deleted). */
  thread: ThreadDoc | undefined;
  /** Whether the run holds the thread's lease now (taken, not released, not run out). */
  held: boolean;
  /** The run's own document, when watched (`runDoc`): a queued run's status and error; undefined if none. */
  run?: { status?: string; error?: unknown };
}

export class RunStore {
  constructor(
    private readonly db: Firestore,
    private readonly threads: ThreadStore,
    private readonly fieldValue: typeof import("firebase-admin/firestore").FieldValue,
    private readonly timestamp: typeof import("firebase-admin/firestore").Timestamp,
  ) {}

  private ref(id: string): DocumentReference {
    return this.threads.ref(id);
  }

  /** A run's document (`threads/{id}/runs/{runId}`): a background run's status; its event log below it. */
  private runRef(id: string, runId: string): DocumentReference {
    return this.ref(id).collection("runs").doc(runId);
  }

  /** The thread document as stored now (undefined: deleted). */
  async threadDoc(id: string): Promise<ThreadDoc | undefined> {
    return (await this.ref(id).get()).data() as ThreadDoc | undefined;
  }

  /** A run's event log (`runs/{runId}/log`). */
  log(id: string, runId: string) {
    return runLog(this.runRef(id, runId));
  }

  /** The thread document and the Firestore client, for the run core's own transactions (takeover.ts). */
  get parts() {
    return { db: this.db, thread: (id: string) => this.ref(id), timestamp: this.timestamp };
  }

  /**
   * Attempt `attempt`'s fence (`runs/{runId}/fence/a{attempt}`): created once, either by the
   * attempt before it as it commits the run's last checkpoint, or by the takeover that starts
   * `attempt` — whichever comes second fails, so a run is finished by one attempt only.
   */
  fence(id: string, runId: string, attempt: number): DocumentReference {
    return this.runRef(id, runId).collection("fence").doc(`a${attempt}`);
  }

  /**
   * Keeps a queued run's request body beside its run document, for a body bigger than a task may
   * carry (Cloud Tasks takes at most 1 MB: a question with images): pieces of at most BODY_PIECE
   * bytes, each expiring with the run's log. Read back by `takeBody`.
   */
  async keepBody(id: string, runId: string, json: string, ttlMs: number): Promise<void> {
    const all = Buffer.from(json, "utf8");
    const batch = this.db.batch();
    const expireAt = this.timestamp.fromMillis(Date.now() + ttlMs);
    for (let i = 0, n = 0; i < all.length; i += BODY_PIECE, n++) {
      batch.set(this.runRef(id, runId).collection("body").doc(String(n).padStart(4, "0")), {
        n,
        bytes: all.subarray(i, i + BODY_PIECE),
        expireAt,
      });
    }
    await batch.commit();
  }

  /** A queued run's kept body (keepBody), deleted once read: the run has it from then on. */
  async takeBody(id: string, runId: string): Promise<string> {
    const pieces = await this.runRef(id, runId).collection("body").orderBy("n").get();
    if (pieces.empty) throw new Error(`run ${runId} has no kept request body`);
    const json = Buffer.concat(pieces.docs.map((d) => d.get("bytes") as Buffer)).toString("utf8");
    const batch = this.db.batch();
    pieces.docs.forEach((d) => batch.delete(d.ref));
    await batch.commit().catch(() => {}); // they expire anyway
    return json;
  }

  /** Records a queued background run; fails if the id is taken. */
  async createQueued(
    id: string,
    runId: string,
    run: { strategy: MultitaskStrategy; uid: string },
  ): Promise<void> {
    await this.runRef(id, runId).create({
      status: "pending" satisfies QueuedRunStatus,
      strategy: run.strategy,
      uid: run.uid,
      createdAt: this.fieldValue.serverTimestamp(),
    });
  }

  /** Records a background run's status (and why it failed). */
  async setStatus(
    id: string,
    runId: string,
    status: QueuedRunStatus,
    extra: { error?: unknown } = {},
  ): Promise<void> {
    await this.runRef(id, runId).set({ status, ...extra }, { merge: true });
  }

  /**
   * Moves a queued run from `from` to `to` in a transaction; false when it is not `from` (already
   * claimed by another delivery of its task, or given up on by whoever queued it).
   */
  async moveQueued(
    id: string,
    runId: string,
    from: QueuedRunStatus,
    to: QueuedRunStatus,
    extra: { error?: unknown } = {},
  ): Promise<boolean> {
    return this.db.runTransaction(async (tx) => {
      const snap = await tx.get(this.runRef(id, runId));
      if (snap.get("status") !== from) return false;
      tx.set(this.runRef(id, runId), { status: to, ...extra }, { merge: true });
      return true;
    });
  }

  /** A run's document, if it has one (background runs). */
  async readRun(id: string, runId: string): Promise<RunDoc | undefined> {
    return (await this.runRef(id, runId).get()).data() as RunDoc | undefined;
  }

  /** The thread's background runs, newest first. */
  async recentRuns(id: string, limit: number): Promise<{ runId: string; doc: RunDoc }[]> {
    const snap = await this.ref(id).collection("runs").orderBy("createdAt", "desc").limit(limit).get();
    return snap.docs.map((d) => ({ runId: d.id, doc: d.data() as RunDoc }));
  }

  /** How a run ended by its event log (until the log expires); undefined when it left no log. */
  async loggedEnd(id: string, runId: string): Promise<LoggedEnd | undefined> {
    const last = await this.log(id, runId).orderBy("n", "desc").limit(1).get();
    if (last.empty) return undefined;
    const end = last.docs[0].get("end") as { status?: RunOutcome } | undefined;
    return { status: end?.status, at: last.docs[0].updateTime.toDate() };
  }

  /** Whether the thread knows the run by its records: a log or a run document. */
  async hasRecords(id: string, runId: string): Promise<boolean> {
    const run = this.runRef(id, runId);
    const [log, queued] = await Promise.all([runLog(run).limit(1).get(), run.get()]);
    return !log.empty || queued.exists;
  }

  /**
   * Refuses, before anything runs, a run that could not take the lease on the thread as read in
   * `snap`: 404 when it is not the caller's (or is being deleted), 409 when another run holds an
   * unexpired lease. `claimLease` checks the same again when it takes the lease.
   */
  refuseUnclaimable(id: string, snap: DocumentSnapshot, uid: string, run: RunClaim): void {
    this.leaseUpdate(id, snap, uid, run);
  }

  /**
   * Checks a run may start on the thread as read in `snap` (as `refuseUnclaimable`) and returns the
   * update that takes the lease (title from the first question).
   */
  private leaseUpdate(id: string, snap: DocumentSnapshot, uid: string, run: RunClaim) {
    const doc = ownedBy(id, snap, uid);
    if (doc.deleting) throw notFound(id);
    const now = Date.now();
    if (doc.run && leaseEnd(doc.run) > now) {
      const lapsed = doc.run.expiresAt.toMillis() <= now;
      throw new QuarryError(
        "conflict:run",
        lapsed
          ? `Thread ${id}'s run ${doc.run.runId} is being finished after its server stopped. Wait for it, or cancel it.`
          : `Thread ${id} already has a run in progress (${doc.run.runId}). Wait for it to finish or cancel it.`,
      );
    }
    return {
      status: "busy" as const,
      updatedAt: this.timestamp.fromMillis(now),
      run: {
        runId: run.runId,
        expiresAt: this.timestamp.fromMillis(now + run.leaseMs),
        cancel: false,
        attempt: 0,
        ...(run.from ? { from: run.from } : {}),
        ...(run.strategy ? { strategy: run.strategy } : {}),
        ...(run.holder ? { holder: run.holder } : {}),
        ...(run.graceMs ? { graceMs: run.graceMs } : {}),
        ...(run.modes ? { modes: run.modes } : {}),
        ...(run.via ? { via: run.via } : {}),
        ...(run.schedule ? { schedule: run.schedule } : {}),
      },
      lastRunId: run.runId,
      // The run's number on its thread (v2 events number their seq by it: v2/events.ts).
      runNo: (doc.runNo ?? 0) + 1,
      ...(doc.title
        ? {}
        : { title: autoTitle(run.question), ...(run.scopeKey ? { scopeKey: run.scopeKey } : {}) }),
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

  /** Extends our lease; false when it is no longer ours (expired and taken, or continued by another attempt). */
  async renewLease(id: string, runId: string, leaseMs: number, attempt = 0): Promise<boolean> {
    return this.db.runTransaction(async (tx) => {
      const snap = await tx.get(this.ref(id));
      const run = (snap.data() as ThreadDoc | undefined)?.run;
      if (!run || run.runId !== runId || (run.attempt ?? 0) !== attempt || run.handoff) return false;
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
    outcome?: RunOutcome,
    attempt = 0,
  ): Promise<void> {
    await this.db.runTransaction(async (tx) => {
      const snap = await tx.get(this.ref(id));
      const update = this.releaseUpdate(snap.data() as ThreadDoc | undefined, runId, {
        status,
        usage,
        values,
        outcome,
        attempt,
      });
      if (update) tx.update(this.ref(id), update);
    });
  }

  /**
   * `releaseLease` with the attempt's end mark and the charge (see MarkedEnd), read and written in
   * one transaction. True when the mark was there already: a commit that carried this release
   * (`releaseAlong`) had landed, and nothing is written again.
   */
  async releaseMarked(id: string, runId: string, end: MarkedEnd): Promise<boolean> {
    const attempt = end.attempt ?? 0;
    const mark = this.endMark(id, runId, attempt);
    return this.db.runTransaction(async (tx) => {
      const [snap, marked, next] = await tx.getAll(this.ref(id), mark, this.fence(id, runId, attempt + 1));
      if (marked.exists) return true;
      // Continued by a later attempt (this one lost its lease to it): the turn is that attempt's to
      // count and charge, the steps of this one it resumed from included. Only the mark is written.
      const continued = continuedBy(next);
      this.writeEnd(tx, mark, end, !continued);
      const update = !continued && this.releaseUpdate(snap.data() as ThreadDoc | undefined, runId, end);
      if (update) tx.update(this.ref(id), update);
      return false;
    });
  }

  /**
   * The charge alone, with the attempt's end mark (a release that could not be written at all):
   * false when the mark was there already (the release and its charge had landed). Not charged
   * when a later attempt continued the run: that attempt charges the turn.
   */
  async chargeMarked(id: string, runId: string, end: MarkedEnd): Promise<boolean> {
    const attempt = end.attempt ?? 0;
    const mark = this.endMark(id, runId, attempt);
    return this.db.runTransaction(async (tx) => {
      const [marked, next] = await tx.getAll(mark, this.fence(id, runId, attempt + 1));
      if (marked.exists) return false;
      this.writeEnd(tx, mark, end, !continuedBy(next));
      return true;
    });
  }

  /**
   * The release as writes another commit carries (the run's last event-log write: its end marker
   * and the release land together), without a read: made from the thread document as the run's
   * own watch last saw it and guarded by that version's update time, with the attempt's end mark
   * and the charge. Undefined when that document does not show this attempt holding the run. A
   * commit carrying it is refused whole if the document changed since (FAILED_PRECONDITION: a
   * renewal, a cancel) or the mark exists (ALREADY_EXISTS): then the caller releases through
   * `releaseMarked`, which reads again.
   */
  releaseAlong(
    id: string,
    seen: SeenThread | undefined,
    runId: string,
    end: MarkedEnd,
  ): ((batch: WriteBatch) => void) | undefined {
    if (!seen || seen.doc.run?.runId !== runId || (seen.doc.run.attempt ?? 0) !== (end.attempt ?? 0)) return;
    const update = this.releaseUpdate(seen.doc, runId, end);
    if (!update) return;
    const lastUpdateTime = seen.updateTime;
    const mark = this.endMark(id, runId, end.attempt ?? 0);
    return (batch) => {
      batch.update(this.ref(id), update, { lastUpdateTime });
      this.writeEnd(batch, mark, end, true);
    };
  }

  /** The end mark (created: a second is refused) and, when `charged`, the charge, in `w`'s commit. */
  private writeEnd(w: EndWriter, mark: DocumentReference, end: MarkedEnd, charged: boolean) {
    w.create(mark, {
      at: this.timestamp.now(),
      expireAt: this.timestamp.fromMillis(Date.now() + end.markTtlMs),
    });
    if (charged && end.charge) w.set(end.charge.ref, end.charge.fields, { merge: true });
  }

  /** Attempt `attempt`'s end mark: its release (and charge) recorded. */
  private endMark(id: string, runId: string, attempt: number): DocumentReference {
    return this.runRef(id, runId).collection("ended").doc(`a${attempt}`);
  }

  /** What releasing changes in the thread document `doc` (undefined: nothing, it is gone or another attempt's). */
  private releaseUpdate(
    doc: ThreadDoc | undefined,
    runId: string,
    { status, usage, values, outcome, attempt = 0 }: ReleaseEnd,
  ): Record<string, unknown> | undefined {
    if (!doc) return;
    // An attempt the run was taken from counts nothing: the attempt that finishes it counts the turn.
    if (doc.run?.runId === runId && (doc.run.attempt ?? 0) !== attempt) return;
    const update: Record<string, unknown> = { updatedAt: this.timestamp.now() };
    if (doc.run?.runId === runId) {
      update.run = null;
      update.status = status;
      if (values) update.values = values;
      // How the run ended: GET of the run answers from this document alone.
      if (outcome)
        update.lastRunEnd = { runId, outcome, ...(doc.run.strategy ? { strategy: doc.run.strategy } : {}) };
    }
    if (usage) {
      for (const [k, v] of Object.entries(usage)) {
        if (typeof v === "number" && v !== 0) update[`usage.${k}`] = this.fieldValue.increment(v);
      }
    }
    return update;
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

  /**
   * Watches the thread for a cancel flag on our run; returns the unsubscribe function. `onSeen`
   * gets each version of the document it sees (the run releases from the last one, `releaseAlong`).
   */
  watchCancel(
    id: string,
    runId: string,
    onCancel: () => void,
    onSeen?: (seen: SeenThread | undefined) => void,
  ): () => void {
    return this.ref(id).onSnapshot(
      (snap) => {
        const doc = snap.data() as ThreadDoc | undefined;
        onSeen?.(doc && snap.updateTime ? { doc, updateTime: snap.updateTime } : undefined);
        const run = doc?.run;
        if (run?.runId === runId && run.cancel) onCancel();
      },
      () => {
        /* a broken listener must not crash the run; the lease renewal still bounds it */
      },
    );
  }

  /**
   * Watches a run from any instance: `onChange` gets a typed snapshot whenever the thread document
   * (and, with `runDoc`, the run's own document) changes, and again when the run's lease runs out
   * (a lease that is not renewed changes nothing there is to listen for). A listener that fails
   * calls `onError` once and the watch ends. Returns the function that ends it. Every wait on a
   * run — its release, its start, a rejoined stream's end, a thread's next run — goes through here.
   */
  watchRun(
    id: string,
    runId: string | undefined,
    handlers: { runDoc?: boolean; onChange(seen: RunSeen): void; onError(err: unknown): void },
  ): () => void {
    let thread: ThreadDoc | undefined;
    let run: RunSeen["run"];
    const withRunDoc = !!handlers.runDoc && runId !== undefined;
    let seen = { thread: false, run: !withRunDoc };
    let ended = false;
    let expiry: NodeJS.Timeout | undefined;
    const emit = () => {
      if (ended || !seen.thread || !seen.run) return;
      clearTimeout(expiry);
      const held = !!runId && leaseHolder(thread) === runId;
      if (held) {
        // A second past it: another instance's clock wrote the expiry.
        expiry = setTimeout(emit, Math.max(leaseEnd(thread!.run!) - Date.now(), 0) + 1_000);
        expiry.unref();
      }
      handlers.onChange({ thread, held, run });
    };
    const fail = (err: unknown) => {
      if (ended) return;
      end();
      handlers.onError(err);
    };
    const stopThread = this.ref(id).onSnapshot((snap) => {
      thread = snap.data() as ThreadDoc | undefined;
      seen = { ...seen, thread: true };
      emit();
    }, fail);
    const stopRun = withRunDoc
      ? this.runRef(id, runId!).onSnapshot((snap) => {
          run = snap.exists
            ? { status: snap.get("status") as string | undefined, error: snap.get("error") as unknown }
            : undefined;
          seen = { ...seen, run: true };
          emit();
        }, fail)
      : () => {};
    function end() {
      ended = true;
      clearTimeout(expiry);
      stopThread();
      stopRun();
    }
    return end;
  }

  /**
   * Waits until the run lets go of the thread (it writes its last checkpoints first) or its lease
   * runs out, so nothing it writes outlives a delete. Bounded by the lease as first read.
   */
  async waitForRelease(id: string, runId: string, leaseMs: number): Promise<void> {
    let stop = () => {};
    const released = new Promise<void>((resolve, reject) => {
      stop = this.watchRun(id, runId, {
        onChange: ({ held }) => {
          if (!held) resolve();
        },
        onError: reject,
      });
    });
    try {
      // Bounded like the lease as first read; a run renewing past it is given up on, as before.
      await within(leaseMs, released, "waiting for the run to stop").catch((err: unknown) => {
        if (!(err instanceof StorageTimeout)) throw err;
      });
    } finally {
      stop();
    }
  }
}

/**
 * Whether attempt N+1's fence (`next`) shows a takeover that went on with the run (a watchdog's
 * continuation), not one that only closed it, nor attempt N's own last checkpoint (`finishedBy`).
 */
function continuedBy(next: DocumentSnapshot): boolean {
  return next.exists && typeof next.get("holder") === "string" && next.get("closing") !== true;
}

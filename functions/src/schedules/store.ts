/**
 * Schedules in Firestore (`schedules/{id}`): a person's saved questions with their SQL, cadence,
 * alert and delivery, and what their last run did. Server-only (rules deny clients): the API
 * answers a person's own, admins see all. The tick claims due ones here with a transaction that
 * advances `nextRunAt`, so two overlapping ticks never run one schedule twice.
 */
import { randomUUID } from "node:crypto";
import type { DocumentSnapshot, Firestore, Timestamp } from "firebase-admin/firestore";
import { QuarryError } from "../errors";
import { firestore } from "../services";
import type { Schedule } from "./cadence";
import type { LastRun, NewSchedule, ScheduleChanges, ScheduleDoc, ScheduleOwner } from "./doc";

/** Consecutive failed runs after which a schedule pauses itself. */
export const MAX_CONSECUTIVE_FAILURES = 3;

/** How an owner's "run now" claim starts (a tick's is a bare UUID). */
const OWNER_CLAIM = "owner:";

type FirestoreMod = typeof import("firebase-admin/firestore");

export class ScheduleStore {
  constructor(
    private readonly db: Firestore,
    private readonly timestamp: FirestoreMod["Timestamp"],
    private readonly collection = "schedules",
  ) {}

  private ref(id: string) {
    return this.db.collection(this.collection).doc(id);
  }

  /** Creates a schedule unless the owner already has `max` (409 `conflict:schedule`); returns its id. */
  async create(
    owner: ScheduleOwner,
    input: NewSchedule,
    max: number,
  ): Promise<{ id: string; doc: ScheduleDoc }> {
    const id = randomUUID();
    const now = this.timestamp.now();
    const { nextRunAt, ...rest } = input;
    const doc: ScheduleDoc = {
      ...rest,
      owner: owner.uid,
      ownerEmail: owner.email,
      ownerEmailVerified: owner.emailVerified,
      scheduleThreadId: randomUUID(),
      timeZone: input.schedule.timeZone,
      paused: false,
      pausedReason: null,
      nextRunAt: this.timestamp.fromDate(nextRunAt),
      lastRun: null,
      failures: 0,
      deliveryError: null,
      pendingClaim: null,
      claimedBy: null,
      claimedAt: null,
      createdAt: now,
      updatedAt: now,
      ownerSavedAt: now,
    };
    // Counted and created in one transaction: two creates at once cannot both pass the limit.
    await this.db.runTransaction(async (tx) => {
      const mine = await tx.get(this.db.collection(this.collection).where("owner", "==", owner.uid).select());
      if (mine.size >= max) {
        throw new QuarryError(
          "conflict:schedule",
          `You already have ${mine.size} schedules, the most allowed (QUARRY_MAX_SCHEDULES = ${max}): ` +
            "delete one you no longer need first.",
        );
      }
      tx.create(this.ref(id), doc);
    });
    return { id, doc };
  }

  /** The caller's schedule, or 404 (someone else's reads as missing). */
  async get(id: string, uid: string): Promise<ScheduleDoc> {
    return ownSchedule(id, await this.ref(id).get(), uid);
  }

  /** Any schedule (the tick, the run, admins); undefined when it is gone. */
  async read(id: string): Promise<ScheduleDoc | undefined> {
    return (await this.ref(id).get()).data() as ScheduleDoc | undefined;
  }

  /** The person's schedules, newest first. */
  async list(uid: string): Promise<{ id: string; doc: ScheduleDoc }[]> {
    const snap = await this.db.collection(this.collection).where("owner", "==", uid).get();
    return snap.docs
      .map((d) => ({ id: d.id, doc: d.data() as ScheduleDoc }))
      .sort((a, b) => b.doc.createdAt.toMillis() - a.doc.createdAt.toMillis());
  }

  /** Every schedule (admins), newest first, at most `limit`. */
  async listAll(limit: number): Promise<{ id: string; doc: ScheduleDoc }[]> {
    const snap = await this.db.collection(this.collection).orderBy("createdAt", "desc").limit(limit).get();
    return snap.docs.map((d) => ({ id: d.id, doc: d.data() as ScheduleDoc }));
  }

  /**
   * Marks the caller's schedule to run now (`POST /schedules/:id/run`), paused or not: a claim its
   * run takes, like a tick's, with `nextRunAt` left as it is. Returns the claim id.
   */
  async claimNow(id: string, uid: string): Promise<string> {
    return this.db.runTransaction(async (tx) => {
      refuseAdminPause(id, ownSchedule(id, await tx.get(this.ref(id)), uid));
      const claim = `${OWNER_CLAIM}${randomUUID()}`;
      tx.update(this.ref(id), { pendingClaim: claim, claimedBy: "owner", claimedAt: this.timestamp.now() });
      return claim;
    });
  }

  /**
   * Changes the caller's schedule (`uid`), or any schedule when `uid` is undefined (an admin's
   * pause). Resuming clears the pause's reason and the failure count; a schedule an admin paused
   * only an admin resumes (409 to its owner).
   */
  async patch(id: string, uid: string | undefined, changes: ScheduleChanges, pausedReason?: string) {
    return this.db.runTransaction(async (tx) => {
      const snap = await tx.get(this.ref(id));
      const doc = uid === undefined ? anySchedule(id, snap) : ownSchedule(id, snap, uid);
      if (uid !== undefined && changes.paused === false) refuseAdminPause(id, doc);
      const { nextRunAt, ...rest } = changes;
      const now = this.timestamp.now();
      const update: Partial<ScheduleDoc> = {
        ...rest,
        updatedAt: now,
        // The owner's own change counts as saving it (run.ts: revoked sessions); an admin's does not.
        ...(uid !== undefined ? { ownerSavedAt: now } : {}),
      };
      if (nextRunAt) update.nextRunAt = this.timestamp.fromDate(nextRunAt);
      if (changes.paused === true)
        update.pausedReason = pausedReason ?? doc.pausedReason ?? "paused by its owner";
      if (changes.paused === false) Object.assign(update, { pausedReason: null, failures: 0 });
      if (uid === undefined && changes.paused !== undefined) update.pausedByAdmin = changes.paused;
      tx.update(this.ref(id), update);
      return { ...doc, ...update } as ScheduleDoc;
    });
  }

  /** Deletes the caller's schedule (404 when it is not theirs). Its conversation stays, as theirs. */
  async delete(id: string, uid: string): Promise<void> {
    await this.db.runTransaction(async (tx) => {
      ownSchedule(id, await tx.get(this.ref(id)), uid);
      tx.delete(this.ref(id));
    });
  }

  /** Schedules due at `now` that are not paused, oldest due first (index: paused, nextRunAt). */
  async due(now: Date, limit: number): Promise<{ id: string; nextRunAt: Timestamp }[]> {
    const snap = await this.db
      .collection(this.collection)
      .where("paused", "==", false)
      .where("nextRunAt", "<=", this.timestamp.fromDate(now))
      .orderBy("nextRunAt")
      .limit(limit)
      .get();
    return snap.docs.map((d) => ({ id: d.id, nextRunAt: (d.data() as ScheduleDoc).nextRunAt }));
  }

  /**
   * Claims a due schedule for one run: in a transaction, only if it is still unpaused and due at
   * `now` and its `nextRunAt` is the one the tick saw; `nextRunAt` moves to `next(now)`. A second
   * tick that saw the same schedule finds it moved on and gets false. Returns the claim id.
   */
  async claim(
    id: string,
    seen: Timestamp,
    now: Date,
    tickId: string,
    next: (schedule: Schedule, after: Date) => Date,
  ): Promise<string | undefined> {
    return this.db.runTransaction(async (tx) => {
      const doc = (await tx.get(this.ref(id))).data() as ScheduleDoc | undefined;
      if (!doc || doc.paused || !doc.nextRunAt.isEqual(seen) || doc.nextRunAt.toMillis() > now.getTime())
        return undefined;
      const claim = randomUUID();
      tx.update(this.ref(id), {
        nextRunAt: this.timestamp.fromDate(next(doc.schedule, now)),
        pendingClaim: claim,
        claimedBy: tickId,
        claimedAt: this.timestamp.fromDate(now),
      });
      return claim;
    });
  }

  /**
   * Takes a claim for its run, once (the claim still pending; a tick's only while the schedule is
   * not paused), so a task delivered twice runs once. Returns the schedule as it is now.
   */
  async takeClaim(id: string, claim: string): Promise<ScheduleDoc | undefined> {
    return this.db.runTransaction(async (tx) => {
      const doc = (await tx.get(this.ref(id))).data() as ScheduleDoc | undefined;
      if (!doc || doc.pendingClaim !== claim) return undefined;
      tx.update(this.ref(id), { pendingClaim: null });
      // A tick's claim on a schedule paused since does not run; the owner's "run now" does (a fix tried).
      return doc.paused && !claim.startsWith(OWNER_CLAIM) ? undefined : doc;
    });
  }

  /**
   * Records a run: its outcome as `lastRun`; a failure counts towards the pause (after
   * {@link MAX_CONSECUTIVE_FAILURES} in a row the schedule pauses, saying why), a success resets
   * the count; a skip (over quota) changes neither. `pause` pauses at once (the owner lost access).
   * Returns whether the schedule is paused now.
   */
  async recordRun(
    id: string,
    run: Omit<LastRun, "at">,
    opts: { pause?: string; deliveryError?: string | null } = {},
  ): Promise<{ paused: boolean; failures: number } | undefined> {
    return this.db.runTransaction(async (tx) => {
      const doc = (await tx.get(this.ref(id))).data() as ScheduleDoc | undefined;
      if (!doc) return undefined;
      const now = this.timestamp.now();
      const failures = run.outcome === "failed" ? doc.failures + 1 : run.outcome === "ok" ? 0 : doc.failures;
      const update: Partial<ScheduleDoc> = { lastRun: { ...run, at: now }, failures, updatedAt: now };
      const reason =
        opts.pause ??
        (failures >= MAX_CONSECUTIVE_FAILURES && !doc.paused
          ? `paused after ${failures} failed runs in a row; the last: ${run.error ?? "unknown error"}`
          : undefined);
      if (reason) Object.assign(update, { paused: true, pausedReason: reason });
      if (opts.deliveryError !== undefined)
        update.deliveryError = opts.deliveryError ? { at: now, message: opts.deliveryError } : null;
      tx.update(this.ref(id), update);
      return { paused: doc.paused || !!reason, failures };
    });
  }

  /** Records a webhook delivery that failed, or clears the last failure when one succeeded. */
  async recordDelivery(id: string, error: string | null): Promise<void> {
    const at = this.timestamp.now();
    await this.ref(id).update({ deliveryError: error ? { at, message: error } : null });
  }
}

function notFound(id: string): QuarryError {
  return new QuarryError("not_found:schedule", `Schedule ${id} not found.`);
}

/** 409 when an admin paused the schedule: its owner may not resume or run it until an admin resumes it. */
function refuseAdminPause(id: string, doc: ScheduleDoc): void {
  if (doc.paused && doc.pausedByAdmin) {
    throw new QuarryError(
      "conflict:schedule",
      `Schedule ${id} was paused by an admin: ask a Quarry admin to resume it.`,
    );
  }
}

function anySchedule(id: string, snap: DocumentSnapshot): ScheduleDoc {
  const doc = snap.data() as ScheduleDoc | undefined;
  if (!doc) throw notFound(id);
  return doc;
}

function ownSchedule(id: string, snap: DocumentSnapshot, uid: string): ScheduleDoc {
  const doc = anySchedule(id, snap);
  if (doc.owner !== uid) throw notFound(id);
  return doc;
}

let store: Promise<ScheduleStore> | undefined;

/** This instance's schedule store. */
export function scheduleStore(): Promise<ScheduleStore> {
  store ??= Promise.all([firestore(), import("firebase-admin/firestore")]).then(
    ([db, mod]) => new ScheduleStore(db, mod.Timestamp),
  );
  return store;
}

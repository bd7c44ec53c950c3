/**
 * The audit log (`audit/{id}`, server-only, `expireAt` for a TTL policy of QUARRY_AUDIT_TTL_DAYS):
 * every query that ran or was refused (person, thread, run, SQL, bytes billed, job id, duration,
 * outcome), every admin action (members, roles, quotas, proposals; by whom) and what was done with
 * shared conversations (a link made, revoked, opened, continued). Admins read it
 * through `GET /admin/audit` (person and date filters, a cursor for the next page) and export it
 * (`npm run audit -- export`).
 */
import type { Firestore } from "firebase-admin/firestore";
import type { AdminAction, AuditEntry as AuditEntryView } from "../contract/admin";
import type { QueryRecord } from "../tools/types";

/** A query that ran, failed or was refused: the warehouse's report, under the person's uid and email. */
export type QueryAudit = Omit<QueryRecord, "userId" | "userEmail"> & {
  kind: "query";
  uid: string;
  email: string | null;
};

/** Something an admin did. */
export interface AdminAudit {
  kind: "admin";
  uid: string;
  email: string | null;
  action: AdminAction;
  /** What it was done to: an email, a proposal id. */
  target: string;
  detail?: Record<string, unknown>;
}

/** A file brought into a conversation as a table (or refused): the entry as the admin page reads it. */
export type UploadAudit = Omit<Extract<AuditEntryView, { kind: "upload" }>, "at">;

/** Something done with a shared conversation: a link made, revoked, opened or continued. */
type ShareAudit = Omit<Extract<AuditEntryView, { kind: "share" }>, "at">;

type Recorded = QueryAudit | AdminAudit | UploadAudit | ShareAudit;

type AuditEntry = Recorded & { at: string };

export interface AuditPage {
  entries: AuditEntry[];
  /** Pass as `cursor` for the next page; absent on the last one. */
  next?: string;
}

/** Firestore's ALREADY_EXISTS: the step's entry is there already. */
const ALREADY_EXISTS = 6;

export class AuditLog {
  constructor(
    private readonly db: Firestore,
    private readonly timestamp: typeof import("firebase-admin/firestore").Timestamp,
    private readonly ttlDays: number,
    private readonly collection = "audit",
  ) {}

  /**
   * Records one entry (at server time now). With `key` (a query step's job id) the entry is that
   * document, created once: the same step run again by a continued run is not audited twice.
   */
  async record(entry: Recorded, key?: string): Promise<void> {
    const now = Date.now();
    const doc = {
      ...entry,
      at: this.timestamp.fromMillis(now),
      expireAt: this.timestamp.fromMillis(now + this.ttlDays * 86_400_000),
    };
    if (!key) {
      await this.db.collection(this.collection).add(doc);
      return;
    }
    await this.db
      .collection(this.collection)
      .doc(key)
      .create(doc)
      .catch((err: unknown) => {
        if ((err as { code?: unknown }).code !== ALREADY_EXISTS) throw err;
      });
  }

  /** Entries newest first, filtered by person (uid or email) and time range, a page at a time. */
  async read(q: {
    person?: string;
    since?: Date;
    until?: Date;
    limit: number;
    cursor?: string;
  }): Promise<AuditPage> {
    let query = this.db.collection(this.collection).orderBy("at", "desc");
    if (q.person) {
      const byEmail = q.person.includes("@");
      query = query.where(byEmail ? "email" : "uid", "==", byEmail ? q.person.toLowerCase() : q.person);
    }
    if (q.since) query = query.where("at", ">=", this.timestamp.fromDate(q.since));
    if (q.until) query = query.where("at", "<", this.timestamp.fromDate(q.until));
    if (q.cursor) {
      const after = await this.db.collection(this.collection).doc(q.cursor).get();
      if (after.exists) query = query.startAfter(after);
    }
    const snap = await query.limit(q.limit + 1).get();
    const docs = snap.docs.slice(0, q.limit);
    const entries = docs.map((d) => {
      const { at, expireAt: _e, ...rest } = d.data() as { at: { toDate(): Date }; expireAt: unknown };
      return { ...(rest as Recorded), at: at.toDate().toISOString() };
    });
    return { entries, ...(snap.docs.length > q.limit ? { next: docs[docs.length - 1].id } : {}) };
  }
}

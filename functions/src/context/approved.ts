/**
 * Verified queries approved in the admin page: stored in Firestore (`approved_queries/{id}`,
 * server-only) and merged with the context files' own when the context is loaded, so an approval
 * takes effect without a redeploy. Each instance re-reads them at most every `maxAgeMs` (30 s by
 * default: no instance serves a stale set for more than a minute). `npm run feedback -- export`
 * writes them into the YAML files so the team can version them.
 */
import type { Firestore } from "firebase-admin/firestore";
import { FULL_SCOPE } from "../tools/scope";
import type { QueryContext, Warehouse } from "../tools/types";
import { VerifiedQuery, type VerifiedQueryItem } from "./authored";

export const APPROVED_COLLECTION = "approved_queries";

/** An approved query as stored. */
export interface ApprovedQuery extends VerifiedQueryItem {
  id: string;
  /** The proposal (feedback id) it came from. */
  proposalId: string;
  approvedBy: string;
  approvedAt: string;
}

/** Why a verified query cannot be approved, in words that say what to fix. */
export class ApprovalError extends Error {}

/**
 * Validates a verified query as a context file's own are validated: the file's rules for an entry
 * (lengths, non-empty) and the warehouse's dry run (a read-only query on tables it has).
 */
export async function validateVerifiedQuery(
  entry: { question: string; sql: string },
  warehouse: Warehouse,
): Promise<VerifiedQueryItem> {
  const parsed = VerifiedQuery.safeParse(entry);
  if (!parsed.success) {
    const why = parsed.error.issues.map((i) => `${i.path.join(".") || "entry"}: ${i.message}`).join("; ");
    throw new ApprovalError(`Not approved: ${why}.`);
  }
  const ctx: QueryContext = {
    userId: "approval",
    threadId: "approval",
    runId: "approval",
    bytesBilledSoFar: 0,
    // The deployment's own check (an admin's approval, the context files): the whole allowed data.
    scope: FULL_SCOPE,
  };
  try {
    await warehouse.dryRun(parsed.data.sql, ctx);
  } catch (err) {
    throw new ApprovalError(`Not approved: the SQL does not pass the dry run: ${(err as Error).message}`);
  }
  return parsed.data;
}

/** Reads the approved queries; cached per instance for `maxAgeMs`. */
export class ApprovedQueries {
  private cached: { at: number; items: Promise<ApprovedQuery[]> } | undefined;

  constructor(
    private readonly db: Firestore,
    private readonly maxAgeMs = 30_000,
  ) {}

  /** Every approved query (a failed read serves the last set, or none, rather than failing a question). */
  current(): Promise<ApprovedQuery[]> {
    const now = Date.now();
    if (!this.cached || now - this.cached.at > this.maxAgeMs) {
      const previous = this.cached?.items;
      const items = this.read().catch(() => previous ?? Promise.resolve([]));
      this.cached = { at: now, items };
    }
    return this.cached.items;
  }

  /** Stores an approved query (the proposal's id as its id: approving twice keeps one). */
  async add(item: Omit<ApprovedQuery, "approvedAt">): Promise<ApprovedQuery> {
    const stored: ApprovedQuery = { ...item, approvedAt: new Date().toISOString() };
    await this.db.collection(APPROVED_COLLECTION).doc(item.id).set(stored);
    this.cached = undefined;
    return stored;
  }

  private async read(): Promise<ApprovedQuery[]> {
    const snap = await this.db.collection(APPROVED_COLLECTION).orderBy("approvedAt").limit(1000).get();
    return snap.docs.map((d) => d.data() as ApprovedQuery);
  }
}

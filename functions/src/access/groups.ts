/**
 * Groups in Firestore (`groups/{name}`, server-only): a name and the datasets (`shop`) or single
 * tables (`finance.salaries`) its members may see. A member's groups are on their members-list
 * entry. Read through the same short per-instance cache as the members list: a change reaches
 * every instance within `cacheMs`, and the instance that made it at once.
 */
import type { Firestore } from "firebase-admin/firestore";

/** A group as stored. */
export interface GroupDoc {
  name: string;
  /** Datasets (`shop`) and `dataset.table` entries, lower case. */
  datasets: string[];
  createdBy: string;
  createdAt: string;
  updatedAt: string;
}

export class GroupStore {
  private cache: { groups: GroupDoc[]; until: number } | undefined;

  constructor(
    private readonly db: Firestore,
    private readonly collection: string,
    private readonly cacheMs: number,
  ) {}

  /** Every group, from the cache when it is fresh. */
  async all(): Promise<GroupDoc[]> {
    if (this.cache && this.cache.until > Date.now()) return this.cache.groups;
    return this.fresh();
  }

  /** Every group as stored now (and cached). */
  async fresh(): Promise<GroupDoc[]> {
    const snap = await this.db.collection(this.collection).orderBy("name").limit(1000).get();
    const groups = snap.docs.map((d) => d.data() as GroupDoc);
    this.cache = { groups, until: Date.now() + this.cacheMs };
    return groups;
  }

  /** Forgets the cache (after a change on this instance). */
  invalidate(): void {
    this.cache = undefined;
  }
}

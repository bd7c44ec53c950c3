/**
 * Groups in Firestore (`groups/{name}`, server-only): a name and the datasets (`shop`) or single
 * tables (`finance.salaries`) its members may see. A member's groups are on their members-list
 * entry. Read through the same short per-instance cache as the members list: a change reaches
 * every instance within `cacheMs`, and the instance that made it at once.
 */
import { TtlCache } from "../lru";
import type { DocumentReference, Firestore, Transaction } from "firebase-admin/firestore";

/** A group as stored. */
export interface GroupDoc {
  name: string;
  /** Datasets (`shop`) and `dataset.table` entries, lower case. */
  datasets: string[];
  /** The view its members get unless they chose one. */
  defaultView?: "business" | "analyst";
  createdBy: string;
  createdAt: string;
  updatedAt: string;
}

export class GroupStore {
  /** Every group, under one key: the list is read whole. */
  private readonly cache: TtlCache<"all", GroupDoc[]>;

  constructor(
    private readonly db: Firestore,
    private readonly collection: string,
    cacheMs: number,
  ) {
    this.cache = new TtlCache(1, () => cacheMs);
  }

  /** Every group, from the cache when it is fresh. */
  all(): Promise<GroupDoc[]> {
    return this.cache.get("all", () => this.read());
  }

  /** Every group as stored now (and cached). */
  fresh(): Promise<GroupDoc[]> {
    return this.cache.get("all", () => this.read(), { fresh: true });
  }

  private async read(): Promise<GroupDoc[]> {
    const snap = await this.db.collection(this.collection).orderBy("name").limit(1000).get();
    return snap.docs.map((d) => d.data() as GroupDoc);
  }

  /** Forgets the cache (after a change on this instance). */
  invalidate(): void {
    this.cache.delete("all");
  }

  /** The group as stored now, or undefined. `name` is the document id (a lower-case slug). */
  async get(name: string): Promise<GroupDoc | undefined> {
    const snap = await this.ref(name).get();
    return snap.exists ? (snap.data() as GroupDoc) : undefined;
  }

  /** Creates a group; undefined (and nothing written) when one of that name exists. */
  async create(name: string, datasets: string[], by: string): Promise<GroupDoc | undefined> {
    const ref = this.ref(name);
    const now = new Date().toISOString();
    const doc: GroupDoc = { name, datasets, createdBy: by, createdAt: now, updatedAt: now };
    const created = await this.db.runTransaction(async (tx) => {
      if ((await tx.get(ref)).exists) return false;
      tx.create(ref, doc);
      return true;
    });
    this.invalidate();
    return created ? doc : undefined;
  }

  /**
   * Replaces a group's datasets and/or its default view (`null`: none); undefined when there is no
   * such group.
   */
  async update(
    name: string,
    change: { datasets?: string[]; defaultView?: GroupDoc["defaultView"] | null },
  ): Promise<GroupDoc | undefined> {
    const ref = this.ref(name);
    const doc = await this.db.runTransaction(async (tx) => {
      const before = (await tx.get(ref)).data() as GroupDoc | undefined;
      if (!before) return undefined;
      const { defaultView: _old, ...rest } = before;
      const view = change.defaultView === undefined ? before.defaultView : change.defaultView;
      const next: GroupDoc = {
        ...rest,
        datasets: change.datasets ?? before.datasets,
        ...(view ? { defaultView: view } : {}),
        updatedAt: new Date().toISOString(),
      };
      tx.set(ref, next);
      return next;
    });
    this.invalidate();
    return doc;
  }

  /**
   * Deletes a group and, in the same transaction, what `alsoIn` changes (the members-list entries
   * that name it, so none is left naming a group that no longer exists — a group made later under
   * the same name must not inherit them). `alsoIn` may read, then write. Undefined when there was
   * no such group.
   */
  async remove<T>(name: string, alsoIn: (tx: Transaction) => Promise<T>): Promise<{ also: T } | undefined> {
    const ref = this.ref(name);
    const out = await this.db.runTransaction(async (tx) => {
      if (!(await tx.get(ref)).exists) return undefined;
      const also = await alsoIn(tx);
      tx.delete(ref);
      return { also };
    });
    this.invalidate();
    return out;
  }

  private ref(name: string): DocumentReference {
    return this.db.collection(this.collection).doc(name);
  }
}

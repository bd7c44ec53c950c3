/**
 * A map that keeps at most `max` entries, dropping the least recently used: the bound every
 * per-instance cache keyed by something that grows (people, threads, documents) goes through, so a
 * long-lived function instance does not grow without end.
 */
export class Lru<K, V> {
  private readonly map = new Map<K, V>();

  constructor(private readonly max: number) {}

  get(key: K): V | undefined {
    const v = this.map.get(key);
    if (v !== undefined) {
      this.map.delete(key);
      this.map.set(key, v);
    }
    return v;
  }

  set(key: K, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value as K);
  }

  delete(key: K): void {
    this.map.delete(key);
  }

  keys(): IterableIterator<K> {
    return this.map.keys();
  }

  get size(): number {
    return this.map.size;
  }
}

/**
 * A bounded cache of loaded values that expire `ttlMs()` after they were loaded: the one way every
 * per-instance cache of people, groups and accounts expires. A load under way is shared by whoever
 * asks meanwhile; a load that fails is dropped (the next ask loads again); `fresh` loads past the
 * cache and keeps the result.
 */
export class TtlCache<K, V> {
  private readonly entries: Lru<K, { until: number; value: Promise<V> }>;

  constructor(
    max: number,
    private readonly ttlMs: () => number,
  ) {
    this.entries = new Lru(max);
  }

  get(key: K, load: () => Promise<V>, { fresh = false }: { fresh?: boolean } = {}): Promise<V> {
    const hit = fresh ? undefined : this.entries.get(key);
    if (hit && hit.until > Date.now()) return hit.value;
    const entry = { until: Date.now() + this.ttlMs(), value: load() };
    this.entries.set(key, entry);
    entry.value.catch(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
    return entry.value;
  }

  /** Keeps a value known now (written on this instance), for the usual time. */
  set(key: K, value: V): void {
    this.entries.set(key, { until: Date.now() + this.ttlMs(), value: Promise.resolve(value) });
  }

  delete(key: K): void {
    this.entries.delete(key);
  }
}

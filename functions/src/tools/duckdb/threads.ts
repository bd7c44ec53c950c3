/**
 * A DuckDB worker's instances for conversations with uploaded files. The shared instance never has
 * an `uploads` schema; a call that carries a conversation's uploads goes to an instance opened with
 * exactly those files (the sample attached read-only, the uploads copied in, then the lock), so one
 * conversation's tables are not attached — not even by name in an error — where another's queries
 * run. Opening one takes tens of milliseconds; the few most recent are kept, and one is closed only
 * when no call is using it.
 */
import type { WarehouseConfig } from "../../config";
import type { UploadRef } from "../uploads/types";
import { DuckDbWarehouse, type DuckDbWarehouseOptions } from "./warehouse";

/** Conversations' instances kept open per worker (each holds its uploads in memory). */
const KEEP = 4;

interface Entry {
  opening: Promise<DuckDbWarehouse>;
  users: number;
  evicted: boolean;
}

/** The per-conversation instances of one worker process. */
export class ThreadWarehouses {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly cfg: WarehouseConfig,
    private readonly options: DuckDbWarehouseOptions,
  ) {}

  /** Runs `fn` on the instance holding exactly `uploads` (opened on first need). */
  async with<T>(uploads: readonly UploadRef[], fn: (wh: DuckDbWarehouse) => Promise<T>): Promise<T> {
    const key = keyOf(uploads);
    let entry = this.entries.get(key);
    if (entry) {
      this.entries.delete(key); // most recent last
      this.entries.set(key, entry);
    } else {
      entry = {
        opening: DuckDbWarehouse.open(this.cfg, { ...this.options, uploads }),
        users: 0,
        evicted: false,
      };
      this.entries.set(key, entry);
      entry.opening.catch(() => this.entries.get(key) === entry && this.entries.delete(key));
      this.evict();
    }
    entry.users++;
    try {
      return await fn(await entry.opening);
    } finally {
      entry.users--;
      if (entry.evicted && entry.users === 0) await close(entry);
    }
  }

  /** Closes every instance (the worker is closing). */
  async closeAll(): Promise<void> {
    const all = [...this.entries.values()];
    this.entries.clear();
    await Promise.all(all.map(close));
  }

  private evict(): void {
    while (this.entries.size > KEEP) {
      const [oldest, entry] = this.entries.entries().next().value as [string, Entry];
      this.entries.delete(oldest);
      entry.evicted = true;
      if (entry.users === 0) void close(entry);
    }
  }
}

/** The same files (same locations: a new upload of a name is a new file) share an instance. */
function keyOf(uploads: readonly UploadRef[]): string {
  return uploads
    .map((u) => `${u.name}=${u.location}`)
    .sort()
    .join("\n");
}

async function close(entry: Entry): Promise<void> {
  await entry.opening.then((wh) => wh.close()).catch(() => undefined);
}

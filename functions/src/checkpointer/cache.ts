/**
 * What one checkpointer instance remembers between calls, so a turn writes only what is new
 * without reading first.
 *
 * - Blob ids known to be stored per thread (with their TTL expiry): `put` skips writing them.
 * - Checkpoint documents recently written or read: their channel entries (so `put` carries over
 *   unchanged channels from the parent without reading it) and, when exactly known, their update
 *   time and pending-write keys (so `putWrites` can commit with a precondition and no read).
 *
 * Everything here is a hint checked by Firestore: a stale update time fails the precondition and
 * the caller re-reads. Only the blob set is trusted; it is dropped whenever a thread is found empty
 * or deleted, which is when blobs disappear.
 */
import type { Timestamp } from "@google-cloud/firestore";
import type { ChannelEntry } from "./layout";
import { Lru } from "../lru";

/** A checkpoint document as this instance last saw it. */
export interface KnownDoc {
  channels?: Record<string, ChannelEntry>;
  /** Set only when the exact pending-write keys at `updateTime` are known. */
  writes?: { updateTime: Timestamp; keys: Set<string> };
}

/** Per-instance hints; bounded so a long-lived function instance does not grow without end. */
export class CheckpointerCache {
  private readonly blobs = new Lru<string, Map<string, number>>(500);
  private readonly docs = new Lru<string, KnownDoc>(2000);
  private readonly chains = new Map<string, Promise<unknown>>();

  /** Expiry (ms, Infinity without TTL) of a blob known to exist, or undefined. */
  blobExpiry(threadPath: string, id: string): number | undefined {
    return this.blobs.get(threadPath)?.get(id);
  }

  rememberBlob(threadPath: string, id: string, expiresAt: number) {
    let m = this.blobs.get(threadPath);
    if (!m) {
      m = new Map();
      this.blobs.set(threadPath, m);
    }
    if (m.size > 50_000) m.clear();
    m.set(id, expiresAt);
  }

  doc(path: string): KnownDoc | undefined {
    return this.docs.get(path);
  }

  rememberDoc(path: string, doc: KnownDoc) {
    this.docs.set(path, doc);
  }

  /** Drops everything known about a thread (it was found empty or deleted). */
  forgetThread(threadPath: string) {
    this.blobs.delete(threadPath);
    for (const key of Array.from(this.docs.keys()))
      if (key.startsWith(`${threadPath}/`)) this.docs.delete(key);
  }

  /**
   * Runs `fn` after every earlier call queued for `key` has settled. LangGraph issues putWrites for
   * a checkpoint without waiting for that checkpoint's put; queuing them per document keeps this
   * instance's own writes in order and free of precondition conflicts with each other.
   */
  serialize<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.chains.get(key) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    const tail = next.catch(() => undefined);
    this.chains.set(key, tail);
    void tail.then(() => {
      if (this.chains.get(key) === tail) this.chains.delete(key);
    });
    return next;
  }
}

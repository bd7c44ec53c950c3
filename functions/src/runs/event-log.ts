/**
 * A run's event log in Firestore, so its stream can be rejoined from any instance: every event
 * the run sends gets an id (1, 2, 3 … in order) and is appended to `threads/{threadId}/runs/
 * {runId}/log/{n}`. Writes are batched, never one per token: the pending events are flushed after
 * `flushMs`, when they reach `flushBytes`, and at every phase boundary (not `ingress` nor `done`),
 * one document per write (flushes asked for while a write is on its way are joined into the next
 * one; an event bigger than a document — a large result — is split across consecutive documents
 * and joined again by the reader). A run that is ending writes no more on a timer: what it sends
 * then goes with the end marker. Flushes run one at a time, in order, and never hold up the live
 * stream. The last document carries `end` (the run's outcome); every document carries `expireAt`
 * for a Firestore TTL policy.
 *
 * A long string (an image in the question, as every `values` event repeats it) is written once per
 * log, later occurrences as references (log-strings.ts): a run with a 2 MB image stores it once
 * instead of once per step (`npm run bench -- attachment-cost`).
 *
 * The reader replays what is stored after a `Last-Event-ID` and follows the live run through a
 * listener on the log, ending at `end` — or, if the run's instance is lost before writing it, once
 * the run no longer holds its thread's lease.
 */
import type { CollectionReference, DocumentReference, Timestamp } from "firebase-admin/firestore";
import type { RunOutcome } from "../contract/protocol";
import { LongStringReader, LongStringWriter } from "./log-strings";

/** Bytes per log document (Firestore's limit for a document is 1 MiB). */
const DOC_BYTES = 900 * 1024;

/**
 * Event ids of a continued run: attempt k numbers its events from k·2²⁴ + 1, above every id an
 * earlier attempt could have sent — logged or not (an event is sent before its write lands) — so a
 * client rejoining with the last id it saw misses nothing and gets nothing twice. v2's seq packs
 * the id in 32 bits (http/v2/events.ts): room for 255 attempts of 16 M events.
 */
const ATTEMPT_IDS = 2 ** 24;

/** The first event id of attempt `attempt` (0: 1, as a run that never moved). */
const firstIdOf = (attempt: number) => attempt * ATTEMPT_IDS + 1;

/** Commits a log write's batch itself (a progress checkpoint riding with it: RunCheckpointer.progress). */
export type LogCommit = (
  along: (batch: import("firebase-admin/firestore").WriteBatch) => void,
) => Promise<unknown>;

export interface LoggedEvent {
  id: number;
  event: string;
  data: unknown;
}

/** How a run ended, as the log's last document says. */
export interface RunEnd {
  status: RunOutcome;
}

interface LogDoc {
  n: number;
  /** Newline-terminated JSON lines `[id, event, data]`; a line may continue in the next document. */
  bytes: Buffer;
  /** The id of the last event that ends in this document (0 if none does). */
  lastId: number;
  end?: RunEnd;
  expireAt: Timestamp;
}

/** A run's event log, below its run document (`ThreadStore.runRef`). */
export function runLog(run: DocumentReference): CollectionReference {
  return run.collection("log");
}

const docId = (n: number) => String(n).padStart(6, "0");

export interface RunLogWriterOptions {
  /** Longest time an event waits before it is written. Default 250 ms. */
  flushMs?: number;
  /** Pending bytes that trigger a write at once. Default 256 KiB. */
  flushBytes?: number;
  /** How long the log is kept (the TTL policy deletes it after). */
  ttlMs: number;
  /** A continuation's place in the log: its attempt (ids from `firstIdOf`) and the next document number. */
  continues?: { attempt: number; nextDoc: number };
  /** A Firestore `Timestamp` factory (firebase-admin's, passed in to keep this module light). */
  timestamp: { fromMillis(ms: number): Timestamp };
  onError?: (err: unknown) => void;
}

export class RunLogWriter {
  private seq: number;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private pendingLastId = 0;
  private nextDoc: number;
  /** How the next write is committed, when something rides with it. */
  private via: LogCommit | undefined;
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();
  /** A write is on its way (the drain loop runs). */
  private writing = false;
  /** A flush was asked for since the current write took what was pending. */
  private wanted = false;
  /** The end marker, until a write takes it. */
  private end: RunEnd | undefined;
  private failed: unknown;
  /** The run is ending: what is pending now or appended later waits for `close` (one write with the end marker). */
  private ending = false;
  /** Documents written so far (one Firestore write each). */
  writes = 0;

  constructor(
    private readonly log: CollectionReference,
    private readonly opts: RunLogWriterOptions,
  ) {
    this.seq = firstIdOf(opts.continues?.attempt ?? 0) - 1;
    this.nextDoc = opts.continues?.nextDoc ?? 0;
  }

  /** Appends an event and returns its id; written within `flushMs`. */
  append(event: string, data: unknown): number {
    return this.appendJson(event, JSON.stringify(data), data);
  }

  /** `append` with the data already serialized as JSON (`json` is `data`'s). */
  appendJson(event: string, json: string, data: unknown): number {
    const id = ++this.seq;
    const logged = this.longStrings.logged(json, data);
    const line = Buffer.from(`[${id},${JSON.stringify(event)},${logged}]\n`, "utf8");
    this.pending.push(line);
    this.pendingBytes += line.length;
    this.pendingLastId = id;
    if (this.pendingBytes >= (this.opts.flushBytes ?? 256 * 1024)) this.flush();
    else if (!this.ending) this.timer ??= setTimeout(() => this.flush(), this.opts.flushMs ?? 250);
    return id;
  }

  private readonly longStrings = new LongStringWriter();

  /**
   * Writes what is pending now (a phase boundary). `via` commits that write's batch, with writes
   * of its own (the run's progress checkpoint): stored together or not at all.
   */
  boundary(via?: LogCommit): void {
    if (via) this.via = via;
    this.flush();
  }

  /** The id of the last event appended. */
  get lastId(): number {
    return this.seq;
  }

  /**
   * The run is ending (its last checkpoint is written next, then `close`): no timed write any more,
   * so what is pending goes in the end marker's write instead of a write of its own beside it.
   * Settles once the write on its way (if any) has landed: the run's last checkpoint commit, which
   * deletes the progress document a boundary's write may still be storing, waits for it instead of
   * contending with it (Firestore aborts one of two commits on the same document, and the retried
   * one would store the progress again after the run ended).
   */
  endsSoon(): Promise<void> {
    this.ending = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    return this.chain;
  }

  /**
   * Writes everything pending and the end marker; rejects if any write failed. `via` commits that
   * last write's batch with writes of its own (the run's release), as `boundary` does — unless a
   * boundary's is still waiting (its progress is not dropped; the caller sees `via` not called).
   */
  async close(end: RunEnd, via?: LogCommit): Promise<void> {
    if (via && !this.via) this.via = via;
    this.flush(end);
    await this.chain;
    if (this.failed) throw this.failed as Error;
  }

  /**
   * Asks for what is pending to be written. Writes go one at a time, in order; what is asked for
   * while one is on its way joins the next (one document for everything that waited, instead of
   * one per request): nothing is written later than it would be, with fewer writes.
   */
  private flush(end?: RunEnd): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (end) this.end = end;
    if (this.pendingBytes === 0 && !this.end && !this.via) return;
    this.wanted = true;
    if (!this.writing) this.chain = this.drain();
  }

  private async drain(): Promise<void> {
    this.writing = true;
    try {
      while (this.wanted) {
        this.wanted = false;
        const bytes = Buffer.concat(this.pending);
        const lastId = this.pendingLastId;
        const end = this.end;
        this.pending = [];
        this.pendingBytes = 0;
        this.end = undefined;
        const via = this.via;
        this.via = undefined;
        if (bytes.length || end || via) await this.write(bytes, lastId, end, via);
      }
    } finally {
      this.writing = false;
    }
  }

  private async write(
    bytes: Buffer,
    lastId: number,
    end: RunEnd | undefined,
    via: LogCommit | undefined,
  ): Promise<void> {
    if (this.failed) return;
    const expireAt = this.opts.timestamp.fromMillis(Date.now() + this.opts.ttlMs);
    const parts = bytes.length || end ? Math.max(1, Math.ceil(bytes.length / DOC_BYTES)) : 0;
    const first = this.nextDoc;
    this.nextDoc += parts;
    // Documents are created, never overwritten: after a continuation took the run over (its
    // hand-over document holds the next number), this writer's next write fails, and so stops.
    const add = (batch: import("firebase-admin/firestore").WriteBatch) => {
      for (let i = 0; i < parts; i++) {
        const last = i === parts - 1;
        const doc: LogDoc = {
          n: first + i,
          bytes: bytes.subarray(i * DOC_BYTES, (i + 1) * DOC_BYTES),
          lastId: last ? lastId : 0,
          expireAt,
          ...(last && end ? { end } : {}),
        };
        batch.create(this.log.doc(docId(first + i)), doc);
      }
    };
    try {
      if (via) await via(add);
      else {
        const batch = this.log.firestore.batch();
        add(batch);
        await batch.commit();
      }
      this.writes += parts;
    } catch (err) {
      this.failed = err;
      this.opts.onError?.(err);
    }
  }
}

/** Parses log documents in order into events, keeping a line that continues in the next document. */
class LogDecoder {
  private carry = Buffer.alloc(0);
  private readonly longStrings = new LongStringReader();
  next = 0;
  end: RunEnd | undefined;

  /** Feeds document `n` (must be `this.next`); returns the events that end in it. */
  feed(doc: { n: number; bytes: Buffer | Uint8Array; end?: RunEnd }): LoggedEvent[] {
    if (doc.n !== this.next) throw new Error(`log document ${doc.n} out of order (expected ${this.next})`);
    this.next++;
    const buf = Buffer.concat([this.carry, Buffer.from(doc.bytes)]);
    const events: LoggedEvent[] = [];
    let start = 0;
    for (let i = buf.indexOf(10); i >= 0; i = buf.indexOf(10, start)) {
      const [id, event, data] = this.longStrings.parse(buf.subarray(start, i)) as [number, string, unknown];
      events.push({ id, event, data });
      start = i + 1;
    }
    this.carry = buf.subarray(start);
    if (doc.end) this.end = doc.end;
    return events;
  }
}

export interface FollowOptions {
  /** Deliver events with ids above this one. */
  after: number;
  onEvent: (e: LoggedEvent) => void;
  /**
   * Called after the events one stored document holds have been delivered: events the writer
   * flushed together reach every reader together, the same on every instance.
   */
  onBatch?: () => void;
  /**
   * Watches whether the run still holds its thread; `gone()` is called once it does not (released
   * or expired), so a run whose instance died without an end marker does not leave readers hanging.
   */
  watchRun: (gone: () => void) => () => void;
  signal?: AbortSignal;
}

/**
 * Replays the log after `after` and follows it until the run's end marker. Resolves with how the
 * run ended, or `lost` when the run stopped holding its thread without writing one.
 */
export function followRunLog(
  log: CollectionReference,
  opts: FollowOptions,
): Promise<RunEnd | "lost" | "aborted"> {
  return new Promise((resolve) => {
    const decoder = new LogDecoder();
    const waiting = new Map<number, LogDoc>();
    let settled = false;
    let stopLog = () => {};
    let stopRun = () => {};
    const settle = (how: RunEnd | "lost" | "aborted") => {
      if (settled) return;
      settled = true;
      stopLog();
      stopRun();
      opts.signal?.removeEventListener("abort", onAbort);
      resolve(how);
    };
    const onAbort = () => settle("aborted");
    if (opts.signal?.aborted) return settle("aborted");
    opts.signal?.addEventListener("abort", onAbort, { once: true });

    const take = (doc: LogDoc) => {
      waiting.set(doc.n, doc);
      // Documents are delivered in order, whatever order the listener reports them in.
      for (let d = waiting.get(decoder.next); d && !settled; d = waiting.get(decoder.next)) {
        waiting.delete(d.n);
        for (const e of decoder.feed(d)) if (e.id > opts.after) opts.onEvent(e);
        opts.onBatch?.();
        if (decoder.end) settle(decoder.end);
      }
    };
    stopLog = log.orderBy("n").onSnapshot(
      (snap) => {
        for (const change of snap.docChanges())
          if (change.type === "added") take(change.doc.data() as LogDoc);
      },
      () => settle("lost"),
    );
    stopRun = opts.watchRun(() => {
      // The run let go of its thread: its end marker (written before the release) may still be on
      // its way through the listener, so read the rest of the log once before giving up.
      void log
        .where("n", ">=", decoder.next)
        .orderBy("n")
        .get()
        .then((rest) => {
          for (const d of rest.docs) take(d.data() as LogDoc);
          settle(decoder.end ?? "lost");
        })
        .catch(() => settle("lost"));
    });
  });
}

/**
 * DuckDB in worker processes, apart from the function: the local engine as the function uses it.
 *
 * Why: DuckDB bounds its buffer pool with `memory_limit`, but not the values a query builds outside
 * it — `SELECT REPEAT('x', 1000000) FROM shop.orders` materialises gigabytes before the first row
 * is read, and in the function's own process that ends the instance and every run on it. Each
 * worker runs under an address-space limit (`ulimit -v`), so such a query fails inside DuckDB as
 * "Out of Memory" (a `too_large` tool error) and, should anything still break, only that worker
 * ends: its calls fail with worded errors and the next call starts a new worker.
 *
 * Calls go to the least busy worker; up to `duckdb.workers` are started, each on first need.
 */
import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { ConfigError, type WarehouseConfig } from "../../config";
import type { UploadRef } from "../uploads/types";
import {
  WarehouseError,
  type Caller,
  type DryRunResult,
  type QueryContext,
  type QueryResult,
  type TableInfo,
  type TableSchema,
  type Warehouse,
} from "../types";
import { tooLarge } from "./errors";
import { childEntry, probeBaseMiB, spawnUnderLimit } from "./spawn";
import { DUCKDB_DIALECT_NOTE, type DuckDbWarehouseOptions } from "./warehouse";
import type { WireContext, WorkerCall, WorkerReply, WorkerRequest } from "./wire";
import { fromWire } from "../wire-error";

/** Room over the probed start-up address space: threads' stacks and the allocator's arenas as queries begin. */
const HEADROOM_MIB = 256;
/** How long past the query timeout a worker may stay silent before it is ended. */
const GRACE_MS = 5_000;

/** The address-space limit of one worker: what it takes at start plus headroom plus DuckDB's memory limit. */
export async function workerAddressSpaceMiB(cfg: WarehouseConfig): Promise<number> {
  const base = await probeBaseMiB(cfg.duckdb.threads);
  return Math.ceil(base) + HEADROOM_MIB + cfg.duckdb.memoryMiB;
}

type Pending = {
  op: WorkerCall["op"];
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
  onEstimate?: (dry: DryRunResult) => void;
};

class Worker {
  readonly pending = new Map<number, Pending>();
  /** Set once a query ran out of memory here: no new calls, ended when its calls are done. */
  retiring = false;
  private exited = false;

  constructor(
    readonly child: ChildProcess,
    private readonly onExit: (w: Worker) => void,
  ) {
    child.on("message", (reply: WorkerReply) => this.receive(reply));
    child.on("exit", (code, signal) => this.fail(code, signal));
    child.on("error", (err) => this.fail(null, null, err));
  }

  call(message: WorkerCall, p: Pending): void {
    if (this.exited) return p.reject(workerGone(p.op, null, null));
    this.pending.set(message.id, p);
    this.child.send(message);
  }

  cancel(id: number): void {
    if (!this.exited && this.child.connected) this.child.send({ id, op: "cancel" } satisfies WorkerCall);
  }

  private receive(reply: WorkerReply): void {
    const p = this.pending.get(reply.id);
    if (!p) return;
    if (reply.kind === "estimate") return p.onEstimate?.(reply.dry);
    this.pending.delete(reply.id);
    if (reply.kind === "result") p.resolve(reply.value);
    else {
      const err = fromWire(reply.error);
      // Memory the allocator kept after an out-of-memory query can starve the next one: replace
      // this worker once its other calls are answered.
      if (err instanceof WarehouseError && err.category === "too_large") this.retire();
      p.reject(err);
    }
    if (this.retiring && this.pending.size === 0) this.kill();
  }

  retire(): void {
    this.retiring = true;
    this.onExit(this);
  }

  private fail(code: number | null, signal: NodeJS.Signals | null, err?: Error): void {
    if (this.exited) return;
    this.exited = true;
    for (const p of this.pending.values()) p.reject(workerGone(p.op, code, signal, err));
    this.pending.clear();
    this.onExit(this);
  }

  kill(): void {
    this.peakMiB = residentPeakMiB(this.child.pid);
    this.child.kill("SIGKILL");
  }

  /** The worker's peak resident memory when it was ended (Linux), for the pool's record. */
  peakMiB?: number;
}

/** A process's peak resident memory (VmHWM), MiB; undefined where /proc is not there. */
function residentPeakMiB(pid: number | undefined): number | undefined {
  try {
    const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return kb === undefined ? undefined : Number(kb) / 1024;
  } catch {
    return undefined;
  }
}

/** What a call learns when its worker ended under it: a query was the likely cause. */
function workerGone(op: string, code: number | null, signal: NodeJS.Signals | null, err?: Error): Error {
  const how = err ? err.message : signal ? `signal ${signal}` : `exit code ${code}`;
  if (op === "query" || op === "dryRun") return tooLarge(`the DuckDB worker ended (${how})`);
  return new WarehouseError("internal", `The local DuckDB worker ended (${how}); ask again.`);
}

export class DuckDbPool implements Warehouse {
  readonly dialect = "duckdb" as const;
  readonly dialectNote = DUCKDB_DIALECT_NOTE;
  private readonly workers: Worker[] = [];
  /** The last workers retired or ended (bounded), with their peak memory once ended. */
  private readonly ended: Worker[] = [];
  private starting?: Promise<Worker>;
  private tables?: TableInfo[];
  private nextId = 1;
  private closed = false;

  private constructor(
    private readonly cfg: WarehouseConfig,
    private readonly options: DuckDbWarehouseOptions,
  ) {}

  /** Starts the first worker (which opens the data, or reports why it cannot). */
  static async open(cfg: WarehouseConfig, options: DuckDbWarehouseOptions = {}): Promise<DuckDbPool> {
    const pool = new DuckDbPool(cfg, options);
    pool.workers.push(await pool.start());
    return pool;
  }

  /** Worker process ids (tests and benchmarks measure and end them). */
  get pids(): number[] {
    return this.workers.map((w) => w.child.pid!).filter(Boolean);
  }

  /** Peak resident memory, MiB, of every worker now running and of the last ones ended. */
  peaksMiB(): number[] {
    const running = this.workers.map((w) => residentPeakMiB(w.child.pid));
    return [...running, ...this.ended.map((w) => w.peakMiB)].filter((x): x is number => x !== undefined);
  }

  private async start(): Promise<Worker> {
    const limitMiB = await workerAddressSpaceMiB(this.cfg);
    const child = spawnUnderLimit(childEntry(__filename, "worker"), limitMiB);
    const worker = new Worker(child, (w) => {
      const i = this.workers.indexOf(w);
      if (i >= 0) this.workers.splice(i, 1);
      if (!this.ended.includes(w)) this.ended.push(w);
      if (this.ended.length > 8) this.ended.shift();
    });
    const opened = this.send<null>(worker, {
      id: this.nextId++,
      op: "open",
      cfg: this.cfg,
      options: this.options,
    });
    return opened.then(
      () => worker,
      (err: Error) => {
        worker.kill();
        if (err instanceof ConfigError) throw err;
        throw new ConfigError(
          `The DuckDB worker process could not start under its ${limitMiB} MiB ` +
            `address-space limit (${err.message}). Raise QUARRY_DUCKDB_MEMORY_MIB, or set ` +
            "QUARRY_DUCKDB_WORKERS=0 to run DuckDB in the function's own process.",
        );
      },
    );
  }

  /** The least busy worker; a new one while fewer than `duckdb.workers` run and all are busy. */
  private async pick(): Promise<Worker> {
    if (this.closed) throw new WarehouseError("internal", "The DuckDB warehouse is closed.");
    const idle = this.workers.find((w) => w.pending.size === 0 && !w.retiring);
    if (idle) return idle;
    if (this.workers.length < Math.max(this.cfg.duckdb.workers, 1)) {
      this.starting ??= this.start().finally(() => (this.starting = undefined));
      const w = await this.starting;
      if (!this.workers.includes(w)) this.workers.push(w);
      return w;
    }
    return this.workers.reduce((a, b) => (b.pending.size < a.pending.size ? b : a));
  }

  private send<T>(worker: Worker, message: WorkerCall, ctx?: QueryContext): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      worker.call(message, {
        op: message.op,
        resolve: resolve as (v: unknown) => void,
        reject,
        onEstimate: ctx?.onEstimate,
      });
    });
  }

  private async run<T>(message: WorkerRequest, ctx?: QueryContext): Promise<T> {
    const worker = await this.pick();
    const id = this.nextId++;
    const onAbort = () => worker.cancel(id);
    ctx?.signal?.addEventListener("abort", onAbort, { once: true });
    // A worker stuck past its own timeout (native code that ignores the interrupt) is ended.
    const limit = ctx ? setTimeout(() => worker.kill(), this.timeoutMs() + GRACE_MS) : undefined;
    try {
      return await this.send<T>(worker, { ...message, id } as WorkerCall, ctx);
    } finally {
      clearTimeout(limit);
      ctx?.signal?.removeEventListener("abort", onAbort);
    }
  }

  private timeoutMs(): number {
    return this.options.timeoutMs ?? this.cfg.bigquery.timeoutMs;
  }

  async listTables(caller?: Caller): Promise<TableInfo[]> {
    // A conversation's uploads: its own instance in the worker (duckdb/threads.ts).
    if (caller?.uploads?.length) return this.run({ op: "listTables", uploads: [...caller.uploads] });
    // The tables are fixed once the data is open: asked once, then served from here.
    this.tables ??= await this.run<TableInfo[]>({ op: "listTables" });
    return this.tables.map((t) => ({ ...t }));
  }

  describeTable(table: string, caller?: Caller): Promise<TableSchema> {
    return this.run({ op: "describeTable", table, ...uploadsOf(caller) });
  }

  columnValues(table: string, column: string, limit: number, caller?: Caller): Promise<string[] | null> {
    return this.run({ op: "columnValues", table, column, limit, ...uploadsOf(caller) });
  }

  dryRun(sql: string, ctx: QueryContext): Promise<DryRunResult> {
    return this.run({ op: "dryRun", sql, ctx: wireContext(ctx) }, ctx);
  }

  query(sql: string, ctx: QueryContext): Promise<QueryResult> {
    if (ctx.signal?.aborted) {
      return Promise.reject(
        new WarehouseError("timeout", "The query was cancelled because the run was cancelled."),
      );
    }
    return this.run({ op: "query", sql, ctx: wireContext(ctx) }, ctx);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const w of [...this.workers.splice(0), ...this.ended]) if (w.child.exitCode === null) w.kill();
  }
}

function uploadsOf(caller: Caller | undefined): { uploads?: UploadRef[] } {
  return caller?.uploads?.length ? { uploads: [...caller.uploads] } : {};
}

function wireContext(ctx: QueryContext): WireContext {
  const { signal: _s, onEstimate: _e, ...rest } = ctx;
  return rest;
}

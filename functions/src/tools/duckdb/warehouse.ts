/**
 * The embedded DuckDB engine, Quarry's local default.
 *
 * Safety by construction, then by check: the data is ATTACHed read-only (the sample dataset or a
 * configured file) and registered CSV/Parquet files are copied into memory at open; after that
 * file system access, extension loading and every setting are switched off and locked, so SQL
 * cannot read files or change the rules. On top, each query must be a single statement whose
 * engine-reported type is SELECT, and read only listed tables.
 */
import type { DuckDBConnection, DuckDBInstance, DuckDBPreparedStatement } from "@duckdb/node-api";
import { ConfigError, type WarehouseConfig } from "../../config";
import { checkSqlInput, formatBytes, requireInScope, requireSelect, throwIfAborted } from "../policy";
import { RowCollector, renderPreview } from "../result";
import {
  WarehouseError,
  type DryRunResult,
  type QueryContext,
  type QueryResult,
  type TableInfo,
  type TableSchema,
  type Warehouse,
} from "../types";
import {
  refuseIntrospection,
  refuseUnscopedNames,
  refuseUnscopedTables,
  scrubSuggestions,
} from "../scope-gate";
import { duckDbNotFound, mapDuckDbError } from "./errors";
import { ByteEstimator } from "./estimate";
import { refuseUnscopedParse } from "./parsed-refs";
import { inScope as scopeAllows } from "../scope";
import { ensureSampleDb } from "./sample-db";
import { SAMPLE_SCHEMA } from "./sample-schema";
import { columnInfo, createNormalizer } from "./values";
import { aliasFor, readTables, registerFiles, registerUploads, whereTable } from "./setup";
import { ident, lit, quoteId } from "../sql-text";
import type { UploadRef } from "../uploads/types";
import { withUploads } from "../scope";

type Duck = typeof import("@duckdb/node-api");

export interface DuckDbWarehouseOptions {
  /** Directory for the generated sample database file (default: the OS temp dir). */
  sampleDir?: string;
  /** A query running longer is interrupted, ms (default: the warehouse's BigQuery timeout). */
  timeoutMs?: number;
  /**
   * One conversation's uploaded tables (Parquet files), copied in as `uploads.<name>` before the
   * lock: an instance with uploads serves that conversation only (duckdb/threads.ts).
   */
  uploads?: readonly UploadRef[];
  /**
   * Told each time a query's statement is handed to DuckDB, past its dry run: the known point where
   * a test cancels a query mid-run (the worker pool never sets it; a function does not cross).
   */
  onRunning?: () => void;
}

/** What the planner is told about DuckDB's SQL. */
export const DUCKDB_DIALECT_NOTE =
  "SQL dialect: DuckDB (PostgreSQL-like). Name tables as schema.table exactly as list_tables shows them " +
  "(dataset.table). Use date_trunc('month', d), strftime(d, '%Y-%m'), extract(year FROM d), " +
  "COUNT(DISTINCT x), ILIKE; DECIMAL money sums are exact. Send one SELECT statement only: " +
  "no DDL/DML, no files, no settings.";

export class DuckDbWarehouse implements Warehouse {
  readonly dialect = "duckdb" as const;
  readonly dialectNote = DUCKDB_DIALECT_NOTE;
  private tables: TableInfo[] = [];
  /** Schemas of the in-memory database that hold registered files (`files`, and datasets named in QUARRY_DUCKDB_FILES). */
  private readonly fileSchemas = new Set<string>();
  private closed = false;
  /** The uploads this instance holds (empty: the shared instance, which has no `uploads` schema). */
  private uploads: readonly UploadRef[] = [];
  private readonly estimator = new ByteEstimator();

  private constructor(
    private readonly duck: Duck,
    private readonly instance: DuckDBInstance,
    private readonly cfg: WarehouseConfig,
    private readonly timeoutMs: number,
    private readonly onRunning?: () => void,
  ) {}

  /** Opens the configured database read-only (the generated sample dataset unless `duckdb.path` is set). */
  static async open(cfg: WarehouseConfig, options: DuckDbWarehouseOptions = {}): Promise<DuckDbWarehouse> {
    const duck: Duck = await import("@duckdb/node-api");
    // The buffer pool and threads are bounded: joins, sorts and aggregates past the limit end as
    // an "Out of Memory" error (too_large), and the worker process's address space is capped
    // too (duckdb/pool.ts), so values built outside the pool cannot grow without a bound either.
    const { memoryMiB, threads } = cfg.duckdb;
    const instance = await duck.DuckDBInstance.create(":memory:", {
      ...(memoryMiB ? { memory_limit: `${memoryMiB}MB` } : {}),
      ...(threads ? { threads: String(threads) } : {}),
    });
    const wh = new DuckDbWarehouse(
      duck,
      instance,
      cfg,
      options.timeoutMs ?? cfg.bigquery.timeoutMs,
      options.onRunning,
    );
    try {
      await wh.setUp(options);
    } catch (err) {
      instance.closeSync();
      throw err;
    }
    return wh;
  }

  private async setUp(options: DuckDbWarehouseOptions): Promise<void> {
    const conn = await this.instance.connect();
    try {
      const file = this.cfg.duckdb.path ?? (await ensureSampleDb(options.sampleDir));
      const alias = this.cfg.duckdb.path ? aliasFor(file) : SAMPLE_SCHEMA;
      await conn.run(`ATTACH ${lit(file)} AS "${alias}" (READ_ONLY)`).catch((err: unknown) => {
        throw new ConfigError(
          `DuckDB could not open ${file} (QUARRY_DUCKDB_PATH): ${(err as Error).message}`,
        );
      });
      await registerFiles(conn, this.cfg, alias, this.fileSchemas);
      await registerUploads(conn, options.uploads ?? [], this.fileSchemas);
      this.uploads = options.uploads ?? [];
      // From here on SQL cannot touch the file system, load extensions, or undo these settings.
      await conn.run("SET enable_external_access = false");
      await conn.run("SET autoinstall_known_extensions = false");
      await conn.run("SET autoload_known_extensions = false");
      await conn.run("SET lock_configuration = true");
      this.tables = await readTables(conn, alias, this.fileSchemas);
    } finally {
      conn.closeSync();
    }
  }

  async listTables(): Promise<TableInfo[]> {
    return this.tables.map((t) => ({ ...t }));
  }

  async describeTable(table: string): Promise<TableSchema> {
    const info = this.resolve(table);
    const conn = await this.connect();
    try {
      const comments = await conn.runAndReadAll(
        `SELECT column_name, comment FROM duckdb_columns() WHERE ${whereTable(info.id, this.fileSchemas)} ORDER BY column_index`,
      );
      const byName = new Map((comments.getRows() as [string, string | null][]).map(([n, c]) => [n, c]));
      const sample = await conn.runAndReadAll(`SELECT * FROM ${quoteId(info.id)} LIMIT 5`);
      const names = sample.deduplicatedColumnNames();
      const types = sample.columnTypes();
      const norm = createNormalizer(this.duck);
      const columns = names.map((n, i) => {
        const c = columnInfo(this.duck, n, types[i]);
        const description = byName.get(n);
        return description ? { ...c, description } : c;
      });
      const sampleRows = sample
        .getRows()
        .map((r) => Object.fromEntries(r.map((v, i) => [names[i], norm(v)])));
      return { ...info, columns, sampleRows };
    } finally {
      conn.closeSync();
    }
  }

  async dryRun(sql: string, ctx: QueryContext): Promise<DryRunResult> {
    const conn = await this.connect();
    try {
      const { dry, prepared } = await this.prepare(conn, sql, ctx, ctx.estimateBytes === true);
      prepared.destroySync();
      return dry;
    } finally {
      conn.closeSync();
    }
  }

  async query(sql: string, ctx: QueryContext): Promise<QueryResult> {
    const started = Date.now();
    const conn = await this.connect();
    let interruptedBy: "timeout" | "cancel" | undefined;
    let again: NodeJS.Timeout | undefined;
    // DuckDB drops an interrupt that arrives before the statement runs, so once asked to stop it
    // re-issues the interrupt until the query has settled.
    const interrupt = (why: "timeout" | "cancel") => {
      if (interruptedBy) return;
      interruptedBy = why;
      conn.interrupt();
      again = setInterval(() => conn.interrupt(), 50);
    };
    const timer = setTimeout(() => interrupt("timeout"), this.timeoutMs);
    const onAbort = () => interrupt("cancel");
    if (ctx.signal?.aborted) interrupt("cancel");
    else ctx.signal?.addEventListener("abort", onAbort, { once: true });
    try {
      const { dry, prepared } = await this.prepare(conn, sql, ctx, ctx.bytesCap !== undefined);
      refuseOverCap(dry, ctx.bytesCap);
      ctx.onEstimate?.(dry);
      prepared.destroySync();
      if (interruptedBy) throw new Error("INTERRUPT");
      const reading = this.readBounded(conn, dry.sql, () => interruptedBy);
      this.onRunning?.();
      const read = await reading;
      if (interruptedBy) throw new Error("INTERRUPT");
      const { columns, collector } = read;
      let total = read.seen;
      let atLeast = false;
      if (collector.truncated) {
        // Reading stopped at a cap: count the rest only if the engine can do it cheaply.
        const counted = await this.countRows(conn, dry.sql, started + this.timeoutMs - Date.now());
        if (counted === undefined) atLeast = true;
        else total = Math.max(counted, total);
      }
      if (interruptedBy) throw new Error("INTERRUPT");
      const { preview, previewRows } = renderPreview(
        columns,
        collector.rows,
        total,
        collector.truncated,
        this.cfg,
      );
      return {
        sql: dry.sql,
        columns,
        rows: collector.rows,
        preview,
        previewRows,
        totalRows: total,
        ...(atLeast ? { totalRowsAtLeast: true } : {}),
        truncated: collector.truncated,
        estimatedBytes: dry.estimatedBytes,
        bytesProcessed: dry.estimatedBytes,
        bytesBilled: 0,
        cacheHit: false,
        durationMs: Date.now() - started,
      };
    } catch (err) {
      throw mapDuckDbError(err, interruptedBy);
    } finally {
      clearTimeout(timer);
      clearInterval(again);
      ctx.signal?.removeEventListener("abort", onAbort);
      conn.closeSync();
    }
  }

  /**
   * Runs the checked statement with a LIMIT of one row past the cap (DuckDB then computes no more
   * rows than that), reading one row at a time and stopping at the row or character cap, so neither
   * DuckDB nor this process ever holds more of a result than the caps allow. A statement DuckDB will
   * not take as a subquery runs as it is, still read row by row up to the caps.
   */
  private async readBounded(conn: DuckDBConnection, sql: string, stopped: () => string | undefined) {
    const limited = `SELECT * FROM (\n${sql}\n) AS quarry_result LIMIT ${this.cfg.maxRows + 1}`;
    const prepared = await conn.prepare(limited).catch(() => conn.prepare(sql));
    let result: Awaited<ReturnType<DuckDBPreparedStatement["stream"]>>;
    try {
      result = await prepared.stream();
    } finally {
      prepared.destroySync();
    }
    const names = result.deduplicatedColumnNames();
    const columns = names.map((n, i) => columnInfo(this.duck, n, result.columnTypes()[i]));
    const norm = createNormalizer(this.duck);
    const collector = new RowCollector(this.cfg);
    let seen = 0;
    reading: for (;;) {
      if (stopped()) throw new Error("INTERRUPT");
      const chunk = await result.fetchChunk();
      if (!chunk || chunk.rowCount === 0) break;
      for (let r = 0; r < chunk.rowCount; r++) {
        seen++;
        const values = chunk.getRowValues(r);
        if (!collector.add(Object.fromEntries(values.map((v, i) => [names[i], norm(v)])))) break reading;
      }
    }
    return { columns, collector, seen };
  }

  /** `count(*)` of the statement within `budgetMs` (at most 5 s); undefined when it cannot be had cheaply. */
  private async countRows(
    conn: DuckDBConnection,
    sql: string,
    budgetMs: number,
  ): Promise<number | undefined> {
    if (budgetMs <= 0) return undefined;
    const timer = setTimeout(() => conn.interrupt(), Math.min(budgetMs, 5_000));
    try {
      const res = await conn.runAndReadAll(`SELECT count(*) FROM (\n${sql}\n) AS quarry_result`);
      return Number(res.getRows()[0][0]);
    } catch {
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.instance.closeSync();
  }

  async columnValues(table: string, column: string, limit: number): Promise<string[] | null> {
    const info = this.resolve(table);
    const conn = await this.connect();
    try {
      const col = ident(column);
      const res = await conn.runAndReadAll(
        `SELECT DISTINCT CAST(${col} AS VARCHAR) FROM ${quoteId(info.id)} WHERE ${col} IS NOT NULL LIMIT ${limit + 1}`,
      );
      const values = (res.getRows() as [string][]).map(([v]) => v);
      return values.length > limit ? null : values.sort();
    } finally {
      conn.closeSync();
    }
  }

  private async connect(): Promise<DuckDBConnection> {
    if (this.closed) throw new WarehouseError("internal", "The DuckDB warehouse is closed.");
    return this.instance.connect();
  }

  /**
   * Parses, checks and binds one statement; the statement type and tables come from DuckDB itself.
   * `estimate`: also the bytes it reads (estimate.ts; skipped where nobody asks, to spare a plan).
   */
  private async prepare(
    conn: DuckDBConnection,
    rawSql: string,
    ctx: QueryContext,
    estimate = false,
  ): Promise<{ dry: DryRunResult; prepared: DuckDBPreparedStatement }> {
    const sql = checkSqlInput(rawSql);
    throwIfAborted(ctx);
    // This instance holds one conversation's uploads (or none): they are in scope beside the person's.
    const scope = withUploads(ctx.scope, this.uploads);
    refuseIntrospection(sql, scope);
    refuseUnscopedNames(sql, scope, this.datasetNames(), duckDbNotFound);
    await refuseUnscopedParse(
      conn,
      sql,
      scope,
      this.tables.map((t) => t.id),
    );
    try {
      const extracted = await conn.extractStatements(sql);
      if (extracted.count > 1) requireSelect("SCRIPT", extracted.count);
      const prepared = await extracted.prepare(0);
      const statementType = this.duck.StatementType[prepared.statementType] ?? "UNKNOWN";
      try {
        requireSelect(statementType);
        // DuckDB's own parser names the tables (with aliases, which we drop). It is a report and a
        // second fence; the first is that nothing outside the allowed data is attached at all.
        const referencedTables = [...new Set(conn.getTableNames(sql, true).map((t) => t.split(/ AS /i)[0]))];
        refuseUnscopedTables(referencedTables, scope, duckDbNotFound);
        const listed = this.tables.filter((t) => scopeAllows(scope, t.id)).map((t) => t.id);
        requireInScope(referencedTables, (t) => this.inScope(t), listed.join(", "));
        const estimatedBytes = estimate ? await this.estimator.estimate(conn, sql) : 0;
        return { dry: { sql, statementType, estimatedBytes, referencedTables }, prepared };
      } catch (err) {
        prepared.destroySync();
        throw err;
      }
    } catch (err) {
      const known = this.tables.map((t) => t.id);
      throw scrubSuggestions(mapDuckDbError(err), scope, known);
    }
  }

  /** The dataset names SQL can qualify a table with (`shop`, `finance`, an attached file's alias). */
  private datasetNames(): string[] {
    return [...new Set(this.tables.map((t) => t.id.split(".")[0]))];
  }

  private inScope(table: string): boolean {
    const t = table.toLowerCase().replaceAll('"', "");
    if (/^(information_schema|pg_catalog)\./.test(t)) return true;
    return this.tables.some((info) => {
      const id = info.id.toLowerCase();
      const [db, ...rest] = id.split(".");
      return t === id || (rest.length === 1 && t === `${db}.main.${rest[0]}`) || t === `memory.${id}`;
    });
  }

  private resolve(table: string): TableInfo {
    const want = table.trim().toLowerCase().replaceAll('"', "").replaceAll("`", "");
    const found =
      this.tables.find((t) => t.id.toLowerCase() === want) ??
      this.tables.filter((t) => t.id.toLowerCase().endsWith(`.${want}`)).at(0);
    if (!found) {
      throw new WarehouseError(
        "not_found",
        `Table "${table}" is not available. Available tables: ${this.tables.map((t) => t.id).join(", ")}.`,
      );
    }
    return found;
  }
}

/** A step's own cap (an investigation's share of its budget), against DuckDB's estimate. */
function refuseOverCap(dry: DryRunResult, bytesCap: number | undefined): void {
  if (bytesCap === undefined || dry.estimatedBytes <= bytesCap) return;
  throw new WarehouseError(
    "budget",
    `The query would read an estimated ${formatBytes(dry.estimatedBytes)}, over the ` +
      `${formatBytes(bytesCap)} this step may use.`,
    { estimatedBytes: dry.estimatedBytes, budgetBytes: bytesCap },
  );
}

/**
 * The BigQuery engine (production). Every query is dry-run first with `createQueryJob({dryRun})`
 * — `query({dryRun})` would throw the statistics away — and refused unless the engine says it is
 * a single SELECT reading only allowed datasets and fitting the per-query and per-conversation
 * budgets. It then runs with `maximumBytesBilled`, labels, location, a server-side job timeout and
 * our own deadline that cancels the job; rows are capped by paging with maxResults N+1.
 */
import { refuseHiddenSources, refuseUnreportedSources } from "./hidden-sources";
import { randomUUID } from "node:crypto";
import type { BigQuery, Job } from "@google-cloud/bigquery";
import type { WarehouseConfig } from "../../config";
import { withTimeout } from "../../timeout";
import { transportFailure } from "../../transport";
import { checkSqlInput, formatBytes, requireInScope, requireSelect, throwIfAborted } from "../policy";
import { bigQueryNamesText, refuseUnscopedNames, refuseUnscopedTables, type NotFound } from "../scope-gate";
import { RowCollector, renderPreview } from "../result";
import {
  WarehouseError,
  type Caller,
  type CredentialSource,
  type DryRunResult,
  type QueryContext,
  type QueryResult,
  type TableInfo,
  type TableSchema,
  type Warehouse,
} from "../types";
import { createBigQueryClient } from "./client";
import { bigQueryNotFound, isRetryable, mapBigQueryError } from "./errors";
import { labelValue, quarryLabels } from "./labels";
import { normalizeRow, toColumns, type BqField } from "./normalize";
import { PersonClients, consentRefused, isDeniedOrGone, isUnauthorized, type ClientFactory } from "./people";
import { UploadFence } from "./upload-fence";

/** Rows asked for in a result's first page, before the row width is known. */
const FIRST_PAGE_ROWS = 500;

/** BigQuery bills at least 10 MB per referenced table, so the cap needs that much headroom. */
export const MIN_BILLED_PER_TABLE = 10 * 1024 * 1024;

export interface BigQueryWarehouseOptions {
  /** A ready client (tests); default: one built from the config. */
  client?: BigQuery;
  /** Retries of quota/rate/backend errors and dropped connections, where safe: attempts and first backoff. */
  retry?: { attempts: number; baseDelayMs: number };
  /**
   * User identity mode: every job, dry run and metadata read for a person runs with their own
   * access token from here, never the service account's. Absent: the service account runs all.
   */
  credentials?: CredentialSource;
  /** Builds a person's client (tests); default: one like the service account's, with their token. */
  personClient?: ClientFactory;
  /**
   * QUARRY_BQ_UPLOADS_DATASET (`config().uploads.bigqueryDataset`): its tables are fenced off for
   * every scope; a query reads only its own conversation's uploads (`ctx.uploads`) there.
   */
  uploadsDataset?: string;
}

/* eslint-disable @typescript-eslint/no-explicit-any -- BigQuery REST resources are loosely typed */
type Stats = {
  statementType?: string;
  totalBytesProcessed?: string;
  totalBytesBilled?: string;
  cacheHit?: boolean;
};

export class BigQueryWarehouse implements Warehouse {
  readonly dialect = "bigquery" as const;
  readonly dialectNote =
    "SQL dialect: BigQuery GoogleSQL. Name tables in backticks exactly as list_tables shows them " +
    "(`project.dataset.table`). Use DATE_TRUNC(d, MONTH), FORMAT_DATE('%Y-%m', d), EXTRACT(YEAR FROM d), " +
    "SAFE_DIVIDE, COUNT(DISTINCT x). Each query is dry-run and must fit a byte budget: select only the " +
    "columns you need (avoid SELECT *) and filter on partitioning columns. One SELECT statement only.";
  private readonly datasets: Set<string>;
  private readonly cfg: WarehouseConfig;
  private readonly retry: { attempts: number; baseDelayMs: number };
  /** User identity mode's per-person clients; undefined in service mode. */
  private readonly people?: PersonClients;
  /** The uploads dataset: never listed, never allowed except a conversation's own uploads. */
  private readonly uploads: UploadFence;

  private constructor(
    private readonly bq: BigQuery,
    cfg: WarehouseConfig,
    options: BigQueryWarehouseOptions,
  ) {
    this.cfg = cfg;
    this.retry = options.retry ?? { attempts: 3, baseDelayMs: 500 };
    if (options.credentials)
      this.people = new PersonClients(cfg.bigquery, options.credentials, options.personClient);
    this.uploads = new UploadFence(options.uploadsDataset, cfg.bigquery.billingProject);
    this.datasets = new Set(
      cfg.bigquery.datasets
        .map((d) => (d.includes(".") ? d : `${cfg.bigquery.billingProject}.${d}`))
        // Even if misconfigured into the allowlist, the uploads dataset is never listed or allowed as a whole.
        .filter((d) => !this.uploads.isUploads(d)),
    );
  }

  static async create(
    cfg: WarehouseConfig,
    options: BigQueryWarehouseOptions = {},
  ): Promise<BigQueryWarehouse> {
    const client = options.client ?? (await createBigQueryClient(cfg.bigquery));
    return new BigQueryWarehouse(client, cfg, options);
  }

  private scope(): string {
    return this.datasets.size ? `datasets ${[...this.datasets].join(", ")}` : "no datasets are configured";
  }

  /**
   * The allowed datasets' tables. For a person in user identity mode, read with their credentials:
   * only the datasets they may list and the tables they may `get` (the rest is left out).
   */
  async listTables(caller?: Caller): Promise<TableInfo[]> {
    const uid = this.personOf(caller);
    const bq = await this.client(uid);
    const out: TableInfo[] = [];
    for (const ds of this.datasets) {
      const [projectId, datasetId] = ds.split(".");
      const [tables] = await this.withRetry(
        () => bq.dataset(datasetId, { projectId }).getTables(),
        false,
        uid,
      ).catch((e: unknown) => (uid && isDeniedOrGone(e) ? [[]] : Promise.reject(this.fail(e, uid))));
      // tables.list omits description and row count; tables.get has them (metadata only, free).
      const infos = await Promise.all(
        tables.slice(0, 100).map(async (t) => {
          const [meta] = await this.withRetry(() => t.getMetadata(), false, uid).catch((e: unknown) => {
            if (!uid) return [t.metadata];
            if (isDeniedOrGone(e)) return [undefined]; // not theirs to read: not listed
            throw this.fail(e, uid);
          });
          return meta ? tableInfo(`${projectId}.${datasetId}.${t.id}`, meta) : undefined;
        }),
      );
      out.push(...infos.filter((t): t is TableInfo => t !== undefined));
    }
    return [...out, ...this.uploads.infos(caller)];
  }

  async describeTable(table: string, caller?: Caller): Promise<TableSchema> {
    const uid = this.personOf(caller);
    const bq = await this.client(uid);
    const parts = table.replaceAll("`", "").trim().split(".");
    if (parts.length < 2 || parts.length > 3 || parts.some((p) => !p)) {
      throw new WarehouseError(
        "bad_input",
        `"${table}" is not a table name; use project.dataset.table as list_tables shows.`,
      );
    }
    const [projectId, datasetId, tableId] =
      parts.length === 3 ? parts : [this.cfg.bigquery.billingProject, ...parts];
    const id = `${projectId}.${datasetId}.${tableId}`;
    if (this.uploads.isUploads(`${projectId}.${datasetId}`))
      return this.uploads.describe(id, caller, this.notFound);
    requireInScope([id], (t) => this.allowed(t), this.scope());
    try {
      const t = bq.dataset(datasetId, { projectId }).table(tableId);
      const [meta] = await this.withRetry(() => t.getMetadata(), false, uid);
      const fields: BqField[] = meta.schema?.fields ?? [];
      // tabledata.list: a few rows without a query job, so describing a table costs nothing. In user
      // mode the deployment's own reads (the shared catalog) take none: a person's row access
      // policies decide which rows they may see, so only their own credentials read rows.
      const [rows] =
        this.people && !uid
          ? [[]]
          : await this.withRetry(
              () => t.getRows({ maxResults: 5, autoPaginate: false, wrapIntegers: true, parseJSON: true }),
              false,
              uid,
            );
      return {
        ...tableInfo(id, meta),
        columns: toColumns(fields),
        sampleRows: (rows as Record<string, unknown>[]).slice(0, 5).map((r) => normalizeRow(fields, r)),
      };
    } catch (err) {
      throw this.fail(err, uid);
    }
  }

  async dryRun(rawSql: string, ctx: QueryContext): Promise<DryRunResult> {
    const sql = checkSqlInput(rawSql);
    throwIfAborted(ctx);
    // Names as BigQuery reads them (comments cannot split one); both texts are checked, so a comment
    // marker inside a string hides nothing either.
    const names = bigQueryNamesText(sql);
    // INFORMATION_SCHEMA and EXTERNAL_QUERY read what no dry run reports: refused for every scope.
    refuseHiddenSources(sql, names);
    const notFound = this.notFound;
    const own = this.uploads.own(ctx).map((u) => u.location);
    for (const text of [sql, names]) {
      this.uploads.refuseNames(text, own, notFound);
      refuseUnscopedNames(text, ctx.scope, this.datasetNames(), notFound);
    }
    const uid = this.personOf(ctx);
    let job: Job;
    try {
      const bq = await this.client(uid);
      [job] = await this.withRetry(
        () =>
          bq.createQueryJob({
            query: sql,
            dryRun: true,
            location: this.cfg.bigquery.location,
            useLegacySql: false,
          }),
        false,
        uid,
      );
    } catch (err) {
      throw this.fail(err, uid);
    }
    const meta: any = job.metadata ?? {};
    const stats: Stats = meta.statistics?.query ?? {};
    const statementType = stats.statementType ?? "UNKNOWN";
    const referencedTables: string[] = (meta.statistics?.query?.referencedTables ?? []).map(
      (t: any) => `${t.projectId}.${t.datasetId}.${t.tableId}`,
    );
    requireSelect(statementType);
    refuseUnreportedSources(names, referencedTables);
    this.uploads.refuseTables(referencedTables, own, notFound);
    const mine = new Set(own.map((t) => t.toLowerCase()));
    const isOwn = (t: string) => mine.has(t.toLowerCase());
    refuseUnscopedTables(
      referencedTables.filter((t) => !isOwn(t)),
      ctx.scope,
      notFound,
    );
    // A limited scope's refusal names only what the person may see, not the whole allowlist.
    const allowed = ctx.scope.all ? this.scope() : `datasets ${ctx.scope.entries.join(", ")}`;
    requireInScope(referencedTables, (t) => this.allowed(t) || isOwn(t), allowed);
    const reported = stats.totalBytesProcessed ?? meta.statistics?.totalBytesProcessed;
    const estimatedBytes = Number(reported ?? 0);
    // Row-level security hides the bytes a query would process: the estimate is unknown, not 0.
    const hidden = reported === undefined ? { bytesHidden: true } : {};
    const billableBytes = estimatedBytes + minimumBilled(referencedTables);
    return { sql, statementType, estimatedBytes, billableBytes, referencedTables, ...hidden };
  }

  async query(rawSql: string, ctx: QueryContext): Promise<QueryResult> {
    const started = Date.now();
    const dry = await this.dryRun(rawSql, ctx);
    const { maxBytesPerQuery, maxBytesPerThread, timeoutMs, location } = this.cfg.bigquery;
    const remaining = Math.max(maxBytesPerThread - ctx.bytesBilledSoFar, 0);
    if (dry.estimatedBytes > maxBytesPerQuery) {
      throw new WarehouseError(
        "budget",
        `The query would process an estimated ${formatBytes(dry.estimatedBytes)}, over the per-query budget of ` +
          `${formatBytes(maxBytesPerQuery)}. Select fewer columns or filter on the partitioning column.`,
        { estimatedBytes: dry.estimatedBytes, budgetBytes: maxBytesPerQuery },
      );
    }
    if (dry.estimatedBytes > remaining) {
      throw new WarehouseError(
        "budget",
        `The query would process an estimated ${formatBytes(dry.estimatedBytes)}, but this conversation has ` +
          `${formatBytes(remaining)} left of its ${formatBytes(maxBytesPerThread)} budget. Ask a narrower question or start a new conversation.`,
        { estimatedBytes: dry.estimatedBytes, budgetBytes: remaining },
      );
    }
    const personLeft = ctx.personBytesLeft ?? Number.POSITIVE_INFINITY;
    // BigQuery bills at least MIN_BILLED_PER_TABLE per table read: that much must be left too.
    const minBilled = minimumBilled(dry.referencedTables);
    if (Math.max(dry.estimatedBytes, minBilled) > personLeft) {
      throw new WarehouseError(
        "budget",
        `The query would process an estimated ${formatBytes(dry.estimatedBytes)}, but you have ` +
          `${formatBytes(personLeft)} left of today's query quota. Ask a narrower question (fewer columns, a ` +
          "shorter date range), or ask again after midnight UTC.",
        { estimatedBytes: dry.estimatedBytes, budgetBytes: personLeft },
      );
    }
    refuseOverCap(dry, minBilled, ctx.bytesCap);
    ctx.onEstimate?.(dry);
    const cap = Math.min(maxBytesPerQuery, remaining, personLeft, ctx.bytesCap ?? Number.POSITIVE_INFINITY);
    // An unknown estimate (row-level security) is capped by the budgets alone.
    const expected = dry.bytesHidden ? cap : dry.estimatedBytes + minBilled;
    const maximumBytesBilled = Math.max(Math.min(cap, expected), minBilled);
    const uid = this.personOf(ctx);
    const bq = await this.client(uid).catch((err: unknown) => Promise.reject(this.fail(err, uid)));

    // Our own job id makes the insert idempotent: a retry after a dropped connection either creates
    // the job or is told it exists (409), and then takes it — the query never runs twice. A run's
    // step has the same id on any instance (ctx.jobId): a continuation attaches to its job at once.
    const jobId = ctx.jobId ?? `quarry_${randomUUID()}`;
    let job: Job;
    try {
      [job] = await this.withRetry(
        async (attempt): Promise<[Job, ...unknown[]]> => {
          try {
            return await bq.createQueryJob({
              query: dry.sql,
              location,
              useLegacySql: false,
              maximumBytesBilled: String(maximumBytesBilled),
              jobTimeoutMs: timeoutMs, // BigQuery stops the job itself even if this process dies
              labels: labels(ctx),
              jobId,
            });
          } catch (err) {
            if ((attempt === 1 && !ctx.jobId) || (err as { code?: unknown }).code !== 409) throw err;
            return [await this.attach(bq, jobId, location, dry.sql, uid)];
          }
        },
        true,
        uid,
      );
    } catch (err) {
      throw this.fail(err, uid);
    }
    return this.collect(job, dry, ctx, started);
  }

  /**
   * The job `jobId` that exists already (our insert was told 409): a retried insert's, or the same
   * step's on an instance that stopped. Taken only if it runs this very statement.
   */
  private async attach(bq: BigQuery, jobId: string, location: string | undefined, sql: string, uid?: string) {
    const existing = bq.job(jobId, { location });
    const [meta] = await this.withRetry(() => existing.getMetadata(), false, uid);
    const ran = (meta as { configuration?: { query?: { query?: string } } }).configuration?.query?.query;
    if (ran !== undefined && ran !== sql) {
      throw new WarehouseError("internal", `Job ${jobId} exists with another statement: ask again.`);
    }
    return existing;
  }

  /**
   * Pages results until N+1 rows (or the character cap), under a deadline that cancels the job.
   * Pages are bounded by bytes as well as rows: the first asks for at most FIRST_PAGE_ROWS rows,
   * later ones for as many rows as fit the character cap at the width seen so far (BigQuery
   * itself also ends a page at about 10 MB).
   */
  private async collect(
    job: Job,
    dry: DryRunResult,
    ctx: QueryContext,
    started: number,
  ): Promise<QueryResult> {
    const { maxRows } = this.cfg;
    const deadline = started + this.cfg.bigquery.timeoutMs;
    const collector = new RowCollector(this.cfg);
    let fields: BqField[] = [];
    let totalRows = 0;
    let resp: any;
    const uid = this.personOf(ctx);
    let opts: Record<string, unknown> = {
      maxResults: Math.min(maxRows + 1, FIRST_PAGE_ROWS),
      autoPaginate: false,
      wrapIntegers: true,
      parseJSON: true,
    };
    try {
      for (;;) {
        const page = this.withRetry(() => job.getQueryResults(opts), false, uid);
        const [rows, , r] = (await this.race(job, page, deadline, ctx)) as unknown as [any[], unknown, any];
        resp = r ?? {};
        if (resp.jobComplete === false) continue; // still running: poll again (the call itself waits)
        fields = resp.schema?.fields ?? fields;
        totalRows = Number(resp.totalRows ?? totalRows);
        for (const row of rows ?? []) if (!collector.add(normalizeRow(fields, row))) break;
        const wanted = maxRows + 1 - collector.seen;
        if (collector.isFull || !resp.pageToken || wanted <= 0) break;
        const fit = Math.floor(this.cfg.maxResultChars / Math.max(collector.charsPerRow, 1));
        opts = { ...opts, pageToken: resp.pageToken, maxResults: Math.max(Math.min(wanted, fit), 1) };
      }
    } catch (err) {
      throw this.fail(err, uid);
    }
    const [meta] = await this.withRetry(() => job.getMetadata(), false, uid).catch(() => [job.metadata]);
    const stats: Stats = (meta as any)?.statistics?.query ?? {};
    const processed = stats.totalBytesProcessed ?? resp.totalBytesProcessed;
    const columns = toColumns(fields);
    const truncated = collector.truncated || totalRows > collector.rows.length;
    const { preview, previewRows } = renderPreview(columns, collector.rows, totalRows, truncated, this.cfg);
    return {
      sql: dry.sql,
      columns,
      rows: collector.rows,
      preview,
      previewRows,
      totalRows,
      truncated,
      estimatedBytes: dry.estimatedBytes,
      bytesProcessed: Number(processed ?? 0),
      bytesBilled: Number(stats.totalBytesBilled ?? 0),
      ...(processed === undefined && dry.bytesHidden ? { bytesHidden: true } : {}),
      cacheHit: Boolean(stats.cacheHit ?? resp.cacheHit ?? false),
      jobId: job.id,
      durationMs: Date.now() - started,
    };
  }

  /** Resolves with `work`, or cancels the job server-side and throws when the deadline or an abort comes first. */
  private race<T>(job: Job, work: Promise<T>, deadline: number, ctx: QueryContext): Promise<T> {
    const stop = (why: "timeout" | "cancel") => async (): Promise<never> => {
      await job.cancel().catch(() => undefined);
      throw new WarehouseError(
        "timeout",
        why === "cancel"
          ? "The query was cancelled because the run was cancelled; the BigQuery job was cancelled too."
          : `The query ran longer than ${this.cfg.bigquery.timeoutMs} ms and its job was cancelled. Filter or aggregate more.`,
      );
    };
    return withTimeout(work, Math.max(deadline - Date.now(), 0), stop("timeout"), {
      signal: ctx.signal,
      onAbort: stop("cancel"),
    });
  }

  /**
   * Bounded exponential backoff with jitter for errors where nothing ran (quota, rate, backend) and
   * for connections dropped under a call that is safe to repeat: reads, dry runs, job status and
   * results, and the insert with our own job id.
   */
  private async withRetry<T>(fn: (attempt: number) => Promise<T>, insert = false, uid?: string): Promise<T> {
    let refreshed = false;
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn(attempt);
      } catch (err) {
        // A person's token refused (401: expired early, or revoked): nothing ran; once with a fresh
        // one, which throws the consent error if the consent is gone. Never the service account.
        if (uid && this.people && isUnauthorized(err)) {
          if (refreshed) throw consentRefused();
          refreshed = true;
          await this.people.credentials.accessToken(uid, { fresh: true });
          attempt--;
          continue;
        }
        // An insert that failed inside the job (no HTTP code) may have run: never retry those.
        const httpLevel = typeof (err as { code?: unknown }).code === "number";
        const dropped = transportFailure(err)?.retryable === true;
        const again = dropped || (isRetryable(err) && (!insert || httpLevel));
        if (attempt >= this.retry.attempts || !again) throw err;
        const delay = this.retry.baseDelayMs * 2 ** (attempt - 1) * (1 + Math.random() * 0.25);
        await new Promise((r) => setTimeout(r, delay));
      }
    }
  }

  /** BigQuery's own answer for a table that does not exist (a scope refusal's too). */
  private readonly notFound: NotFound = (ref) =>
    bigQueryNotFound(ref, this.cfg.bigquery.billingProject, this.cfg.bigquery.location);

  /** The dataset names SQL can qualify a table with: `finance` and `project.finance`. */
  private datasetNames(): string[] {
    return [...this.datasets].flatMap((d) => [d, d.split(".")[1]]);
  }

  /** User identity mode: the person a call runs for (`undefined`: the deployment's own reads, or service mode). */
  private personOf(who: Caller | undefined): string | undefined {
    return this.people ? who?.userId : undefined;
  }

  /** The client a call runs with: the person's own in user identity mode, else the service account's. */
  private client(uid: string | undefined): Promise<BigQuery> {
    return uid && this.people ? this.people.for(uid) : Promise.resolve(this.bq);
  }

  /** A BigQuery failure as a warehouse error, worded for the person when it ran with their credentials. */
  private fail(err: unknown, uid: string | undefined): WarehouseError {
    return mapBigQueryError(err, { asPerson: uid !== undefined });
  }

  private allowed(table: string): boolean {
    const [p, d] = table.split(".");
    return this.datasets.has(`${p}.${d}`);
  }

  async close(): Promise<void> {
    // The client holds no sockets worth closing; nothing to do.
  }
}

function tableInfo(id: string, meta: any): TableInfo {
  const tp = meta?.timePartitioning;
  const rp = meta?.rangePartitioning;
  return {
    id,
    ...(meta?.description ? { description: meta.description } : {}),
    ...(meta?.numRows !== undefined ? { rowCount: Number(meta.numRows) } : {}),
    ...(tp ? { partitioning: `${tp.field ?? "_PARTITIONTIME"} (${tp.type ?? "DAY"})` } : {}),
    ...(rp ? { partitioning: `${rp.field} (RANGE)` } : {}),
    ...(meta?.clustering?.fields?.length ? { clustering: meta.clustering.fields } : {}),
  };
}

/** Job labels (labels.ts): the person, the conversation and the run. */
function labels(ctx: QueryContext): Record<string, string> {
  return { ...quarryLabels(ctx), quarry_run: labelValue(ctx.runId) };
}

/** What BigQuery bills at the least for a statement reading `tables`. */
function minimumBilled(tables: readonly string[]): number {
  return MIN_BILLED_PER_TABLE * Math.max(1, tables.length);
}

/** A step's own cap (an investigation's share of its budget): what it may bill must fit in it. */
function refuseOverCap(dry: DryRunResult, minBilled: number, bytesCap: number | undefined): void {
  if (bytesCap === undefined || Math.max(dry.estimatedBytes, minBilled) <= bytesCap) return;
  const what =
    dry.estimatedBytes > bytesCap
      ? `would process an estimated ${formatBytes(dry.estimatedBytes)}`
      : `reads tables BigQuery bills at least ${formatBytes(minBilled)} for`;
  throw new WarehouseError(
    "budget",
    `The query ${what}, over the ${formatBytes(bytesCap)} this step may bill.`,
    {
      estimatedBytes: dry.estimatedBytes,
      budgetBytes: bytesCap,
    },
  );
}

/**
 * A loopback stand-in for the BigQuery v2 REST API, for tests that drive the real
 * `@google-cloud/bigquery` client through `apiEndpoint`. It imitates the wire protocol (jobs.insert
 * with dryRun, jobs.get, jobs.getQueryResults with paging, jobs.cancel, tables.get, tables.list,
 * tabledata.list, error bodies) and is scripted per test; it records every request so tests can
 * assert what the client sent. It knows nothing about Quarry's code.
 *
 * With `requireBearer` it also checks credentials like Google: every call's `Authorization: Bearer`
 * token must resolve to a principal (401 UNAUTHENTICATED otherwise); tables with `readers` deny
 * others (403 accessDenied on tables.get, tabledata.list and queries that read them); `jobUsers`
 * limits who may create jobs; a job is visible only to the principal that made it; and a script's
 * `rowAccess` filters its rows per principal like a row access policy, with BigQuery's bytes
 * processed left out of the answer (billed bytes stay).
 *
 * Load jobs by media upload, tables.insert and tables.delete live in bigquery-standin-loads.ts.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  STANDIN_IDLE_CLOSE_MS,
  closeIdleConnections,
  dropConnection,
  type ConnectionStats,
} from "./standin-connections";
import { LoadRoutes, parseMultipart, type LoadRecord } from "./bigquery-standin-loads";

/** A REST cell value (`v`): strings for scalars, arrays of {v}, {f:[…]} for records. */
type RestValue = string | null | { v: RestValue }[] | { f: { v: RestValue }[] };
export interface RestField {
  name: string;
  type: string;
  mode?: "NULLABLE" | "REQUIRED" | "REPEATED";
  description?: string;
  fields?: RestField[];
}
interface TableRef {
  projectId: string;
  datasetId: string;
  tableId: string;
}
export interface StandinTable extends TableRef {
  fields: RestField[];
  /** Rows as plain JS values in field order; encoded to REST cells with `encodeRow`. */
  rows: unknown[][];
  description?: string;
  timePartitioning?: { type: string; field?: string };
  clustering?: { fields: string[] };
  /** Principals that may read it (tables.get, tabledata.list, queries); unset = everyone. */
  readers?: string[];
  /** Set by tables.insert: expiration (ms since the epoch), labels, and whose call made it. */
  expirationTime?: string;
  labels?: Record<string, string>;
  createdBy?: string;
  loadedBytes?: number;
}
interface ScriptedError {
  code: number;
  reason: string;
  message: string;
  location?: string;
}
export interface QueryScript {
  /** Which SQL this script answers (first match wins). */
  match: RegExp | ((sql: string) => boolean);
  statementType?: string;
  totalBytesProcessed?: number;
  totalBytesBilled?: number;
  cacheHit?: boolean;
  referencedTables?: TableRef[];
  fields?: RestField[];
  rows?: unknown[][];
  /** Server-side page size limit (BigQuery also cuts pages by bytes). */
  pageSize?: number;
  /** getQueryResults answers jobComplete:false this many times first; Infinity = never completes. */
  pendingPolls?: number;
  /** Fail the dry run (HTTP error), the insert (job DONE with errorResult) or getQueryResults (HTTP error). */
  error?: ScriptedError & { at: "dryRun" | "insert" | "results" };
  /** Fail the first N dry runs or inserts with this error, then succeed (quota/rate tests). */
  transient?: ScriptedError & { times: number };
  /**
   * Drop the connection under the next `times` calls of one kind (dry run, insert, getQueryResults,
   * jobs.get) without answering: before doing anything, or — `afterWork` — after doing it (an
   * insert then has created its job, though the client never hears so).
   */
  drops?: {
    at: "dryRun" | "insert" | "results" | "status";
    times: number;
    with: "reset" | "close";
    afterWork?: boolean;
  };
  /**
   * A row access policy: per principal, the rows it may see (others see all). A filtered query's
   * dry run, job statistics and results carry no totalBytesProcessed, as row-level security hides it.
   */
  rowAccess?: Record<string, (row: unknown[]) => boolean>;
}
export interface RecordedRequest {
  method: string;
  /** Path without the `/bigquery/v2` prefix. */
  path: string;
  query: Record<string, string>;
  body?: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  headers: Record<string, string | string[] | undefined>;
  /** Whose credentials the call carried (with `requireBearer`). */
  principal?: string;
}
interface JobRecord {
  ref: { projectId: string; jobId: string; location?: string };
  principal?: string;
  script: QueryScript;
  config: Record<string, unknown>;
  state: "RUNNING" | "DONE";
  cancelled: boolean;
  polls: number;
}

/** Encodes plain JS values as REST cells, following the field types. */
function encodeRow(fields: RestField[], values: unknown[]): { f: { v: RestValue }[] } {
  return { f: fields.map((field, i) => ({ v: encodeValue(field, values[i]) })) };
}
function encodeValue(field: RestField, value: unknown): RestValue {
  if (value === null || value === undefined) return null;
  if (field.mode === "REPEATED") {
    return (value as unknown[]).map((x) => ({ v: encodeValue({ ...field, mode: "NULLABLE" }, x) }));
  }
  if (field.type === "RECORD" || field.type === "STRUCT") {
    const obj = value as Record<string, unknown>;
    return { f: field.fields!.map((sub) => ({ v: encodeValue(sub, obj[sub.name]) })) };
  }
  return String(value);
}

const err = (e: ScriptedError) => ({
  error: {
    code: e.code,
    message: e.message,
    errors: [
      {
        message: e.message,
        domain: "global",
        reason: e.reason,
        ...(e.location ? { location: e.location } : {}),
      },
    ],
    status:
      e.code === 404
        ? "NOT_FOUND"
        : e.code === 403
          ? "PERMISSION_DENIED"
          : e.code === 429
            ? "RESOURCE_EXHAUSTED"
            : e.code === 409
              ? "ALREADY_EXISTS"
              : "INVALID_ARGUMENT",
  },
});

/** What Google answers a call without valid credentials. */
function unauthenticated() {
  const message =
    "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.";
  return {
    error: {
      code: 401,
      message,
      errors: [
        { message: "Invalid Credentials", domain: "global", reason: "authError", location: "Authorization" },
      ],
      status: "UNAUTHENTICATED",
    },
  };
}

function tableDenied(t: TableRef) {
  return err({
    code: 403,
    reason: "accessDenied",
    message: `Access Denied: Table ${t.projectId}:${t.datasetId}.${t.tableId}: User does not have permission to query table ${t.projectId}:${t.datasetId}.${t.tableId}, or perhaps it does not exist.`,
  });
}

export class BigQueryStandin {
  readonly requests: RecordedRequest[] = [];
  private auth?: { resolve: (token: string) => string | undefined; anonymous?: string };
  private jobUsers?: Set<string>;
  private readonly tables: StandinTable[] = [];
  private readonly scripts: QueryScript[] = [];
  private readonly jobs = new Map<string, JobRecord>();
  private server?: Server;
  private jobSeq = 0;
  private readonly made = new LoadRoutes({
    tables: this.tables,
    checksCredentials: () => this.auth !== undefined,
    owner: () => this.auth?.anonymous,
    jobRefusal: (projectId, principal) => this.refusal(projectId, {} as QueryScript, principal),
    send: (res, status, body) => this.send(res, status, body),
    error: (code, reason, message) => err({ code, reason, message }),
  });
  url = "";
  /** What the server did to its connections: opened, closed when idle, dropped. */
  readonly connections: ConnectionStats = { opened: 0, idleClosed: 0, dropped: 0 };
  /** Jobs created (dry runs excluded), whatever the client heard. */
  get jobCount(): number {
    return this.jobs.size;
  }

  /**
   * Checks every call's bearer token: `resolve` names its principal (undefined: unknown, expired or
   * revoked → 401). A call without one is `anonymous` when given (the emulated service account,
   * whose client sends no credentials), else 401.
   */
  requireBearer(resolve: (token: string) => string | undefined, opts: { anonymous?: string } = {}): this {
    this.auth = { resolve, ...opts };
    return this;
  }
  /** Only these principals may create jobs (bigquery.jobs.create); others get 403 accessDenied. */
  allowJobs(principals: string[]): this {
    this.jobUsers = new Set(principals);
    return this;
  }
  addTable(table: StandinTable): this {
    this.tables.push(table);
    return this;
  }
  /** Scripts the answer to matching SQL (dry run and real run). */
  onQuery(script: QueryScript): this {
    this.scripts.unshift(script);
    return this;
  }
  /** Requests whose path contains `fragment` (e.g. "/jobs", "/queries/", "/cancel"). */
  calls(method: string, fragment: string | RegExp): RecordedRequest[] {
    return this.requests.filter(
      (r) =>
        r.method === method &&
        (typeof fragment === "string" ? r.path.includes(fragment) : fragment.test(r.path)),
    );
  }
  /** jobs.insert bodies, in order. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  inserts(): any[] {
    return this.requests
      .filter((r) => r.method === "POST" && /^\/projects\/[^/]+\/jobs$/.test(r.path))
      .map((r) => r.body);
  }
  /** Load jobs received by media upload, in order: job configuration, the bytes, whose call. */
  loads(): LoadRecord[] {
    return this.made.loads;
  }
  /** A table as the stand-in holds it now (made by tables.insert or added), or undefined. */
  table(projectId: string, datasetId: string, tableId: string): StandinTable | undefined {
    return this.tables.find(
      (t) => t.projectId === projectId && t.datasetId === datasetId && t.tableId === tableId,
    );
  }
  /** The next load job ends DONE with this errorResult. */
  failNextLoad(reason: string, message: string): this {
    this.made.failNextLoad(reason, message);
    return this;
  }
  /** The next load job stays RUNNING for this many jobs.get calls. */
  holdNextLoad(polls: number): this {
    this.made.holdNextLoad(polls);
    return this;
  }
  /** Only these principals may create or delete tables in `project.dataset`. */
  allowTableWriters(dataset: string, principals: string[]): this {
    this.made.allowWriters(dataset, principals);
    return this;
  }

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      void this.handle(req, res).catch((e: unknown) =>
        this.send(res, 500, err({ code: 500, reason: "internalError", message: String(e) })),
      );
    });
    closeIdleConnections(this.server, STANDIN_IDLE_CLOSE_MS, this.connections, false);
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
    return this.url;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
    this.server = undefined;
  }

  private send(res: ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { "content-type": "application/json; charset=UTF-8" });
    res.end(JSON.stringify(body));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://x");
    // Media uploads come to /upload/bigquery/v2/…: recorded as /upload/….
    const path = url.pathname.replace(/^(\/upload)?\/bigquery\/v2/, "$1");
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    const contentType = req.headers["content-type"] ?? "";
    const multipart = contentType.startsWith("multipart/");
    const body = multipart
      ? this.jobPart(raw, contentType)
      : raw.length
        ? JSON.parse(raw.toString())
        : undefined;
    const principal = this.principalOf(req);
    this.requests.push({
      method: req.method!,
      path,
      query: Object.fromEntries(url.searchParams),
      body,
      headers: req.headers,
      ...(principal ? { principal } : {}),
    });
    if (this.auth && !principal) return this.send(res, 401, unauthenticated());
    const q = url.searchParams;
    let m: RegExpMatchArray | null;
    if (req.method === "POST" && (m = path.match(/^\/projects\/([^/]+)\/jobs$/)))
      return this.insert(res, m[1], body, principal);
    if ((m = path.match(/^\/projects\/([^/]+)\/(?:jobs|queries)\/([^/]+)/)) && !this.ownsJob(m[2], principal))
      return this.send(
        res,
        404,
        err({ code: 404, reason: "notFound", message: `Not found: Job ${m[1]}:${m[2]}` }),
      );
    if (this.made.handle(res, req.method!, path, raw, contentType, principal)) return;
    if (req.method === "GET" && (m = path.match(/^\/projects\/([^/]+)\/queries\/([^/]+)$/)))
      return this.results(res, m[2], q, principal);
    if (req.method === "POST" && (m = path.match(/^\/projects\/([^/]+)\/jobs\/([^/]+)\/cancel$/))) {
      const job = this.jobs.get(m[2]);
      if (!job)
        return this.send(
          res,
          404,
          err({ code: 404, reason: "notFound", message: `Not found: Job ${m[1]}:${m[2]}` }),
        );
      job.cancelled = true;
      job.state = "DONE";
      return this.send(res, 200, { kind: "bigquery#jobCancelResponse", job: this.jobResource(job) });
    }
    if (req.method === "GET" && (m = path.match(/^\/projects\/([^/]+)\/jobs\/([^/]+)$/))) {
      const job = this.jobs.get(m[2]);
      if (!job)
        return this.send(
          res,
          404,
          err({ code: 404, reason: "notFound", message: `Not found: Job ${m[1]}:${m[2]}` }),
        );
      if (this.dropped(res, job.script, "status")) return;
      return this.send(res, 200, this.jobResource(job));
    }
    if (req.method === "GET" && (m = path.match(/^\/projects\/([^/]+)\/datasets\/([^/]+)\/tables$/))) {
      const list = this.tables.filter((t) => t.projectId === m![1] && t.datasetId === m![2]);
      return this.send(res, 200, {
        kind: "bigquery#tableList",
        tables: list.map((t) => ({
          kind: "bigquery#table",
          id: `${t.projectId}:${t.datasetId}.${t.tableId}`,
          tableReference: { projectId: t.projectId, datasetId: t.datasetId, tableId: t.tableId },
          type: "TABLE",
          ...(t.timePartitioning ? { timePartitioning: t.timePartitioning } : {}),
          ...(t.clustering ? { clustering: t.clustering } : {}),
        })),
        totalItems: list.length,
      });
    }
    if (
      req.method === "GET" &&
      (m = path.match(/^\/projects\/([^/]+)\/datasets\/([^/]+)\/tables\/([^/]+)(\/data)?$/))
    ) {
      const t = this.tables.find(
        (x) => x.projectId === m![1] && x.datasetId === m![2] && x.tableId === m![3],
      );
      if (!t) {
        return this.send(
          res,
          404,
          err({ code: 404, reason: "notFound", message: `Not found: Table ${m[1]}:${m[2]}.${m[3]}` }),
        );
      }
      if (!this.mayRead(t, principal)) return this.send(res, 403, tableDenied(t));
      if (m[4]) {
        const start = Number(q.get("pageToken") ?? q.get("startIndex") ?? 0);
        const size = Number(q.get("maxResults") ?? t.rows.length);
        const rows = t.rows.slice(start, start + size);
        return this.send(res, 200, {
          kind: "bigquery#tableDataList",
          totalRows: String(t.rows.length),
          rows: rows.map((r) => encodeRow(t.fields, r)),
          ...(start + size < t.rows.length ? { pageToken: String(start + size) } : {}),
        });
      }
      return this.send(res, 200, {
        kind: "bigquery#table",
        id: `${t.projectId}:${t.datasetId}.${t.tableId}`,
        tableReference: { projectId: t.projectId, datasetId: t.datasetId, tableId: t.tableId },
        schema: { fields: t.fields },
        numRows: String(t.rows.length),
        type: "TABLE",
        ...(t.description ? { description: t.description } : {}),
        ...(t.timePartitioning ? { timePartitioning: t.timePartitioning } : {}),
        ...(t.clustering ? { clustering: t.clustering } : {}),
        ...(t.expirationTime ? { expirationTime: t.expirationTime } : {}),
        ...(t.labels ? { labels: t.labels } : {}),
      });
    }
    this.send(
      res,
      404,
      err({ code: 404, reason: "notFound", message: `The stand-in has no route for ${req.method} ${path}` }),
    );
  }

  /** Drops the connection when the script says so for this call; true when it did. */
  private dropped(res: ServerResponse, s: QueryScript, at: string, afterWork = false): boolean {
    const d = s.drops;
    if (!d || d.at !== at || d.times <= 0 || Boolean(d.afterWork) !== afterWork) return false;
    d.times--;
    dropConnection(res, d.with, this.connections);
    return true;
  }

  private script(sql: string): QueryScript {
    const s = this.scripts.find((x) => (x.match instanceof RegExp ? x.match.test(sql) : x.match(sql)));
    if (!s) throw new Error(`BigQuery stand-in: no script matches SQL: ${sql}`);
    return s;
  }

  private principalOf(req: IncomingMessage): string | undefined {
    if (!this.auth) return undefined;
    const header = req.headers.authorization;
    if (!header) return this.auth.anonymous;
    const token = /^Bearer (.+)$/.exec(header)?.[1];
    return token ? this.auth.resolve(token) : undefined;
  }
  private mayRead(t: StandinTable, principal: string | undefined): boolean {
    return !t.readers || (principal !== undefined && t.readers.includes(principal));
  }
  /** A media upload's first part (the job resource), for the request record. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  private jobPart(raw: Buffer, contentType: string): any {
    const first = parseMultipart(raw, contentType)[0];
    return first?.type.startsWith("application/json") ? JSON.parse(first.bytes.toString()) : undefined;
  }
  private ownsJob(jobId: string, principal: string | undefined): boolean {
    const load = this.made.loadJob(jobId);
    if (load) return !this.auth || load.principal === principal;
    const job = this.jobs.get(jobId);
    return !this.auth || !job || job.principal === principal;
  }
  /** A script's rows as `principal` may see them, and whether a row access policy filtered them. */
  private rowsFor(s: QueryScript, principal: string | undefined): { rows: unknown[][]; filtered: boolean } {
    const keep = principal !== undefined ? s.rowAccess?.[principal] : undefined;
    return keep
      ? { rows: (s.rows ?? []).filter(keep), filtered: true }
      : { rows: s.rows ?? [], filtered: false };
  }
  /** Why `principal` may not run `s` (job permission, a table it may not read), as BigQuery says it. */
  private refusal(projectId: string, s: QueryScript, principal: string | undefined) {
    if (this.jobUsers && !(principal && this.jobUsers.has(principal))) {
      return err({
        code: 403,
        reason: "accessDenied",
        message: `Access Denied: Project ${projectId}: User does not have bigquery.jobs.create permission in project ${projectId}.`,
      });
    }
    for (const ref of s.referencedTables ?? []) {
      const t = this.tables.find(
        (x) => x.projectId === ref.projectId && x.datasetId === ref.datasetId && x.tableId === ref.tableId,
      );
      if (t && !this.mayRead(t, principal)) return tableDenied(t);
    }
    return undefined;
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  private insert(res: ServerResponse, projectId: string, body: any, principal?: string): void {
    const sql: string = body?.configuration?.query?.query ?? "";
    let s: QueryScript;
    try {
      s = this.script(sql);
    } catch (e) {
      return this.send(res, 400, err({ code: 400, reason: "invalidQuery", message: (e as Error).message }));
    }
    if (s.transient && s.transient.times > 0) {
      s.transient.times--;
      return this.send(res, s.transient.code, err(s.transient));
    }
    const dry = body?.configuration?.dryRun === true;
    if (this.dropped(res, s, dry ? "dryRun" : "insert")) return;
    const refused = this.refusal(projectId, s, principal);
    if (refused) return this.send(res, 403, refused);
    const hidden = this.rowsFor(s, principal).filtered;
    const ref = {
      projectId,
      jobId: body?.jobReference?.jobId ?? `job_${++this.jobSeq}`,
      location: body?.jobReference?.location,
    };
    if (!dry && this.jobs.has(ref.jobId)) {
      const message = `Already Exists: Job ${projectId}:${ref.location ?? "US"}.${ref.jobId}`;
      return this.send(res, 409, err({ code: 409, reason: "duplicate", message }));
    }
    if (dry) {
      if (s.error?.at === "dryRun") return this.send(res, s.error.code, err(s.error));
      return this.send(res, 200, {
        kind: "bigquery#job",
        jobReference: { projectId, location: ref.location },
        configuration: body.configuration,
        status: { state: "DONE" },
        statistics: {
          ...(hidden ? {} : { totalBytesProcessed: String(s.totalBytesProcessed ?? 0) }),
          query: {
            statementType: s.statementType ?? "SELECT",
            ...(hidden
              ? {}
              : {
                  totalBytesProcessed: String(s.totalBytesProcessed ?? 0),
                  totalBytesProcessedAccuracy: "PRECISE",
                }),
            ...(s.referencedTables ? { referencedTables: s.referencedTables } : {}),
            ...(s.fields ? { schema: { fields: s.fields } } : {}),
          },
        },
      });
    }
    const job: JobRecord = {
      ref,
      ...(principal ? { principal } : {}),
      script: s,
      config: body.configuration,
      state: "RUNNING",
      cancelled: false,
      polls: 0,
    };
    this.jobs.set(ref.jobId, job);
    if (s.error?.at === "insert") job.state = "DONE";
    if (this.dropped(res, s, "insert", true)) return;
    this.send(res, 200, this.jobResource(job));
  }

  private jobResource(job: JobRecord): unknown {
    const s = job.script;
    const failed = job.cancelled
      ? { reason: "stopped", message: "Job execution was cancelled: User requested cancellation" }
      : s.error?.at === "insert" || (s.error?.at === "results" && job.state === "DONE")
        ? { reason: s.error.reason, message: s.error.message }
        : undefined;
    return {
      kind: "bigquery#job",
      id: `${job.ref.projectId}:${job.ref.location ?? "US"}.${job.ref.jobId}`,
      jobReference: job.ref,
      configuration: job.config,
      status: { state: job.state, ...(failed ? { errorResult: failed, errors: [failed] } : {}) },
      statistics: {
        query: {
          statementType: s.statementType ?? "SELECT",
          ...(this.rowsFor(s, job.principal).filtered
            ? {}
            : { totalBytesProcessed: String(s.totalBytesProcessed ?? 0) }),
          totalBytesBilled: String(s.totalBytesBilled ?? s.totalBytesProcessed ?? 0),
          cacheHit: s.cacheHit ?? false,
        },
      },
    };
  }

  private async results(
    res: ServerResponse,
    jobId: string,
    q: URLSearchParams,
    principal?: string,
  ): Promise<void> {
    const job = this.jobs.get(jobId);
    if (!job)
      return this.send(res, 404, err({ code: 404, reason: "notFound", message: `Not found: Job ${jobId}` }));
    const s = job.script;
    if (this.dropped(res, s, "results")) return;
    if (job.cancelled) {
      return this.send(
        res,
        400,
        err({
          code: 400,
          reason: "stopped",
          message: "Job execution was cancelled: User requested cancellation",
        }),
      );
    }
    if (job.polls < (s.pendingPolls ?? 0)) {
      job.polls++;
      await new Promise((r) => setTimeout(r, 20)); // the real API holds the call up to timeoutMs
      return this.send(res, 200, {
        kind: "bigquery#getQueryResultsResponse",
        jobReference: job.ref,
        jobComplete: false,
      });
    }
    job.state = "DONE";
    if (s.error?.at === "results") return this.send(res, s.error.code, err(s.error));
    const { rows, filtered } = this.rowsFor(s, principal);
    const start = Number(q.get("pageToken") ?? 0);
    const size = Math.min(Number(q.get("maxResults") ?? rows.length), s.pageSize ?? Infinity);
    const page = rows.slice(start, start + size);
    this.send(res, 200, {
      kind: "bigquery#getQueryResultsResponse",
      jobReference: job.ref,
      schema: { fields: s.fields ?? [] },
      rows: page.map((r) => encodeRow(s.fields ?? [], r)),
      totalRows: String(rows.length),
      ...(start + size < rows.length ? { pageToken: String(start + size) } : {}),
      ...(filtered ? {} : { totalBytesProcessed: String(s.totalBytesProcessed ?? 0) }),
      jobComplete: true,
      cacheHit: s.cacheHit ?? false,
    });
  }
}

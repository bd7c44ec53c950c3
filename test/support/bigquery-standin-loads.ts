/**
 * The BigQuery stand-in's table-making routes (a sibling of bigquery-standin.ts, which routes to
 * it): load jobs by media upload (`POST /upload/bigquery/v2/projects/:p/jobs?uploadType=multipart`,
 * multipart/related: the job resource as JSON, then the file's bytes), tables.insert and
 * tables.delete. The stand-in does not read Parquet: it keeps the bytes for tests to compare.
 *
 * With credentials checked (`requireBearer`), a table made by a person is readable (and loadable,
 * deletable) by that person and the dataset's owner (the anonymous service account) only, like a
 * table whose IAM grants its creator alone; `writers` limits
 * who may create and delete tables in a dataset (bigquery.tables.create / delete).
 */
import type { ServerResponse } from "node:http";

/* eslint-disable @typescript-eslint/no-explicit-any -- REST resources are loosely typed */

/** The parts of a stand-in table these routes read and write. */
export interface MadeTable {
  projectId: string;
  datasetId: string;
  tableId: string;
  fields: { name: string; type: string; mode?: string }[];
  rows: unknown[][];
  description?: string;
  readers?: string[];
  /** Milliseconds since the epoch, as a string (tables.insert's `expirationTime`). */
  expirationTime?: string;
  labels?: Record<string, string>;
  /** The principal whose tables.insert made it (absent: a table the test added). */
  createdBy?: string;
  /** Bytes a load job put in it. */
  loadedBytes?: number;
}

/** One load job the stand-in received. */
export interface LoadRecord {
  /** The job resource's `configuration` (with `load`). */
  jobConfig: any;
  jobReference: any;
  /** The file's bytes, exactly as sent. */
  bytes: Buffer;
  principal?: string;
}

/** What the stand-in lends these routes. */
export interface LoadHost {
  tables: MadeTable[];
  /** Whether credentials are checked (`requireBearer`). */
  checksCredentials(): boolean;
  /** The principal of calls without credentials (the service account, which owns the dataset). */
  owner(): string | undefined;
  /** BigQuery's refusal when `principal` may not create jobs in `projectId`; undefined: allowed. */
  jobRefusal(projectId: string, principal: string | undefined): unknown;
  send(res: ServerResponse, status: number, body: unknown): void;
  error(code: number, reason: string, message: string): unknown;
}

interface LoadJob {
  record: LoadRecord;
  failure?: { reason: string; message: string };
  /** jobs.get answers RUNNING this many more times. */
  pending: number;
}

/** The parts of a multipart/related body: each part's content type and bytes. */
export function parseMultipart(body: Buffer, contentType: string): { type: string; bytes: Buffer }[] {
  const boundary = /boundary="?([^";]+)"?/i.exec(contentType)?.[1];
  if (!boundary) throw new Error(`not multipart: ${contentType}`);
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: { type: string; bytes: Buffer }[] = [];
  let at = body.indexOf(delimiter);
  while (at >= 0) {
    const start = at + delimiter.length;
    if (body.subarray(start, start + 2).toString() === "--") break; // the closing delimiter
    const next = body.indexOf(delimiter, start);
    if (next < 0) throw new Error("multipart body without a closing delimiter");
    const part = body.subarray(start + 2, next - 2); // after CRLF, before the CRLF that ends the part
    const split = part.indexOf("\r\n\r\n");
    const headers = part.subarray(0, split).toString();
    parts.push({
      type: /content-type:\s*([^\r\n]+)/i.exec(headers)?.[1] ?? "",
      bytes: part.subarray(split + 4),
    });
    at = next;
  }
  return parts;
}

export class LoadRoutes {
  readonly loads: LoadRecord[] = [];
  private readonly jobs = new Map<string, LoadJob>();
  private readonly failures: { reason: string; message: string }[] = [];
  private hold = 0;
  private readonly writers = new Map<string, Set<string>>();

  constructor(private readonly host: LoadHost) {}

  /** The next load job ends DONE with this errorResult (e.g. a file BigQuery cannot read). */
  failNextLoad(reason: string, message: string): void {
    this.failures.push({ reason, message });
  }
  /** The next load job is RUNNING when made and for this many jobs.get calls, then DONE. */
  holdNextLoad(polls: number): void {
    this.hold = polls;
  }
  /** Only these principals may create or delete tables in `project.dataset`. */
  allowWriters(dataset: string, principals: string[]): void {
    this.writers.set(dataset, new Set(principals));
  }
  /** Whether `jobId` is a load job, and whose. */
  loadJob(jobId: string): { principal?: string } | undefined {
    return this.jobs.get(jobId)?.record;
  }

  /** Answers the request when it is one of these routes; false: not ours. */
  handle(
    res: ServerResponse,
    method: string,
    path: string,
    raw: Buffer,
    contentType: string,
    principal: string | undefined,
  ): boolean {
    let m: RegExpMatchArray | null;
    if (method === "POST" && (m = path.match(/^\/upload\/projects\/([^/]+)\/jobs$/))) {
      this.load(res, m[1], raw, contentType, principal);
      return true;
    }
    if (method === "GET" && (m = path.match(/^\/projects\/([^/]+)\/jobs\/([^/]+)$/)) && this.jobs.has(m[2])) {
      const job = this.jobs.get(m[2])!;
      this.host.send(res, 200, this.jobResource(job));
      if (job.pending > 0) job.pending--;
      return true;
    }
    if (method === "POST" && (m = path.match(/^\/projects\/([^/]+)\/datasets\/([^/]+)\/tables$/))) {
      this.insertTable(res, m[1], m[2], JSON.parse(raw.toString() || "{}"), principal);
      return true;
    }
    if (
      method === "DELETE" &&
      (m = path.match(/^\/projects\/([^/]+)\/datasets\/([^/]+)\/tables\/([^/]+)$/))
    ) {
      this.deleteTable(res, m[1], m[2], m[3], principal);
      return true;
    }
    return false;
  }

  private find(projectId: string, datasetId: string, tableId: string): MadeTable | undefined {
    return this.host.tables.find(
      (t) => t.projectId === projectId && t.datasetId === datasetId && t.tableId === tableId,
    );
  }
  private mayWrite(projectId: string, datasetId: string, principal: string | undefined): boolean {
    const allowed = this.writers.get(`${projectId}.${datasetId}`);
    return !allowed || (principal !== undefined && allowed.has(principal));
  }
  private mayUse(t: MadeTable, principal: string | undefined): boolean {
    return !t.readers || (principal !== undefined && t.readers.includes(principal));
  }
  private denied(res: ServerResponse, permission: string, projectId: string, datasetId: string): void {
    const message = `Access Denied: Dataset ${projectId}:${datasetId}: Permission ${permission} denied on dataset ${projectId}:${datasetId} (or it may not exist).`;
    this.host.send(res, 403, this.host.error(403, "accessDenied", message));
  }

  private insertTable(
    res: ServerResponse,
    projectId: string,
    datasetId: string,
    body: any,
    principal?: string,
  ): void {
    if (!this.mayWrite(projectId, datasetId, principal))
      return this.denied(res, "bigquery.tables.create", projectId, datasetId);
    const tableId: string = body?.tableReference?.tableId;
    if (this.find(projectId, datasetId, tableId)) {
      const message = `Already Exists: Table ${projectId}:${datasetId}.${tableId}`;
      return this.host.send(res, 409, this.host.error(409, "duplicate", message));
    }
    const made: MadeTable = {
      projectId,
      datasetId,
      tableId,
      fields: body?.schema?.fields ?? [],
      rows: [],
      ...(body?.description ? { description: body.description } : {}),
      ...(body?.expirationTime ? { expirationTime: String(body.expirationTime) } : {}),
      ...(body?.labels ? { labels: body.labels } : {}),
      ...(principal !== undefined ? { createdBy: principal } : {}),
      // A person's table: theirs, and the service account's that owns the dataset; nobody else's.
      ...(this.host.checksCredentials() && principal !== undefined
        ? { readers: [principal, this.host.owner()].filter((p): p is string => p !== undefined) }
        : {}),
    };
    this.host.tables.push(made);
    this.host.send(res, 200, {
      kind: "bigquery#table",
      id: `${projectId}:${datasetId}.${tableId}`,
      tableReference: { projectId, datasetId, tableId },
      schema: { fields: made.fields },
      type: "TABLE",
      ...(made.expirationTime ? { expirationTime: made.expirationTime } : {}),
      ...(made.labels ? { labels: made.labels } : {}),
      ...(made.description ? { description: made.description } : {}),
    });
  }

  private deleteTable(
    res: ServerResponse,
    projectId: string,
    datasetId: string,
    tableId: string,
    principal?: string,
  ) {
    const t = this.find(projectId, datasetId, tableId);
    if (!t) {
      const message = `Not found: Table ${projectId}:${datasetId}.${tableId}`;
      return this.host.send(res, 404, this.host.error(404, "notFound", message));
    }
    if (!this.mayWrite(projectId, datasetId, principal) || !this.mayUse(t, principal))
      return this.denied(res, "bigquery.tables.delete", projectId, datasetId);
    this.host.tables.splice(this.host.tables.indexOf(t), 1);
    res.writeHead(204).end();
  }

  private load(
    res: ServerResponse,
    projectId: string,
    raw: Buffer,
    contentType: string,
    principal?: string,
  ): void {
    const parts = parseMultipart(raw, contentType);
    if (parts.length !== 2 || !parts[0].type.startsWith("application/json")) {
      const message = "Media upload needs two parts: the job resource (JSON), then the data.";
      return this.host.send(res, 400, this.host.error(400, "invalid", message));
    }
    const resource = JSON.parse(parts[0].bytes.toString());
    const refused = this.host.jobRefusal(projectId, principal);
    if (refused) return this.host.send(res, 403, refused);
    const jobReference = { projectId, ...resource.jobReference };
    if (this.jobs.has(jobReference.jobId)) {
      const message = `Already Exists: Job ${projectId}:${jobReference.location ?? "US"}.${jobReference.jobId}`;
      return this.host.send(res, 409, this.host.error(409, "duplicate", message));
    }
    const record: LoadRecord = {
      jobConfig: resource.configuration,
      jobReference,
      bytes: parts[1].bytes,
      ...(principal !== undefined ? { principal } : {}),
    };
    this.loads.push(record);
    const job: LoadJob = {
      record,
      pending: this.hold,
      failure: this.outcome(resource.configuration?.load ?? {}, record.bytes.length, principal),
    };
    this.hold = 0;
    this.jobs.set(jobReference.jobId, job);
    this.host.send(res, 200, this.jobResource(job));
  }

  /** Why a load fails (a scripted failure first), or undefined: the bytes are stored in the table. */
  private outcome(
    load: any,
    bytes: number,
    principal?: string,
  ): { reason: string; message: string } | undefined {
    const scripted = this.failures.shift();
    if (scripted) return scripted;
    const dest = load.destinationTable ?? {};
    const t = this.find(dest.projectId, dest.datasetId, dest.tableId);
    const name = `${dest.projectId}:${dest.datasetId}.${dest.tableId}`;
    if (!t) {
      if (load.createDisposition === "CREATE_NEVER")
        return { reason: "notFound", message: `Not found: Table ${name}` };
      return { reason: "invalid", message: "The stand-in loads only into tables made first" };
    }
    if (!this.mayUse(t, principal))
      return {
        reason: "accessDenied",
        message: `Access Denied: Table ${name}: Permission bigquery.tables.updateData denied`,
      };
    if (load.writeDisposition === "WRITE_EMPTY" && t.loadedBytes !== undefined)
      return { reason: "duplicate", message: `Already Exists: Table ${name} is not empty (WRITE_EMPTY)` };
    t.loadedBytes = bytes;
    return undefined;
  }

  private jobResource(job: LoadJob): unknown {
    const { jobReference: ref, jobConfig } = job.record;
    const failed = job.pending > 0 ? undefined : job.failure;
    return {
      kind: "bigquery#job",
      id: `${ref.projectId}:${ref.location ?? "US"}.${ref.jobId}`,
      jobReference: ref,
      configuration: { ...jobConfig, jobType: "LOAD" },
      status: {
        state: job.pending > 0 ? "RUNNING" : "DONE",
        ...(failed ? { errorResult: failed, errors: [failed] } : {}),
      },
      statistics: { load: { inputFileBytes: String(job.record.bytes.length) } },
      ...(job.record.principal ? { user_email: job.record.principal } : {}),
    };
  }
}

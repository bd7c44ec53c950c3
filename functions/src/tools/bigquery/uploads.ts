/**
 * Uploaded files as BigQuery tables (issue #32): each goes to the Quarry-owned uploads dataset
 * (QUARRY_BQ_UPLOADS_DATASET) as `u_<threadKey>_<name>`, made first by tables.insert (schema from
 * the ingest's DuckDB types, an expiration, labels naming the person and the conversation), then
 * filled by a load job of the ingest's Parquet file sent by media upload (no Cloud Storage). A load
 * that fails deletes the table: nothing is left half-stored. In user identity mode both calls run
 * with the person's own token, never the service account's.
 *
 * The table has the labels; the load job has none: the client puts a load's metadata under
 * `configuration.load`, which has no `labels` field (job labels live in `configuration.labels`).
 */
import { randomUUID } from "node:crypto";
import type { BigQuery, Table } from "@google-cloud/bigquery";
import type { UploadsConfig, WarehouseConfig } from "../../config";
import { QuarryError } from "../../errors";
import type { Caller, CredentialSource, UploadPut, UploadTarget } from "../types";
import { createBigQueryClient } from "./client";
import { quarryLabels } from "./labels";
import { PersonClients, consentRefused, isUnauthorized, type ClientFactory } from "./people";
import { requireUploadsDataset, uploadSchema, uploadTableId, type UploadsDataset } from "./upload-tables";

/** How long a load may take before Quarry gives up on it (and deletes the table). */
const LOAD_TIMEOUT_MS = 5 * 60_000;

export interface BigQueryUploadsOptions {
  /** A ready client for the service account (tests); default: one built from the config. */
  client?: BigQuery;
  /** User identity mode: loads and deletes run with the person's own token from here. */
  credentials?: CredentialSource;
  /** Builds a person's client (tests); default: one like the service account's, with their token. */
  personClient?: ClientFactory;
}

type Step = "create" | "load" | "delete";

export class BigQueryUploads implements UploadTarget {
  private readonly people?: PersonClients;

  private constructor(
    private readonly bq: BigQuery,
    private readonly cfg: WarehouseConfig["bigquery"],
    private readonly setting: string | undefined,
    options: BigQueryUploadsOptions,
  ) {
    if (options.credentials) this.people = new PersonClients(cfg, options.credentials, options.personClient);
  }

  /** `uploads.bigqueryDataset` unset (or one of the warehouse's datasets): every call is refused. */
  static async create(
    cfg: WarehouseConfig,
    uploads: Pick<UploadsConfig, "bigqueryDataset">,
    options: BigQueryUploadsOptions = {},
  ): Promise<BigQueryUploads> {
    const client = options.client ?? (await createBigQueryClient(cfg.bigquery));
    return new BigQueryUploads(client, cfg.bigquery, uploads.bigqueryDataset, options);
  }

  /** SQL names an upload on BigQuery by its full id: `project.dataset.table`, its location. */
  tableId(location: string, _name: string): string {
    return location;
  }

  /** Makes the table, loads the Parquet file into it, and returns `project.dataset.table`. */
  async put(upload: UploadPut, caller?: Caller): Promise<string> {
    const ds = this.dataset();
    const uid = this.people ? (caller?.userId ?? upload.userId) : undefined;
    const tableId = uploadTableId(upload.threadId, upload.name);
    const location = `${ds.projectId}.${ds.datasetId}.${tableId}`;
    const labels = quarryLabels(upload);
    const table = await this.as(uid, "create", location, async (bq) => {
      const t = bq.dataset(ds.datasetId, { projectId: ds.projectId }).table(tableId);
      await t.create({
        schema: { fields: uploadSchema(upload.columns) },
        expirationTime: String(upload.expiresAt.getTime()),
        labels,
        description: `uploads.${upload.name}: the file ${upload.file} (${upload.rows} rows), uploaded to one conversation`,
      });
      return t;
    });
    try {
      await this.load(table, upload, uid, location);
    } catch (err) {
      // Nothing half-stored: the table goes with the failed load (its expiration is a second net).
      await this.drop(location, caller ?? (uid ? { userId: uid } : undefined)).catch(() => undefined);
      throw err;
    }
    return location;
  }

  /** Deletes an upload's table; one already gone is done. */
  async drop(location: string, caller?: Caller): Promise<void> {
    const ds = this.dataset();
    const [projectId, datasetId, tableId, ...rest] = location.split(".");
    if (!tableId || rest.length || projectId !== ds.projectId || datasetId !== ds.datasetId) {
      // Only the uploads dataset's tables are Quarry's to delete.
      throw new QuarryError("not_found:upload", `${location} is not an uploaded table of this deployment.`);
    }
    const uid = this.people ? caller?.userId : undefined;
    await this.as(uid, "delete", location, async (bq) => {
      await bq
        .dataset(datasetId, { projectId })
        .table(tableId)
        .delete()
        .catch((err: unknown) => {
          if ((err as { code?: unknown }).code !== 404) throw err;
        });
    });
  }

  private dataset(): UploadsDataset {
    return requireUploadsDataset(this.setting, this.cfg.billingProject, this.cfg.datasets);
  }

  /** The load job by media upload, waited on until DONE; its failure is thrown in words. */
  private async load(
    table: Table,
    upload: UploadPut,
    uid: string | undefined,
    location: string,
  ): Promise<void> {
    const job = await this.as(uid, "load", location, async () => {
      const [j] = await table.createLoadJob(upload.parquetPath, {
        sourceFormat: "PARQUET",
        createDisposition: "CREATE_NEVER",
        writeDisposition: "WRITE_EMPTY",
        // No `location`: the client would put it in configuration.load; BigQuery takes the
        // dataset's. No `labels` either (see the header): the table carries them.
        jobId: `quarry_load_${randomUUID()}`,
      });
      return j;
    });
    const deadline = Date.now() + LOAD_TIMEOUT_MS;
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the REST Job resource
    let meta: any = job.metadata;
    for (let i = 0; meta?.status?.state !== "DONE"; i++) {
      if (Date.now() > deadline) {
        await job.cancel().catch(() => undefined);
        throw new QuarryError(
          "unavailable:uploads",
          `BigQuery did not finish loading ${upload.file} within ${LOAD_TIMEOUT_MS / 60_000} minutes; try again later.`,
        );
      }
      await new Promise((r) => setTimeout(r, Math.min(250 * 2 ** i, 5000))); // BigQuery is still loading
      [meta] = await this.as(uid, "load", location, () => job.getMetadata());
    }
    const failed = meta.status.errorResult;
    if (failed) throw loadFailed(failed, upload.file, location, uid !== undefined);
  }

  /** Runs `fn` with the client of `uid` (user mode) or the service account; one fresh token after a 401. */
  private async as<T>(
    uid: string | undefined,
    step: Step,
    location: string,
    fn: (bq: BigQuery) => Promise<T>,
  ): Promise<T> {
    for (let refreshed = false; ; refreshed = true) {
      try {
        const bq = uid && this.people ? await this.people.for(uid) : this.bq;
        return await fn(bq);
      } catch (err) {
        if (err instanceof QuarryError) throw err;
        if (!(uid && this.people && isUnauthorized(err)))
          throw uploadFailed(err, step, location, uid !== undefined);
        if (refreshed) throw consentRefused();
        await this.people.credentials.accessToken(uid, { fresh: true });
      }
    }
  }
}

interface ApiErrorLike {
  code?: number;
  message?: string;
  errors?: { reason?: string; message?: string }[];
}

/** What `who` must be granted for `step`, in words. */
function roleNeeded(step: Step, location: string, asPerson: boolean, message: string): string {
  const [project, dataset] = location.split(".");
  const who = asPerson ? "your Google account" : "Quarry's service account";
  if (/jobs\.create/.test(message))
    return `${who} needs BigQuery Job User (roles/bigquery.jobUser) on project ${project}`;
  return `${who} needs BigQuery Data Editor (roles/bigquery.dataEditor) on dataset ${project}.${dataset} (QUARRY_BQ_UPLOADS_DATASET)`;
}

const DOING: Record<Step, string> = {
  create: "create the table for your file",
  load: "load your file",
  delete: "delete the uploaded table",
};

/** A BigQuery call that failed, as a QuarryError saying what failed and what to do. */
function uploadFailed(err: unknown, step: Step, location: string, asPerson: boolean): QuarryError {
  const e = (err ?? {}) as ApiErrorLike;
  const reason = e.errors?.[0]?.reason ?? "";
  const said = (e.errors?.[0]?.message || e.message || String(err)).trim();
  const opts = { cause: err };
  if (e.code === 403 && reason !== "quotaExceeded" && reason !== "rateLimitExceeded") {
    const role = roleNeeded(step, location, asPerson, said);
    return new QuarryError(
      "unavailable:uploads",
      `BigQuery refused to ${DOING[step]} (${location}): ${role}. BigQuery said: ${said}`,
      opts,
    );
  }
  if (e.code === 409 && step === "create")
    return new QuarryError(
      "conflict:upload",
      `A table for this file's name already exists (${location}); remove the file first or choose another name.`,
      opts,
    );
  if (e.code === 404)
    return new QuarryError(
      "unavailable:uploads",
      `BigQuery could not ${DOING[step]}: the uploads dataset of ${location} was not found. An admin creates the ` +
        `dataset named by QUARRY_BQ_UPLOADS_DATASET (in ${location.split(".")[0]}). BigQuery said: ${said}`,
      opts,
    );
  return new QuarryError(
    "unavailable:uploads",
    `BigQuery could not ${DOING[step]} (${location}): ${said}`,
    opts,
  );
}

/** A load job that ended with an error: the file (bad_request) or the deployment (unavailable). */
function loadFailed(
  failed: { reason?: string; message?: string },
  file: string,
  location: string,
  asPerson: boolean,
): QuarryError {
  const said = failed.message ?? failed.reason ?? "no reason given";
  if (failed.reason === "invalid" || failed.reason === "invalidQuery")
    return new QuarryError(
      "bad_request:upload",
      `BigQuery could not read ${file}: ${said}. Check the file and upload it again.`,
    );
  if (failed.reason === "accessDenied")
    return new QuarryError(
      "unavailable:uploads",
      `BigQuery refused to load ${file} into ${location}: ${roleNeeded("load", location, asPerson, said)}. BigQuery said: ${said}`,
    );
  return new QuarryError("unavailable:uploads", `BigQuery could not load ${file} into ${location}: ${said}`);
}

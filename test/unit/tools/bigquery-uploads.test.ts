/**
 * Uploaded files as BigQuery tables (issue #32), through the real @google-cloud/bigquery client
 * against the loopback REST stand-in: tables.insert (schema, expiration, labels), the load job by
 * media upload (multipart: job configuration + the Parquet bytes DuckDB wrote), deletion when the
 * load fails, the person's own token in user identity mode, and the gate that keeps every other
 * table of the uploads dataset out of every query, list and description.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { readConfig, type WarehouseConfig } from "../../../functions/src/config";
import { createBigQueryClient } from "../../../functions/src/tools/bigquery/client";
import { uploadTableId } from "../../../functions/src/tools/bigquery/upload-tables";
import { BigQueryUploads } from "../../../functions/src/tools/bigquery/uploads";
import { BigQueryWarehouse } from "../../../functions/src/tools/bigquery/warehouse";
import { FULL_SCOPE, limitedScope } from "../../../functions/src/tools/scope";
import { WarehouseError, type QueryContext, type UploadPut } from "../../../functions/src/tools/types";
import type { UploadRef } from "../../../functions/src/tools/uploads/types";
import { BigQueryStandin } from "../../support/bigquery-standin";

const P = "demo-bq";
const DS = "quarry_uploads";
const orders = { projectId: P, datasetId: "shop", tableId: "orders" };
const standin = new BigQueryStandin();
/** A second stand-in that checks every call's bearer token (user identity mode). */
const checked = new BigQueryStandin().requireBearer(
  (t) => (t.startsWith("tok-") ? `${t.slice(4)}@x.com` : undefined),
  { anonymous: "service-account" },
);
const tokens = { accessToken: async (uid: string) => `tok-${uid}` };

let dir = "";
let parquet = "";
const COLUMNS = [
  { name: "month", type: "DATE" },
  { name: "target", type: "BIGINT" },
  { name: "note", type: "VARCHAR" },
  { name: "share", type: "DOUBLE" },
  { name: "amount", type: "DECIMAL(18,3)" },
  { name: "huge", type: "DECIMAL(38,2)" },
  { name: "at", type: "TIMESTAMP" },
  { name: "instant", type: "TIMESTAMP WITH TIME ZONE" },
  { name: "ok", type: "BOOLEAN" },
  { name: "span", type: "INTERVAL" },
];
const EXPECTED_SCHEMA = [
  ["month", "DATE"],
  ["target", "INT64"],
  ["note", "STRING"],
  ["share", "FLOAT64"],
  ["amount", "NUMERIC"],
  ["huge", "BIGNUMERIC"],
  ["at", "DATETIME"],
  ["instant", "TIMESTAMP"],
  ["ok", "BOOL"],
  ["span", "STRING"],
].map(([name, type]) => ({ name, type, mode: "NULLABLE" }));

function config(url: string, extra: Record<string, string> = {}): WarehouseConfig {
  return readConfig({
    GOOGLE_CLOUD_PROJECT: P,
    QUARRY_WAREHOUSE: "bigquery",
    QUARRY_BQ_DATASETS: "shop",
    QUARRY_BQ_LOCATION: "EU",
    BIGQUERY_EMULATOR_HOST: url.replace("http://", ""),
    ...extra,
  }).warehouse;
}
const expiresAt = new Date("2030-01-08T00:00:00Z");
const put = (over: Partial<UploadPut> = {}): UploadPut => ({
  parquetPath: parquet,
  columns: COLUMNS,
  rows: 3,
  userId: "User@Example.com",
  threadId: "Thread-1",
  name: "targets",
  file: "targets 2024.csv",
  expiresAt,
  ...over,
});
/** `null`: QUARRY_BQ_UPLOADS_DATASET unset. */
const uploadsOn = (s: BigQueryStandin, dataset: string | null = DS) =>
  BigQueryUploads.create(config(s.url), { bigqueryDataset: dataset ?? undefined });

beforeAll(async () => {
  await Promise.all([standin.start(), checked.start()]);
  dir = mkdtempSync(join(tmpdir(), "quarry-bq-uploads-"));
  parquet = join(dir, "targets.parquet");
  const duck = await DuckDBInstance.create(":memory:");
  const conn = await duck.connect();
  await conn.run(
    `COPY (SELECT DATE '2024-01-01' + (i * 31)::INTEGER AS month, i * 100 AS target, 'n' || i AS note FROM range(3) t(i)) ` +
      `TO '${parquet}' (FORMAT parquet)`,
  );
  conn.closeSync();
  duck.closeSync();
  standin.addTable({ ...orders, fields: [{ name: "region", type: "STRING" }], rows: [["north"]] });
});
afterEach(() => {
  standin.requests.length = 0;
  checked.requests.length = 0;
});
afterAll(async () => {
  await Promise.all([standin.stop(), checked.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

describe("an uploaded file as a BigQuery table (tables.insert, then a load job by media upload)", () => {
  it("makes the table with the mapped schema, expiration, labels and description, then loads the Parquet bytes", async () => {
    const location = await (await uploadsOn(standin)).put(put());
    const tableId = uploadTableId("Thread-1", "targets");
    expect(tableId).toMatch(/^u_[0-9a-f]{16}_targets$/);
    expect(location).toBe(`${P}.${DS}.${tableId}`);
    expect(standin.requests.map((r) => `${r.method} ${r.path}`).slice(0, 2)).toEqual([
      `POST /projects/${P}/datasets/${DS}/tables`,
      `POST /upload/projects/${P}/jobs`,
    ]);
    const table = standin.table(P, DS, tableId)!;
    expect(table.fields).toEqual(EXPECTED_SCHEMA);
    expect(table.expirationTime).toBe(String(expiresAt.getTime()));
    expect(table.labels).toEqual({
      app: "quarry",
      quarry_user: "user_example_com",
      quarry_thread: "thread-1",
    });
    expect(table.description).toMatch(/uploads\.targets: the file targets 2024\.csv \(3 rows\)/);

    const upload = standin.calls("POST", "/upload/")[0];
    expect(upload.query.uploadType).toBe("multipart");
    expect(upload.headers["content-type"]).toMatch(/^multipart\/related; boundary=/);
    const [load] = standin.loads();
    expect(load.jobConfig.load).toMatchObject({
      sourceFormat: "PARQUET",
      createDisposition: "CREATE_NEVER",
      writeDisposition: "WRITE_EMPTY",
      destinationTable: { projectId: P, datasetId: DS, tableId },
    });
    expect(load.jobReference.jobId).toMatch(/^quarry_load_[0-9a-f-]{36}$/);
    expect(load.bytes.equals(readFileSync(parquet))).toBe(true);
    expect(load.bytes.subarray(0, 4).toString()).toBe("PAR1");
    expect(table.loadedBytes).toBe(load.bytes.length);
  });

  it("a load BigQuery fails deletes the table it made, and says what failed", async () => {
    const uploads = await uploadsOn(standin);
    standin.failNextLoad(
      "invalid",
      "Error while reading data, error message: Parquet column 'target' is not INT64",
    );
    const e = await uploads.put(put({ name: "broken", file: "broken.csv" })).catch((x: unknown) => x);
    expect(e).toMatchObject({ code: "bad_request:upload" });
    expect((e as Error).message).toMatch(/could not read broken\.csv: Error while reading data.*'target'/);
    const tableId = uploadTableId("Thread-1", "broken");
    expect(standin.table(P, DS, tableId)).toBeUndefined();
    expect(standin.calls("DELETE", `/tables/${tableId}`)).toHaveLength(1);
  });

  it("a load still running is followed with jobs.get until DONE", async () => {
    standin.holdNextLoad(1);
    const location = await (await uploadsOn(standin)).put(put({ name: "slow" }));
    const jobId = standin.loads().at(-1)!.jobReference.jobId;
    expect(standin.calls("GET", `/jobs/${jobId}`)).toHaveLength(2); // RUNNING, then DONE
    expect(standin.table(P, DS, location.split(".")[2])!.loadedBytes).toBeGreaterThan(0);
  });

  it("drops a table; one already gone is done; nothing outside the uploads dataset is dropped", async () => {
    const uploads = await uploadsOn(standin);
    const location = await uploads.put(put({ name: "dropme" }));
    await uploads.drop(location);
    expect(standin.table(P, DS, location.split(".")[2])).toBeUndefined();
    await expect(uploads.drop(location)).resolves.toBeUndefined();
    await expect(uploads.drop(`${P}.shop.orders`)).rejects.toMatchObject({ code: "not_found:upload" });
    expect(standin.table(P, "shop", "orders")).toBeDefined();
  });

  it("refuses (unavailable:uploads) with the dataset unset or one of QUARRY_BQ_DATASETS, sending nothing", async () => {
    for (const uploads of [await uploadsOn(standin, null), await uploadsOn(standin, "shop")]) {
      const e = await uploads.put(put()).catch((x: unknown) => x);
      expect(e).toMatchObject({ code: "unavailable:uploads" });
      expect((e as Error).message).toMatch(/QUARRY_BQ_UPLOADS_DATASET/);
      await expect(uploads.drop(`${P}.${DS}.u_x_y`)).rejects.toMatchObject({ code: "unavailable:uploads" });
    }
    expect(standin.requests).toEqual([]);
  });

  it("a permission refusal says which role the service account needs on which dataset", async () => {
    standin.allowTableWriters(`${P}.locked_uploads`, []);
    const e = await (await uploadsOn(standin, "locked_uploads")).put(put()).catch((x: unknown) => x);
    expect(e).toMatchObject({ code: "unavailable:uploads" });
    expect((e as Error).message).toMatch(
      /service account needs BigQuery Data Editor \(roles\/bigquery\.dataEditor\) on dataset demo-bq\.locked_uploads/,
    );
    expect(
      standin.loads().some((l) => l.jobConfig.load.destinationTable.datasetId === "locked_uploads"),
    ).toBe(false);
  });
});

describe("uploads in user identity mode (QUARRY_BQ_IDENTITY=user)", () => {
  it("makes and loads the table with the person's own token; another person may not read it", async () => {
    const uploads = await BigQueryUploads.create(
      config(checked.url),
      { bigqueryDataset: DS },
      { credentials: tokens },
    );
    const location = await uploads.put(put({ userId: "dana", threadId: "t-dana" }), { userId: "dana" });
    const tableId = location.split(".")[2];
    const insert = checked.calls("POST", `/datasets/${DS}/tables`)[0];
    expect(insert.headers.authorization).toBe("Bearer tok-dana");
    expect(insert.principal).toBe("dana@x.com");
    const upload = checked.calls("POST", "/upload/")[0];
    expect(upload.headers.authorization).toBe("Bearer tok-dana");
    expect(checked.loads().at(-1)!.principal).toBe("dana@x.com");
    expect(checked.table(P, DS, tableId)!.createdBy).toBe("dana@x.com");
    expect(checked.requests.every((r) => r.principal === "dana@x.com")).toBe(true);

    const as = async (uid: string) =>
      (
        await createBigQueryClient(config(checked.url).bigquery, {
          getRequestHeaders: async () => new Headers({ authorization: `Bearer tok-${uid}` }),
          getAccessToken: async () => ({ token: `tok-${uid}` }),
        })
      )
        .dataset(DS)
        .table(tableId)
        .getMetadata();
    await expect(as("dana")).resolves.toBeDefined();
    await expect(as("erin")).rejects.toMatchObject({ code: 403 });
    // Erin's token cannot delete it either; Dana's can.
    await expect(uploads.drop(location, { userId: "erin" })).rejects.toMatchObject({
      code: "unavailable:uploads",
    });
    await uploads.drop(location, { userId: "dana" });
    expect(checked.table(P, DS, tableId)).toBeUndefined();
  });

  it("a token refused (401) is replaced once; the deployment's own drop (no caller) runs as the service account", async () => {
    const asked: string[] = [];
    const stale = {
      accessToken: async (uid: string, opts?: { fresh?: boolean }) => {
        asked.push(opts?.fresh ? "fresh" : "cached");
        return asked.includes("fresh") ? `tok-${uid}` : "expired";
      },
    };
    const uploads = await BigQueryUploads.create(
      config(checked.url),
      { bigqueryDataset: DS },
      { credentials: stale },
    );
    const location = await uploads.put(put({ userId: "fay", threadId: "t-fay" }));
    expect(asked).toContain("fresh");
    expect(checked.table(P, DS, location.split(".")[2])!.createdBy).toBe("fay@x.com");
    checked.requests.length = 0;
    await uploads.drop(location);
    expect(checked.requests.map((r) => [r.method, r.principal])).toEqual([["DELETE", "service-account"]]);
    expect(checked.table(P, DS, location.split(".")[2])).toBeUndefined();
  });
});

describe("the gate: the uploads dataset is fenced off for every scope", () => {
  const mine: UploadRef = {
    name: "targets",
    file: "targets.csv",
    table: `${P}.${DS}.${uploadTableId("t-1", "targets")}`,
    location: `${P}.${DS}.${uploadTableId("t-1", "targets")}`,
    columns: COLUMNS.slice(0, 3),
    rows: 3,
  };
  const other = `${P}.${DS}.${uploadTableId("t-2", "targets")}`;
  const ref = (id: string) => {
    const [projectId, datasetId, tableId] = id.split(".");
    return { projectId, datasetId, tableId };
  };
  const base: QueryContext = {
    userId: "u",
    threadId: "t-1",
    runId: "r",
    bytesBilledSoFar: 0,
    scope: FULL_SCOPE,
  };
  const warehouse = (extra?: Record<string, string>) =>
    BigQueryWarehouse.create(config(standin.url, extra), {
      uploadsDataset: DS,
      retry: { attempts: 1, baseDelayMs: 1 },
    });
  const refusal = (p: Promise<unknown>) =>
    p.then(
      () => expect.fail("expected a refusal"),
      (e: unknown) => {
        expect(e).toBeInstanceOf(WarehouseError);
        return e as WarehouseError;
      },
    );

  it("a query joining the conversation's upload with an in-scope table is dry-run and runs", async () => {
    const sql = `SELECT o.region, t.target FROM \`${mine.location}\` t JOIN shop.orders o ON TRUE`;
    standin.onQuery({
      match: (s) => s === sql,
      referencedTables: [orders, ref(mine.location)],
      fields: [
        { name: "region", type: "STRING" },
        { name: "target", type: "INTEGER" },
      ],
      rows: [["north", 100]],
    });
    const ctx = { ...base, scope: limitedScope(["shop"]), uploads: [mine] };
    const r = await (await warehouse()).query(sql, ctx);
    expect(r.rows).toEqual([{ region: "north", target: 100 }]);
    expect(standin.inserts().map((b) => Boolean(b.configuration.dryRun))).toEqual([true, false]);
    // Without the upload in its context, the same person's other conversation does not see it.
    const e = await refusal((await warehouse()).query(sql, { ...base, scope: limitedScope(["shop"]) }));
    expect(e.category).toBe("not_found");
  });

  for (const [label, scope] of [
    ["full scope", FULL_SCOPE],
    ["a limited scope", limitedScope(["shop"])],
  ] as const) {
    it(`another conversation's upload named directly is refused before any request, like a missing table (${label})`, async () => {
      const wh = await warehouse();
      for (const [sql, uploads] of [
        [`SELECT * FROM \`${other}\``, [mine]],
        [`SELECT * FROM ${DS}.${other.split(".")[2]}`, []],
        [`SELECT 1 FROM shop.orders -- ${DS}.${other.split(".")[2]}`, [mine]],
        [`SELECT * FROM \`${P}\`.\`${DS}\`.\`u_*\``, [mine]],
      ] as const) {
        const e = await refusal(wh.dryRun(sql, { ...base, scope, uploads }));
        expect(e.category).toBe("not_found");
        expect(e.message).toMatch(new RegExp(`Not found: (Table|Dataset) ${P}:${DS}`));
        expect(e.message).not.toMatch(/month|note|region/); // no column of any table
        expect(e.outOfScope?.[0]).toMatch(new RegExp(`^${P}\\.${DS}\\.`));
      }
      const escaped = await refusal(wh.dryRun("SELECT * FROM `quarry_upl\\x6fads.u_1`", { ...base, scope }));
      expect(escaped.category).toBe("bad_input");
      expect(standin.requests).toEqual([]);
    });
  }

  it("a table of the uploads dataset the dry run reports reading (through a view) is refused too", async () => {
    const sql = "SELECT * FROM shop.view_of_uploads";
    standin.onQuery({ match: (s) => s === sql, referencedTables: [orders, ref(other)] });
    const e = await refusal((await warehouse()).query(sql, { ...base, uploads: [mine] }));
    expect(e.category).toBe("not_found");
    expect(e.outOfScope).toEqual([other]);
    expect(standin.inserts().filter((b) => !b.configuration.dryRun)).toEqual([]);
  });

  it("list_tables shows the caller's uploads; without a caller (the shared catalog) nothing of the uploads dataset", async () => {
    standin.addTable({ ...ref(other), fields: [{ name: "secret", type: "STRING" }], rows: [["x"]] });
    // Even misconfigured into QUARRY_BQ_DATASETS, the uploads dataset is never listed.
    const wh = await warehouse({ QUARRY_BQ_DATASETS: `shop,${DS}` });
    const shared = await wh.listTables();
    expect(shared.map((t) => t.id)).toEqual([`${P}.shop.orders`]);
    const theirs = await wh.listTables({ userId: "u", uploads: [mine] });
    expect(theirs.map((t) => t.id)).toEqual([`${P}.shop.orders`, mine.location]);
    expect(theirs[1]).toEqual({
      id: mine.location,
      description: "uploads.targets: the person's file targets.csv, 3 rows",
      rowCount: 3,
    });
    expect(standin.calls("GET", `/datasets/${DS}/`)).toEqual([]);
  });

  it("describe_table answers the caller's upload from its record and refuses any other", async () => {
    const wh = await warehouse();
    const schema = await wh.describeTable(mine.location, { userId: "u", uploads: [mine] });
    expect(schema.columns).toEqual([
      { name: "month", type: "DATE", mode: "NULLABLE" },
      { name: "target", type: "INT64", mode: "NULLABLE" },
      { name: "note", type: "STRING", mode: "NULLABLE" },
    ]);
    expect(schema.rowCount).toBe(3);
    await expect(wh.describeTable(other, { userId: "u", uploads: [mine] })).rejects.toMatchObject({
      category: "not_found",
    });
    await expect(wh.describeTable(mine.location)).rejects.toMatchObject({ category: "not_found" });
    expect(standin.requests).toEqual([]);
  });
});

/**
 * BigQuery calls whose connection is dropped, through the real @google-cloud/bigquery client and
 * the REST stand-in dropping it at a known point: the calls that are safe to repeat (dry run,
 * getQueryResults, jobs.get, table reads) are sent again; the query's insert is repeated only
 * because it carries Quarry's own job id — a repeat of an insert that had reached BigQuery is told
 * the job exists and takes it, so the query never runs twice.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readConfig } from "../../../functions/src/config";
import { BigQueryWarehouse } from "../../../functions/src/tools/bigquery/warehouse";
import type { QueryContext } from "../../../functions/src/tools/types";
import { BigQueryStandin, type QueryScript, type RestField } from "../../support/bigquery-standin";
import { FULL_SCOPE } from "../../../functions/src/tools/scope";

const P = "demo-bq";
const ctx: QueryContext = {
  userId: "u@example.com",
  threadId: "t-1",
  runId: "r-1",
  bytesBilledSoFar: 0,
  scope: FULL_SCOPE,
};
const ID: RestField[] = [{ name: "id", type: "INTEGER" }];
const standin = new BigQueryStandin();
let host = "";

beforeAll(async () => {
  host = (await standin.start()).replace("http://", "");
  standin.addTable({ projectId: P, datasetId: "shop", tableId: "orders", fields: ID, rows: [[1], [2]] });
});
afterAll(() => standin.stop());

const open = () =>
  BigQueryWarehouse.create(
    readConfig({
      GOOGLE_CLOUD_PROJECT: P,
      QUARRY_WAREHOUSE: "bigquery",
      QUARRY_BQ_DATASETS: "shop",
      BIGQUERY_EMULATOR_HOST: host,
    }).warehouse,
    { retry: { attempts: 3, baseDelayMs: 1 } },
  );

/** A fresh SQL text per test, so each script matches only its own query. */
function script(n: number, drops: QueryScript["drops"]): { sql: string } {
  const sql = `SELECT ${n} AS id`;
  standin.onQuery({ match: (q) => q === sql, fields: ID, rows: [[n]], totalBytesProcessed: 10, drops });
  return { sql };
}

const inserts = (sql: string) =>
  standin
    .inserts()
    .filter((b) => b.configuration.query.query === sql)
    .map((b) => ({ dry: Boolean(b.configuration.dryRun), jobId: b.jobReference?.jobId as string }));

describe("BigQuery calls under a dropped connection", () => {
  it.each([
    ["dryRun", "reset"],
    ["dryRun", "close"],
    ["results", "reset"],
    ["status", "close"],
  ] as const)("%s dropped (%s) before answering: sent again, the rows arrive", async (at, how) => {
    const { sql } = script(100 + standin.requests.length, { at, times: 1, with: how });
    const dropped = standin.connections.dropped;
    const r = await (await open()).query(sql, ctx);
    expect(r.rows).toHaveLength(1);
    expect(standin.connections.dropped).toBe(dropped + 1);
    expect(inserts(sql).filter((i) => !i.dry)).toHaveLength(1);
  });

  it("the insert dropped after BigQuery created the job: repeated with the same job id, the job taken, run once", async () => {
    const { sql } = script(7, { at: "insert", times: 1, with: "reset", afterWork: true });
    const jobsBefore = standin.jobCount;
    const r = await (await open()).query(sql, ctx);
    expect(r.rows).toEqual([{ id: 7 }]);
    const real = inserts(sql).filter((i) => !i.dry);
    expect(real).toHaveLength(2);
    expect(real[0].jobId).toMatch(/^quarry_/);
    expect(real[1].jobId).toBe(real[0].jobId);
    expect(standin.jobCount).toBe(jobsBefore + 1);
    expect(r.jobId).toBe(real[0].jobId);
  });

  it("the insert dropped before it reached BigQuery: repeated once, one job", async () => {
    const { sql } = script(8, { at: "insert", times: 1, with: "close" });
    const jobsBefore = standin.jobCount;
    const r = await (await open()).query(sql, ctx);
    expect(r.rows).toEqual([{ id: 8 }]);
    expect(standin.jobCount).toBe(jobsBefore + 1);
  });

  it("a drop on every attempt is bounded and reported as a warehouse error", async () => {
    const { sql } = script(9, { at: "dryRun", times: 99, with: "reset" });
    await expect((await open()).query(sql, ctx)).rejects.toMatchObject({ name: "WarehouseError" });
    expect(inserts(sql)).toHaveLength(3);
  });
});

/**
 * A scheduled question whose data changes between runs: the function's app in this process on the
 * BigQuery engine (the REST stand-in, driven by the real client, whose answer to the saved SQL the
 * test changes between runs as the warehouse's data would change). The revenue alert stays quiet on
 * the first run, fires when revenue falls 20 % or more, and not when it holds; the chat webhook
 * gets one message for the fired alert, without the rows.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call } from "../../support/api-client";
import { BigQueryStandin, type RestField } from "../../support/bigquery-standin";
import {
  DAILY,
  newThread,
  runOnce,
  startScheduleFixture,
  type ScheduleFixture,
} from "../../support/schedules";

const PROJECT = "sales-prj";
const ORDERS = { projectId: PROJECT, datasetId: "shop", tableId: "orders" };
const FIELDS: RestField[] = [{ name: "revenue", type: "INTEGER" }];
const SQL = `SELECT SUM(amount) AS revenue FROM \`${PROJECT}.shop.orders\``;
/** What BigQuery answers the saved SQL with: the test changes it between runs. */
const answer = {
  match: (sql: string) => sql.includes(`${PROJECT}.shop.orders`),
  referencedTables: [ORDERS],
  fields: FIELDS,
  rows: [[120_000]] as unknown[][],
  totalBytesProcessed: 64,
  totalBytesBilled: 10_485_760,
};

const bq = new BigQueryStandin();
let f: ScheduleFixture;

beforeAll(async () => {
  bq.addTable({ ...ORDERS, fields: [{ name: "amount", type: "INTEGER" }], rows: [[1]] }).onQuery(answer);
  await bq.start();
  f = await startScheduleFixture({
    QUARRY_WAREHOUSE: "bigquery",
    BIGQUERY_EMULATOR_HOST: bq.url.replace("http://", ""),
    QUARRY_BQ_PROJECT: PROJECT,
    QUARRY_BQ_DATASETS: `${PROJECT}.shop`,
  });
}, 120_000);

afterAll(async () => {
  await f?.close();
  await bq.stop();
});

describe("a scheduled question on data that changes", () => {
  it("fires the change alert when revenue falls 20 % since the last run, once, and not when it holds", async () => {
    const made = await call(f.api, "/schedules", {
      method: "POST",
      token: f.ann.idToken,
      body: {
        threadId: await newThread(f.ann),
        question: "What is our revenue?",
        name: "Revenue watch",
        sql: SQL,
        schedule: DAILY,
        alert: { kind: "change", column: "revenue", direction: "down", percent: 20 },
        webhook: f.receiver.url,
      },
    });
    expect(made.status, made.text).toBe(201);
    const id = String(made.json.id);
    const heard = f.receiver.got.length;

    const first = await runOnce(id);
    expect(first).toMatchObject({ outcome: "ok", fired: false });
    expect(first.summary).toMatch(/first run/);

    answer.rows = [[94_300]]; // the data changed: revenue fell 21.4 %
    const fell = await runOnce(id);
    expect(fell).toMatchObject({ outcome: "ok", fired: true });
    expect(fell.summary).toMatch(/revenue fell 21\.4 %/);

    answer.rows = [[93_000]]; // held (−1.4 %)
    expect(await runOnce(id)).toMatchObject({ outcome: "ok", fired: false });

    const messages = f.receiver.got.slice(heard);
    expect(messages).toHaveLength(1);
    expect(messages[0].text).toMatch(/Revenue watch.*revenue fell 21\.4 %/s);
    expect(messages[0].text).not.toMatch(/^\|/m); // no table of rows
    // Each run queried BigQuery (not a cache of the first answer).
    const runs = bq
      .inserts()
      .filter((b) => !b.configuration.dryRun && String(b.configuration.query?.query).includes("shop.orders"));
    expect(runs.length).toBeGreaterThanOrEqual(3);
    await call(f.api, `/schedules/${id}`, { method: "DELETE", token: f.ann.idToken });
  });
});

/**
 * The BigQuery engine through the real @google-cloud/bigquery client, pointed at a loopback REST
 * stand-in (test/support/bigquery-standin.ts) that records what the client sent.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { readConfig, type WarehouseConfig } from "../../../functions/src/config";
import { BigQueryWarehouse, MIN_BILLED_PER_TABLE } from "../../../functions/src/tools/bigquery/warehouse";
import { createWarehouseTools } from "../../../functions/src/tools/model-tools";
import { auditedWarehouse } from "../../../functions/src/tools/audited";
import type { QueryRecord } from "../../../functions/src/tools/types";
import { WarehouseError, type QueryContext } from "../../../functions/src/tools/types";
import { BigQueryStandin, type RestField } from "../../support/bigquery-standin";
import { FULL_SCOPE, limitedScope } from "../../../functions/src/tools/scope";

const P = "demo-bq";
const orders = { projectId: P, datasetId: "shop", tableId: "orders" };
const ctx: QueryContext = {
  userId: "User@Example.com",
  threadId: "thread-1",
  runId: "run-1",
  bytesBilledSoFar: 0,
  scope: FULL_SCOPE,
};
const standin = new BigQueryStandin();
let host = "";

function config(extra: Record<string, string> = {}): WarehouseConfig {
  return readConfig({
    GOOGLE_CLOUD_PROJECT: P,
    QUARRY_WAREHOUSE: "bigquery",
    QUARRY_BQ_DATASETS: "shop,other-proj.public",
    QUARRY_BQ_LOCATION: "EU",
    QUARRY_MAX_ROWS: "10",
    QUARRY_MAX_BYTES_PER_QUERY: "500000000",
    QUARRY_MAX_BYTES_PER_THREAD: "2000000000",
    BIGQUERY_EMULATOR_HOST: host,
    ...extra,
  }).warehouse;
}
const open = (extra?: Record<string, string>) =>
  BigQueryWarehouse.create(config(extra), { retry: { attempts: 3, baseDelayMs: 1 } });
const failure = (p: Promise<unknown>) =>
  p.then(
    () => expect.fail("expected a WarehouseError"),
    (e: unknown) => {
      expect(e).toBeInstanceOf(WarehouseError);
      return e as WarehouseError;
    },
  );
const realInserts = () => standin.inserts().filter((b) => !b.configuration.dryRun);

const ID: RestField[] = [{ name: "id", type: "INTEGER" }];
beforeAll(async () => {
  host = (await standin.start()).replace("http://", "");
  standin.addTable({
    ...orders,
    description: "Orders",
    timePartitioning: { type: "DAY", field: "order_date" },
    clustering: { fields: ["customer_id"] },
    fields: [
      { name: "order_id", type: "INTEGER", mode: "REQUIRED", description: "Primary key" },
      { name: "order_date", type: "DATE" },
      { name: "items", type: "RECORD", mode: "REPEATED", fields: [{ name: "sku", type: "STRING" }] },
    ],
    rows: Array.from({ length: 8 }, (_, i) => [i + 1, `2024-01-0${(i % 9) + 1}`, [{ sku: `s${i}` }]]),
  });
});
afterEach(() => {
  standin.requests.length = 0;
});
afterAll(() => standin.stop());

describe("BigQuery engine via the real client and a REST stand-in", () => {
  it("dry-runs before it executes, with no credentials sent", async () => {
    standin.onQuery({ match: /^SELECT 1 AS id$/, totalBytesProcessed: 0, fields: ID, rows: [[1]] });
    const r = await (await open()).query("SELECT 1 AS id", ctx);
    expect(r.rows).toEqual([{ id: 1 }]);
    const inserts = standin.inserts();
    expect(inserts.map((b) => Boolean(b.configuration.dryRun))).toEqual([true, false]);
    const order = standin.requests.map((q) => `${q.method} ${q.path.replace(/\/[^/]*$/, "/*")}`);
    expect(order.indexOf(`POST /projects/${P}/jobs`)).toBeLessThan(
      order.lastIndexOf(`GET /projects/${P}/queries/*`),
    );
    expect(standin.requests.every((q) => q.headers.authorization === undefined)).toBe(true);
  });

  const refusedTypes = [
    "INSERT",
    "UPDATE",
    "DELETE",
    "MERGE",
    "CREATE_TABLE",
    "DROP_TABLE",
    "ALTER_TABLE",
  ].concat(["TRUNCATE_TABLE", "SCRIPT", "CALL", "EXPORT_DATA", "GRANT"]);
  for (const type of refusedTypes) {
    it(`refuses a ${type} statement after the dry run, never executing it`, async () => {
      const sql = `/* ${type} */ statement`;
      standin.onQuery({ match: (s) => s === sql, statementType: type, totalBytesProcessed: 10 });
      const e = await failure((await open()).query(sql, ctx));
      expect(e.category).toBe("refused");
      expect(e.details.statementType).toBe(type);
      expect(standin.inserts()).toHaveLength(1);
      expect(realInserts()).toHaveLength(0);
    });
  }

  it("refuses a table outside the dataset allowlist (from referencedTables) and INFORMATION_SCHEMA", async () => {
    const sql = "SELECT * FROM `demo-bq.secret.salaries` JOIN `demo-bq.shop.orders` USING (id)";
    standin.onQuery({
      match: (s) => s === sql,
      referencedTables: [orders, { projectId: P, datasetId: "secret", tableId: "salaries" }],
    });
    const e = await failure((await open()).query(sql, ctx));
    expect(e.category).toBe("access_denied");
    expect(e.details.tables).toEqual(["demo-bq.secret.salaries"]);
    expect(realInserts()).toHaveLength(0);
    const i = await failure((await open()).query("SELECT * FROM `region-eu`.INFORMATION_SCHEMA.TABLES", ctx));
    expect(i.category).toBe("refused");
  });

  it("what no dry run reports is refused for a full scope (every member before groups exist, and admins)", async () => {
    // The default deployment: no groups, so every member has the full scope, as an admin does.
    expect(ctx.scope.all).toBe(true);
    const refusedBefore = [
      // An escape inside backticks spells INFORMATION_SCHEMA past a text match: every person's SQL.
      ["SELECT query FROM `region-us.INFORMATION_SCHEM\\x41.JOBS_BY_USER`", "bad_input"],
      ["SELECT * FROM `region-us`.`INFORMATION_SCHEM\\u0041`.SCHEMATA", "bad_input"],
      ["SELECT * FROM `region-us`.INFORMATION_SCHEMA.SCHEMATA", "refused"],
      ["SELECT * FROM `region-us`.information_schema.jobs_by_project", "refused"],
      // A Cloud SQL connection: no dataset named, no table reported.
      ["SELECT * FROM EXTERNAL_QUERY('demo-bq.us.crm', 'SELECT * FROM customers')", "refused"],
      ["SELECT * FROM external_query /* c */ ('demo-bq.us.crm', 'SELECT 1')", "refused"],
    ] as const;
    for (const [sql, category] of refusedBefore) {
      const e = await failure((await open()).query(sql, ctx));
      expect(e.category, sql).toBe(category);
    }
    expect(standin.inserts()).toHaveLength(0);
    // After the dry run: something read while BigQuery reports no table at all.
    const tvf = "SELECT * FROM `demo-bq.us`.some_table_function(1)";
    standin.onQuery({ match: (s) => s === tvf, totalBytesProcessed: 0 });
    const t = await failure((await open()).query(tvf, ctx));
    expect(t.category).toBe("refused");
    expect(t.message).toContain("BigQuery reported no table read for `demo-bq.us`");
    expect(realInserts()).toHaveLength(0);
    // What reads no table stays allowed: literals, its own CTEs, UNNEST, EXTRACT … FROM.
    const fine = [
      "SELECT EXTRACT(YEAR FROM CURRENT_DATE()) AS y",
      "WITH months AS (SELECT m FROM UNNEST(GENERATE_ARRAY(1, 12)) AS m) SELECT m FROM months",
      "SELECT 'FROM secret.salaries' AS note FROM (SELECT 1)",
    ];
    for (const sql of fine) {
      standin.onQuery({ match: (s) => s === sql, totalBytesProcessed: 0, fields: ID, rows: [[1]] });
      await expect((await open()).query(sql, ctx), sql).resolves.toBeDefined();
    }
  });

  it("a person's scope: names outside it never reach BigQuery; views reading outside it read as missing", async () => {
    const shopOnly = { ...ctx, scope: limitedScope(["shop"]) };
    // Fence 1: a dataset out of scope is answered as BigQuery answers a dataset that does not exist.
    const e = await failure(
      (await open()).query("SELECT salary FROM `other-proj.public.salaries`", shopOnly),
    );
    expect(e.category).toBe("not_found");
    expect(e.message).toBe(
      "BigQuery: Not found: Dataset other-proj:public was not found in location EU. Use list_tables and describe_table to find the right names.",
    );
    expect(e.outOfScope).toEqual(["other-proj.public.salaries"]);
    expect(standin.inserts()).toHaveLength(0);
    // A table of a dataset the person sees part of reads like a missing table.
    const part = { ...ctx, scope: limitedScope(["shop.customers"]) };
    const t = await failure((await open()).query("SELECT * FROM shop.orders", part));
    expect(t.message).toMatch(
      /^BigQuery: Not found: Table demo-bq:shop\.orders was not found in location EU\./,
    );
    expect(standin.inserts()).toHaveLength(0);
    // Fence 2: a view in scope whose dry run reports a table outside it.
    const sql = "SELECT * FROM `demo-bq.shop.order_view`";
    standin.onQuery({ match: (s) => s === sql, referencedTables: [orders] });
    const v = await failure((await open()).query(sql, { ...ctx, scope: limitedScope(["shop.order_view"]) }));
    expect(v.category).toBe("not_found");
    expect(v.outOfScope).toEqual(["demo-bq.shop.orders"]);
    expect(realInserts()).toHaveLength(0);
    // Comments cannot split a hidden name; escapes inside backticks are refused; INFORMATION_SCHEMA stays closed.
    const before = standin.inserts().length;
    for (const sql of ["SELECT x FROM public/* */.salaries", "SELECT x FROM public -- c\n.salaries"]) {
      expect((await failure((await open()).query(sql, shopOnly))).outOfScope, sql).toEqual([
        "public.salaries",
      ]);
    }
    expect(
      (await failure((await open()).query("SELECT x FROM `publ\\x69c.salaries`", shopOnly))).category,
    ).toBe("bad_input");
    const info = "SELECT * FROM `region-eu`.`INFORMATION_SCHEM\\x41`.COLUMNS";
    expect((await failure((await open()).query(info, shopOnly))).category).toBe("bad_input");
    expect(standin.inserts()).toHaveLength(before);
    // In scope, it runs.
    standin.onQuery({ match: /FROM shop\.orders$/, referencedTables: [orders] });
    await expect((await open()).query("SELECT order_id FROM shop.orders", shopOnly)).resolves.toBeDefined();
  });

  it("refuses over the per-query and the per-conversation budget, saying the numbers", async () => {
    standin.onQuery({ match: /FROM big_scan/, totalBytesProcessed: 600_000_000, referencedTables: [orders] });
    const e = await failure((await open()).query("SELECT * FROM big_scan", ctx));
    expect(e.category).toBe("budget");
    expect(e.message).toContain("600,000,000 bytes");
    expect(e.message).toContain("500,000,000 bytes");
    expect(e.details).toMatchObject({ estimatedBytes: 600_000_000, budgetBytes: 500_000_000 });

    standin.onQuery({ match: /FROM mid_scan/, totalBytesProcessed: 300_000_000, referencedTables: [orders] });
    const t = await failure(
      (await open()).query("SELECT * FROM mid_scan", { ...ctx, bytesBilledSoFar: 1_800_000_000 }),
    );
    expect(t.category).toBe("budget");
    expect(t.message).toContain("300,000,000 bytes");
    expect(t.message).toMatch(/has 200,000,000 bytes .* left of its 2,000,000,000 bytes/);
    expect(t.details).toMatchObject({ estimatedBytes: 300_000_000, budgetBytes: 200_000_000 });
    expect(realInserts()).toHaveLength(0);
  });

  it("refuses a query over what is left of the person's daily quota, and caps the job at it", async () => {
    standin.onQuery({
      match: /FROM quota_scan/,
      totalBytesProcessed: 300_000_000,
      referencedTables: [orders],
    });
    const e = await failure(
      (await open()).query("SELECT * FROM quota_scan", { ...ctx, personBytesLeft: 250_000_000 }),
    );
    expect(e.category).toBe("budget");
    expect(e.message).toMatch(/you have 250,000,000 bytes \(250.00 MB\) left of today's query quota/);
    expect(e.details).toMatchObject({ estimatedBytes: 300_000_000, budgetBytes: 250_000_000 });
    expect(realInserts()).toHaveLength(0);
    // Within it, the job's maximumBytesBilled never exceeds what is left.
    standin.onQuery({
      match: /FROM quota_fits/,
      totalBytesProcessed: 15_000_000,
      totalBytesBilled: 15_728_640,
      referencedTables: [orders],
      fields: ID,
      rows: [[1]],
    });
    await (await open()).query("SELECT id FROM quota_fits", { ...ctx, personBytesLeft: 20_000_000 });
    expect(realInserts().at(-1)!.configuration.query.maximumBytesBilled).toBe("20000000");
    // Less left than BigQuery's minimum bill for a table: refused, whatever the estimate.
    standin.onQuery({ match: /FROM quota_tiny/, totalBytesProcessed: 1_000, referencedTables: [orders] });
    const tiny = await failure(
      (await open()).query("SELECT * FROM quota_tiny", { ...ctx, personBytesLeft: 5_000_000 }),
    );
    expect(tiny.category).toBe("budget");
  });

  it("sends maximumBytesBilled with headroom, labels, location and a job timeout", async () => {
    standin.onQuery({
      match: /FROM shop_orders_labelled/,
      totalBytesProcessed: 1_000_000,
      totalBytesBilled: 10_485_760,
      referencedTables: [orders],
      fields: ID,
      rows: [[1]],
    });
    const r = await (
      await open({ QUARRY_QUERY_TIMEOUT_MS: "30000" })
    ).query("SELECT id FROM shop_orders_labelled", ctx);
    const [run] = realInserts();
    expect(run.configuration.query.maximumBytesBilled).toBe(String(1_000_000 + MIN_BILLED_PER_TABLE));
    expect(Number(run.configuration.query.maximumBytesBilled)).toBeGreaterThanOrEqual(10 * 1024 * 1024);
    expect(run.configuration.labels).toEqual({
      app: "quarry",
      quarry_user: "user_example_com",
      quarry_thread: "thread-1",
      quarry_run: "run-1",
    });
    expect(run.jobReference.location).toBe("EU");
    expect(run.configuration.jobTimeoutMs).toBe("30000");
    expect(standin.calls("GET", "/queries/").every((q) => q.query.location === "EU")).toBe(true);
    expect(r).toMatchObject({
      bytesBilled: 10_485_760,
      bytesProcessed: 1_000_000,
      estimatedBytes: 1_000_000,
    });
    expect(r.jobId).toBe(run.jobReference.jobId);
  });

  it("maps a bytes-billed-limit failure to bytes_limit with the bytes required", async () => {
    const message = "Query exceeded limit for bytes billed: 20971520. 41943040 or higher required.";
    for (const at of ["insert", "results"] as const) {
      const sql = `SELECT id FROM limited_${at}`;
      standin.onQuery({
        match: (s) => s === sql,
        referencedTables: [orders],
        error: { at, code: 400, reason: "bytesBilledLimitExceeded", message },
      });
      const e = await failure((await open()).query(sql, ctx));
      expect(e.category, at).toBe("bytes_limit");
      expect(e.details.requiredBytes, at).toBe(41_943_040);
    }
  });

  it("maps invalid queries with BigQuery's message and position, and not-found", async () => {
    const message = "Unrecognized name: custmer_id; Did you mean customer_id? at [1:8]";
    standin.onQuery({
      match: /custmer_id/,
      error: { at: "dryRun", code: 400, reason: "invalidQuery", message },
    });
    const e = await failure((await open()).query("SELECT custmer_id FROM `demo-bq.shop.orders`", ctx));
    expect(e.category).toBe("invalid_query");
    expect(e.message).toContain("Did you mean customer_id?");
    expect(e.details.position).toEqual({ line: 1, column: 8 });
    standin.onQuery({
      match: /ordrs/,
      error: { at: "dryRun", code: 404, reason: "notFound", message: "Not found: Table demo-bq:shop.ordrs" },
    });
    expect((await failure((await open()).query("SELECT 1 FROM shop.ordrs", ctx))).category).toBe("not_found");
  });

  it("retries quota and rate errors with bounded backoff", async () => {
    standin.onQuery({
      match: /busy_twice/,
      transient: { times: 2, code: 403, reason: "rateLimitExceeded", message: "Exceeded rate limits" },
      fields: ID,
      rows: [[7]],
    });
    expect((await (await open()).query("SELECT busy_twice", ctx)).rows).toEqual([{ id: 7 }]);
    // Two refused dry-run attempts, the successful one, then the real job.
    expect(standin.inserts().map((b) => Boolean(b.configuration.dryRun))).toEqual([true, true, true, false]);
    standin.onQuery({
      match: /busy_always/,
      transient: { times: 99, code: 403, reason: "quotaExceeded", message: "Quota exceeded" },
    });
    standin.requests.length = 0;
    const e = await failure((await open()).query("SELECT busy_always", ctx));
    expect(e.category).toBe("quota");
    expect(standin.calls("POST", /\/jobs$/)).toHaveLength(3);
  });

  it("cancels the job server-side when the timeout passes", async () => {
    standin.onQuery({ match: /slow_query/, pendingPolls: Infinity, fields: ID });
    const e = await failure((await open({ QUARRY_QUERY_TIMEOUT_MS: "300" })).query("SELECT slow_query", ctx));
    expect(e.category).toBe("timeout");
    const [run] = realInserts();
    expect(standin.calls("POST", "/cancel").map((q) => q.path)).toEqual([
      `/projects/${P}/jobs/${run.jobReference.jobId}/cancel`,
    ]);
  });

  it("a cancelled run cancels its BigQuery job server-side, at once", async () => {
    standin.onQuery({ match: /stopped_query/, pendingPolls: Infinity, fields: ID });
    const ac = new AbortController();
    const running = failure((await open()).query("SELECT stopped_query", { ...ctx, signal: ac.signal }));
    // The job is running (inserted, polled); then the run is stopped.
    await vi.waitFor(() => expect(realInserts()).toHaveLength(1), { timeout: 10_000 });
    ac.abort();
    const e = await running;
    expect(e.message).toMatch(/cancelled because the run was cancelled; the BigQuery job was cancelled too/);
    const [run] = realInserts();
    expect(standin.calls("POST", "/cancel").map((q) => q.path)).toEqual([
      `/projects/${P}/jobs/${run.jobReference.jobId}/cancel`,
    ]);
  });

  it("detects truncation by asking for N+1 rows and paging", async () => {
    standin.onQuery({
      match: /many_rows/,
      fields: ID,
      rows: Array.from({ length: 25 }, (_, i) => [i]),
      pageSize: 4,
    });
    const r = await (await open()).query("SELECT many_rows", ctx);
    expect(r.rows).toHaveLength(10);
    expect(r.truncated).toBe(true);
    expect(r.totalRows).toBe(25);
    const pages = standin.calls("GET", "/queries/");
    expect(Number(pages[0].query.maxResults)).toBe(11);
    expect(pages.reduce((n, q) => n + Math.min(Number(q.query.maxResults), 4), 0)).toBeLessThanOrEqual(12);

    standin.onQuery({ match: /exact_rows/, fields: ID, rows: Array.from({ length: 10 }, (_, i) => [i]) });
    const exact = await (await open()).query("SELECT exact_rows", ctx);
    expect(exact.truncated).toBe(false);
  });

  it("runs fenced, semicolon-terminated SQL on the first try: the dry run and the job get the bare statement", async () => {
    standin.onQuery({ match: /^SELECT 1 AS id$/, totalBytesProcessed: 0, fields: ID, rows: [[1]] });
    const r = await (await open()).query("```sql\nSELECT 1 AS id;\n```", ctx);
    expect(r.rows).toEqual([{ id: 1 }]);
    expect(r.sql).toBe("SELECT 1 AS id");
    expect(standin.inserts().map((b) => b.configuration.query?.query)).toEqual([
      "SELECT 1 AS id",
      "SELECT 1 AS id",
    ]);
    // Two statements inside one fence are still a script, refused after the dry run.
    standin.onQuery({ match: /^SELECT 1; SELECT 2$/, statementType: "SCRIPT" });
    const e = await failure((await open()).query("```sql\nSELECT 1; SELECT 2;\n```", ctx));
    expect(e.category).toBe("refused");
    expect(realInserts()).toHaveLength(1);
  });

  it("reads results a bounded page at a time: pages sized by bytes, reading ends at the character cap", async () => {
    const WIDE: RestField[] = [
      { name: "id", type: "INTEGER" },
      { name: "blob", type: "STRING" },
    ];
    standin.onQuery({
      match: /wide_rows/,
      fields: WIDE,
      rows: Array.from({ length: 40 }, (_, i) => [i, "w".repeat(100_000)]),
      pageSize: 3,
    });
    const r = await (await open({ QUARRY_MAX_ROWS: "1000" })).query("SELECT wide_rows", ctx);
    expect(r.truncated).toBe(true);
    expect(r.totalRows).toBe(40);
    expect(JSON.stringify(r.rows).length).toBeLessThanOrEqual(2_000_000);
    const pages = standin.calls("GET", "/queries/").map((q) => Number(q.query.maxResults));
    expect(pages[0]).toBe(500);
    // After the first page the width is known: no later page asks for more than the cap holds.
    for (const asked of pages.slice(1)) expect(asked).toBeLessThanOrEqual(2_000_000 / 100_000);
    // Reading stopped at the cap: not every row was fetched.
    expect(pages.length).toBeLessThan(40 / 3);

    standin.onQuery({ match: /one_huge/, fields: WIDE, rows: [[1, "h".repeat(3_000_000)]] });
    const huge = await (await open()).query("SELECT one_huge", ctx);
    expect(huge.rows).toHaveLength(1);
    expect((huge.rows[0].blob as string).length).toBe(1_000_000);
    expect((huge.rows[0].blob as string).endsWith("…")).toBe(true);
  });

  it("normalizes every BigQuery type to JSON-safe values", async () => {
    const fields: RestField[] = [
      { name: "small", type: "INTEGER" },
      { name: "big", type: "INTEGER" },
      { name: "num", type: "NUMERIC" },
      { name: "bignum", type: "BIGNUMERIC" },
      { name: "f", type: "FLOAT" },
      { name: "nan", type: "FLOAT" },
      { name: "ok", type: "BOOLEAN" },
      { name: "s", type: "STRING" },
      { name: "b", type: "BYTES" },
      { name: "d", type: "DATE" },
      { name: "dt", type: "DATETIME" },
      { name: "t", type: "TIME" },
      { name: "ts", type: "TIMESTAMP" },
      { name: "g", type: "GEOGRAPHY" },
      { name: "j", type: "JSON" },
      { name: "arr", type: "INTEGER", mode: "REPEATED" },
      {
        name: "rec",
        type: "RECORD",
        fields: [
          { name: "n", type: "NUMERIC" },
          { name: "tags", type: "STRING", mode: "REPEATED" },
        ],
      },
      { name: "nul", type: "STRING" },
    ];
    const row = [
      "42",
      "9007199254740993",
      "123456789.123456789",
      "0.00000000000000000000000000000000000001",
      "1.5",
      "NaN",
      "true",
      "hé",
      Buffer.from("hello").toString("base64"),
      "2024-02-29",
      "2024-02-29T13:14:15.123456",
      "13:14:15",
      "1709212455123456",
      "POINT(1 2)",
      '{"a":[1,2],"b":null}',
      ["1", "9007199254740993"],
      { n: "1e-9", tags: ["x", "y"] },
      null,
    ];
    standin.onQuery({ match: /all_types/, fields, rows: [row] });
    const r = await (await open()).query("SELECT all_types", ctx);
    expect(r.rows[0]).toEqual({
      small: 42,
      big: "9007199254740993",
      num: "123456789.123456789",
      bignum: "0.00000000000000000000000000000000000001",
      f: 1.5,
      nan: "NaN",
      ok: true,
      s: "hé",
      b: "aGVsbG8=",
      d: "2024-02-29",
      dt: "2024-02-29T13:14:15.123456",
      t: "13:14:15",
      ts: "2024-02-29T13:14:15.123456Z",
      g: "POINT(1 2)",
      j: { a: [1, 2], b: null },
      arr: [1, "9007199254740993"],
      rec: { n: "0.000000001", tags: ["x", "y"] },
      nul: null,
    });
    expect(JSON.parse(JSON.stringify(r.rows))).toEqual(r.rows);
    expect(r.columns.find((c) => c.name === "rec")?.fields?.map((f) => f.name)).toEqual(["n", "tags"]);
  });

  it("lists and describes allowed tables without running a query job", async () => {
    const wh = await open();
    const tables = await wh.listTables();
    expect(tables.find((t) => t.id === "demo-bq.shop.orders")).toEqual({
      id: "demo-bq.shop.orders",
      description: "Orders",
      rowCount: 8,
      partitioning: "order_date (DAY)",
      clustering: ["customer_id"],
    });
    const s = await wh.describeTable("`demo-bq.shop.orders`");
    expect(s.columns[0]).toMatchObject({
      name: "order_id",
      type: "INTEGER",
      mode: "REQUIRED",
      description: "Primary key",
    });
    expect(s.columns[2].fields?.[0].name).toBe("sku");
    expect(s.sampleRows).toHaveLength(5);
    expect(s.sampleRows[0]).toEqual({ order_id: 1, order_date: "2024-01-01", items: [{ sku: "s0" }] });
    expect(standin.calls("GET", /\/data$/)).toHaveLength(1);
    expect(standin.inserts()).toHaveLength(0);
    expect((await failure(wh.describeTable("demo-bq.secret.salaries"))).category).toBe("access_denied");
  });

  it("the tools turn BigQuery failures into tool errors the planner can read", async () => {
    standin.onQuery({ match: /DELETE/, statementType: "DELETE" });
    const [bq] = createWarehouseTools(await open());
    const m = await bq.invoke({
      type: "tool_call",
      id: "c1",
      name: "bq_query",
      args: { sql: "DELETE FROM x WHERE true" },
    });
    expect(m.content).toMatch(/^Error \(refused\): .*DELETE/);
  });

  it("the person reaches the gate through the tool: the audit names them by email, their day's bytes cap the query", async () => {
    const records: QueryRecord[] = [];
    const [bq] = createWarehouseTools(auditedWarehouse(await open(), (r) => records.push(r)));
    // What the executor puts in the run's configuration for one query.
    const quarry = {
      userId: "uid-ann",
      userEmail: "ann@example.com",
      threadId: "t9",
      runId: "r9",
      bytesBilledSoFar: 0,
      scope: FULL_SCOPE,
    };
    standin.onQuery({
      match: /^SELECT 7 AS id$/,
      totalBytesProcessed: 1_000,
      fields: ID,
      rows: [[7]],
      referencedTables: [orders],
    });
    await bq.invoke(
      { type: "tool_call", id: "c1", name: "bq_query", args: { sql: "SELECT 7 AS id" } },
      { configurable: { quarry: { ...quarry, personBytesLeft: 5 * MIN_BILLED_PER_TABLE } } },
    );
    expect(records.at(-1)).toMatchObject({ userId: "uid-ann", userEmail: "ann@example.com", outcome: "ok" });
    const m = await bq.invoke(
      { type: "tool_call", id: "c2", name: "bq_query", args: { sql: "SELECT 7 AS id" } },
      { configurable: { quarry: { ...quarry, personBytesLeft: 1_000 } } },
    );
    expect(m.content).toMatch(/^Error \(budget\): .*left of today's query quota/);
    expect(records.at(-1)).toMatchObject({ userEmail: "ann@example.com", outcome: "refused" });
    expect(realInserts()).toHaveLength(1);
  });
});

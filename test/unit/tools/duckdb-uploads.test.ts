/**
 * A conversation's uploaded tables in the DuckDB engine, through the worker pool as the function
 * uses it: `uploads.<name>` joins with the warehouse when the query carries that conversation's
 * uploads, and is unknown everywhere else (no uploads, another conversation's), for a limited scope
 * and for an admin's full scope alike; the files themselves cannot be read by path.
 */
import { mkdtemp, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readConfig } from "../../../functions/src/config";
import { DuckDbPool } from "../../../functions/src/tools/duckdb/pool";
import { createWarehouseTools } from "../../../functions/src/tools/model-tools";
import { PERSON_KEY } from "../../../functions/src/tools/person";
import { FULL_SCOPE, limitedScope } from "../../../functions/src/tools/scope";
import { WarehouseError, type QueryContext } from "../../../functions/src/tools/types";
import type { UploadRef } from "../../../functions/src/tools/uploads/types";
import { DuckDbUploads } from "../../../functions/src/tools/uploads/duckdb-store";

let dir: string;
let pool: DuckDbPool;
let targets: UploadRef;
let other: UploadRef;

async function parquet(name: string, sql: string): Promise<string> {
  const duck = await import("@duckdb/node-api");
  const instance = await duck.DuckDBInstance.create(":memory:");
  const conn = await instance.connect();
  const file = path.join(dir, `${name}.parquet`);
  await conn.run(`COPY (${sql}) TO '${file}' (FORMAT parquet)`);
  conn.closeSync();
  instance.closeSync();
  return file;
}

const ref = (name: string, location: string): UploadRef => ({
  name,
  file: `${name}.csv`,
  table: `uploads.${name}`,
  location,
  columns: [
    { name: "month", type: "VARCHAR" },
    { name: "target", type: "BIGINT" },
  ],
  rows: 2,
});

const ctx = (over: Partial<QueryContext> = {}): QueryContext => ({
  userId: "u1",
  threadId: "t1",
  runId: "r1",
  bytesBilledSoFar: 0,
  scope: limitedScope(["shop"]),
  ...over,
});

const JOIN =
  "SELECT t.month, t.target, count(o.order_id) AS orders FROM uploads.targets t " +
  "LEFT JOIN shop.orders o ON strftime(o.order_date, '%Y-%m') = t.month GROUP BY 1, 2 ORDER BY 1";

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "duckdb-uploads-"));
  targets = ref(
    "targets",
    await parquet("targets", "SELECT * FROM (VALUES ('2025-01', 100), ('2025-02', 200)) v(month, target)"),
  );
  other = ref("secret", await parquet("secret", "SELECT 'x' AS month, 1 AS target"));
  pool = await DuckDbPool.open(
    structuredClone(readConfig({ GOOGLE_CLOUD_PROJECT: "demo-test", QUARRY_DUCKDB_WORKERS: "1" }).warehouse),
  );
}, 120_000);

afterAll(async () => {
  await pool?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("uploaded tables in DuckDB", () => {
  it("joins uploads.<name> with the warehouse for a limited scope that does not list it", async () => {
    const result = await pool.query(JOIN, ctx({ uploads: [targets] }));
    expect(result.rows.map((r) => [r.month, r.target])).toEqual([
      ["2025-01", 100],
      ["2025-02", 200],
    ]);
    expect(Number(result.rows[0].orders)).toBeGreaterThan(0);
  });

  it("is unknown without the conversation's uploads, for a limited and a full scope", async () => {
    for (const scope of [limitedScope(["shop"]), FULL_SCOPE]) {
      const err = await pool.query("SELECT * FROM uploads.targets", ctx({ scope })).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WarehouseError);
      expect((err as WarehouseError).message).not.toContain("2025-01");
    }
  });

  it("another conversation's upload is not attached beside this one's", async () => {
    const err = await pool
      .query("SELECT * FROM uploads.secret", ctx({ uploads: [targets], scope: FULL_SCOPE }))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WarehouseError);
    expect((err as WarehouseError).message).not.toMatch(/secret\b.*month/);
    // And the other conversation sees its own, not this one's.
    const own = await pool.query("SELECT month FROM uploads.secret", ctx({ uploads: [other] }));
    expect(own.rows).toEqual([{ month: "x" }]);
    const err2 = await pool
      .query("SELECT * FROM uploads.targets", ctx({ uploads: [other] }))
      .catch((e: unknown) => e);
    expect(err2).toBeInstanceOf(WarehouseError);
  });

  it("the Parquet files cannot be read by path, even with uploads attached", async () => {
    const err = await pool
      .query(
        `SELECT * FROM read_parquet('${other.location}')`,
        ctx({ uploads: [targets], scope: FULL_SCOPE }),
      )
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WarehouseError);
  });

  it("list_tables and describe_table show the conversation's uploads to the model, and only then", async () => {
    const tools = Object.fromEntries(createWarehouseTools(pool).map((t) => [t.name, t]));
    const person = (uploads?: UploadRef[]) => ({
      configurable: {
        [PERSON_KEY]: {
          uid: "u1",
          email: null,
          scope: limitedScope(["shop"]),
          ...(uploads ? { uploads } : {}),
        },
      },
    });
    const listed = String(await tools.list_tables.invoke({}, person([targets])));
    expect(listed).toContain("uploads.targets");
    expect(String(await tools.list_tables.invoke({}, person()))).not.toContain("uploads.");
    const described = String(
      await tools.describe_table.invoke({ table: "uploads.targets" }, person([targets])),
    );
    expect(described).toContain("target");
    const refused = String(await tools.describe_table.invoke({ table: "uploads.targets" }, person()));
    expect(refused).toMatch(/not available/);
  });
});

describe("the local uploads folder", () => {
  it("is created readable by its owner only, with each conversation's folder", async () => {
    const root = path.join(dir, "fresh-uploads");
    const src = await parquet("owned", "SELECT 1 AS n");
    const threadId = "6f1c2a9e-5b7d-4c1e-9a2b-3c4d5e6f7a8b";
    const stored = await new DuckDbUploads(root, 60_000).put({
      parquetPath: src,
      columns: [],
      rows: 1,
      userId: "u1",
      threadId,
      name: "owned",
      file: "owned.csv",
      expiresAt: new Date(Date.now() + 60_000),
    });
    expect((await stat(root)).mode & 0o777).toBe(0o700);
    expect(path.dirname(stored)).not.toBe(root);
    expect((await stat(path.dirname(stored))).mode & 0o777).toBe(0o700);
    expect((await stat(stored)).isFile()).toBe(true);
  });
});

/**
 * MCP's `run_sql` on BigQuery: the function's express app served in this process (on the
 * integration stack's Firestore and Auth emulators), the real `@google-cloud/bigquery` client
 * against the BigQuery REST stand-in, the official MCP client with a personal access token. The
 * per-query byte cap and the person's bytes left today are BigQuery's own guards (the dry run's
 * estimate), which DuckDB, the emulator stack's warehouse, does not have.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { deleteApp, initializeApp, type App } from "firebase-admin/app";
import { getFirestore } from "firebase-admin/firestore";
import { INTEGRATION_ACCESS_ENV, signUp, type TestUser } from "../../support/auth-emulator";
import { BigQueryStandin, type RestField } from "../../support/bigquery-standin";
import { stackEnv } from "../../support/stack-env";
import { connectMcp, makeToken } from "../../support/mcp-client";

const PROJECT = "mcp-prj";
const ORDERS = { projectId: PROJECT, datasetId: "shop", tableId: "orders" };
const FIELDS: RestField[] = [
  { name: "region", type: "STRING" },
  { name: "amount", type: "INTEGER" },
];
const ROWS = [
  ["north", 10],
  ["south", 20],
  ["east", 5],
];
const CAP = 500_000_000;

const bq = new BigQueryStandin();
let server: http.Server;
let url: string;
let admin: App;
let alice: TestUser;
let frugal: TestUser;
const open: Client[] = [];

async function connect(user: TestUser): Promise<Client> {
  const client = await connectMcp(
    `${url}/mcp`,
    (await makeToken(url, user.idToken, "bigquery test", 1)).token,
  );
  open.push(client);
  return client;
}

type Result = {
  isError?: boolean;
  content: { text?: string }[];
  structuredContent?: Record<string, unknown>;
};
const runSql = async (client: Client, sql: string, maxRows?: number) =>
  (await client.callTool({
    name: "run_sql",
    arguments: { sql, ...(maxRows ? { max_rows: maxRows } : {}) },
  })) as Result;

beforeAll(async () => {
  const stack = stackEnv();
  const stamp = Date.now();
  [alice, frugal] = await Promise.all(
    ["mcp-bq-alice", "mcp-bq-frugal"].map((n) => signUp(stack.urls.auth!, `${n}-${stamp}@example.com`)),
  );
  bq.addTable({ ...ORDERS, fields: FIELDS, rows: ROWS })
    .onQuery({
      match: (sql) => sql.includes("FROM shop.orders") && !sql.includes("CROSS JOIN"),
      referencedTables: [ORDERS],
      fields: FIELDS,
      rows: ROWS,
      totalBytesProcessed: 48_000_000,
    })
    .onQuery({
      match: (sql) => sql.includes("CROSS JOIN"),
      referencedTables: [ORDERS],
      fields: FIELDS,
      rows: ROWS,
      totalBytesProcessed: 7_000_000_000,
    });
  await bq.start();
  server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  Object.assign(process.env, {
    ...INTEGRATION_ACCESS_ENV,
    QUARRY_WAREHOUSE: "bigquery",
    BIGQUERY_EMULATOR_HOST: bq.url.replace("http://", ""),
    QUARRY_BQ_PROJECT: PROJECT,
    QUARRY_BQ_DATASETS: `${PROJECT}.shop`,
    QUARRY_MAX_BYTES_PER_QUERY: String(CAP),
  });
  // A member whose bytes for today are fewer than one query scans.
  admin = initializeApp({ projectId: stack.env.GCLOUD_PROJECT }, `mcp-bq-${stamp}`);
  const now = new Date().toISOString();
  await getFirestore(admin)
    .collection("members")
    .doc(frugal.email)
    .set({
      email: frugal.email,
      role: "member",
      quotas: { bytesPerDay: 10_000_000 },
      addedBy: "test",
      addedAt: now,
      updatedAt: now,
    });
  const { createApp } = await import("../../../functions/src/app");
  server.on("request", createApp());
});

afterAll(async () => {
  for (const c of open) await c.close().catch(() => {});
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  await bq.stop();
  if (admin) await deleteApp(admin);
});

describe("MCP run_sql on BigQuery", () => {
  it("runs a query within the caps: the rows with 'N of M rows' and what it scanned", async () => {
    const client = await connect(alice);
    const r = await runSql(client, "SELECT region, amount FROM shop.orders", 2);
    expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ total: 3, bytes_processed: 48_000_000 });
    expect((r.structuredContent!.rows as unknown[]).length).toBe(2);
    expect(r.content[0].text).toContain("2 of 3 rows");
  });

  it("refuses a query over the per-query byte cap in words, before it runs", async () => {
    const client = await connect(alice);
    const jobsBefore = bq.inserts().filter((b) => !b.configuration.dryRun).length;
    const r = await runSql(client, "SELECT a.region FROM shop.orders a CROSS JOIN shop.orders b");
    expect(r.isError).toBe(true);
    expect(r.content[0].text).toContain("7,000,000,000 bytes");
    expect(r.content[0].text).toContain("500,000,000 bytes");
    // Dry-run only: no query job was started.
    expect(bq.inserts().filter((b) => !b.configuration.dryRun).length).toBe(jobsBefore);
  });

  it("refuses a query over the person's bytes left today, naming them", async () => {
    const client = await connect(frugal);
    const r = await runSql(client, "SELECT region, amount FROM shop.orders");
    expect(r.isError).toBe(true);
    expect(r.content[0].text).toMatch(/48,000,000 bytes/);
    expect(r.content[0].text).toMatch(/10,000,000 bytes/);
    // The same query runs for a person with the default budget (this test could fail).
    const rich = await runSql(await connect(alice), "SELECT region, amount FROM shop.orders");
    expect(rich.isError).toBeFalsy();
  });
});

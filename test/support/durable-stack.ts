/**
 * A stack of its own for durable-run tests (durable.int.ts), started by the test file: the Java
 * Firestore emulator, firebase-tools' functions, auth and tasks emulators, the BigQuery REST
 * stand-in (the real `@google-cloud/bigquery` client of the function talks to it) and the Vertex
 * AI stand-in with its hold control — all in this process or its children, so the tests can stop
 * the function process that serves a run (SIGKILL by PID) while the run is held at a known point.
 * Its own stack because killing function workers must not touch other files' runs, and the
 * lease is short here (6 s) so a stopped run is continued within seconds.
 */
import { appendFileSync, readFileSync } from "node:fs";
import { Firestore } from "@google-cloud/firestore";
import { startStack } from "../../scripts/stack.mjs";
import { apiScript } from "./api-script";
import { INTEGRATION_ACCESS_ENV, warmBlockingFunctions } from "./auth-emulator";
import { startFaultProxy } from "./fault-proxy";
import { BigQueryStandin, type QueryScript, type RestField } from "./bigquery-standin";
import { holdClient, startHoldServer, type Holds } from "./hold-control";
import { startVertexStandin } from "./vertex-standin";

const BQ_PROJECT = "durable-prj";
const ORDERS = { projectId: BQ_PROJECT, datasetId: "shop", tableId: "orders" };
const FIELDS: RestField[] = [
  { name: "order_id", type: "INTEGER" },
  { name: "amount", type: "INTEGER" },
];
/** Bytes one query on `shop.orders` bills (the stand-in's statistics). */
export const BILLED = 10_485_760;

export interface DurableStack {
  api: string;
  /**
   * The API through a front that closes every client connection when told (`cutClients`): what
   * Google's front end does to the connections of an instance that stopped. The functions
   * emulator instead leaves a stopped worker's responses open for ever.
   */
  front: string;
  cutClients(): Promise<void>;
  authUrl: string;
  db: Firestore;
  holds: Holds;
  bq: BigQueryStandin;
  /** The query the "[sql:held-job]" question runs: its job stays RUNNING until `releaseJob()`. */
  heldJob: QueryScript;
  releaseJob(): void;
  /** Process groups of the stack (a function worker belongs to the functions emulator's). */
  pids: number[];
  /** The function's configuration as the emulated function has it (for an app served in this process). */
  env: Record<string, string>;
  stop(): Promise<void>;
}

export async function startDurableStack(): Promise<DurableStack> {
  const holds = await startHoldServer({ timeoutMs: 120_000 });
  const standin = await startVertexStandin({
    script: apiScript({ holds }),
    tokenDelayMs: 5,
    charsPerChunk: 16,
  });
  holds.recordPrompts(() => standin.requests.map((r) => JSON.stringify(r.body)));
  holds.recordCalls(() => standin.arrivals);
  const bq = new BigQueryStandin();
  const rows = [
    [1, 10],
    [2, 20],
  ];
  const plain = {
    referencedTables: [ORDERS],
    fields: FIELDS,
    rows,
    totalBytesProcessed: BILLED,
    totalBytesBilled: BILLED,
  };
  const heldJob: QueryScript = {
    match: (sql) => sql.includes("held job"),
    ...plain,
    fields: [{ name: "orders", type: "INTEGER" }],
    rows: [[2]],
    pendingPolls: Infinity,
  };
  bq.addTable({ ...ORDERS, fields: FIELDS, rows })
    .onQuery({
      match: (sql) => sql.includes("shop."),
      ...plain,
      fields: [{ name: "orders", type: "INTEGER" }],
      rows: [[2]],
    })
    .onQuery({
      match: (sql) => /\bnme\b/.test(sql),
      error: { at: "dryRun", code: 400, reason: "invalidQuery", message: "Unrecognized name: nme at [1:8]" },
    })
    .onQuery(heldJob);
  await bq.start();
  const logFile = process.env.QUARRY_STACK_LOG; // keeps the emulators' output for debugging
  const env = {
    QUARRY_WAREHOUSE: "bigquery",
    BIGQUERY_EMULATOR_HOST: bq.url.replace("http://", ""),
    QUARRY_BQ_PROJECT: BQ_PROJECT,
    QUARRY_BQ_DATASETS: `${BQ_PROJECT}.shop`,
    QUARRY_RUN_LEASE_SECONDS: "6",
    QUARRY_RUN_WATCHDOG_SECONDS: "1",
    QUARRY_RUN_CONTINUATIONS: "2",
    ...INTEGRATION_ACCESS_ENV,
    VERTEX_AI_EMULATOR_HOST: standin.host,
    NODE_EXTRA_CA_CERTS: standin.certFile,
  };
  const stack = await startStack({
    ...(logFile ? { onOutput: (chunk: Buffer) => appendFileSync(logFile, chunk) } : {}),
    services: ["firestore", "functions", "auth"],
    ports: {
      firestore: "auto",
      functions: "auto",
      auth: "auto",
      hub: "auto",
      logging: "auto",
      eventarc: "auto",
      tasks: "auto",
    },
    env,
  }).catch(async (err: unknown) => {
    await Promise.all([holds.close(), standin.stop(), bq.stop()]);
    throw err;
  });
  const front = await startFaultProxy("127.0.0.1", stack.ports.functions);
  const db = new Firestore({
    projectId: stack.env.GCLOUD_PROJECT,
    host: stack.env.FIRESTORE_EMULATOR_HOST,
    ssl: false,
  });
  const stop = async () => {
    await holds.close();
    await db.terminate();
    await front.close();
    await stack.stop();
    await standin.stop();
    await bq.stop();
  };
  try {
    await warmBlockingFunctions(stack.urls.auth!);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    api: stack.urls.api!,
    front: stack.urls.api!.replace(/127\.0\.0\.1:\d+/, front.address),
    cutClients: async () => {
      await fetch(`${front.controlUrl}/fail?ms=1`, { method: "POST" });
    },
    authUrl: stack.urls.auth!,
    db,
    holds: holdClient(holds.url),
    bq,
    heldJob,
    releaseJob: () => {
      heldJob.pendingPolls = 0;
    },
    pids: stack.pids,
    env: {
      ...env,
      FIRESTORE_EMULATOR_HOST: stack.env.FIRESTORE_EMULATOR_HOST,
      FIREBASE_AUTH_EMULATOR_HOST: stack.env.FIREBASE_AUTH_EMULATOR_HOST,
      GCLOUD_PROJECT: stack.env.GCLOUD_PROJECT,
      CLOUD_TASKS_EMULATOR_HOST: `127.0.0.1:${stack.ports.tasks}`,
      // Queues are known by the function's bare name in the emulator (services.ts).
      FUNCTIONS_EMULATOR: "true",
    },
    stop,
  };
}

/** The functions whose workers serve runs: streamed, queued (background, v2), continued. */
type Target = "api" | "backgroundRun" | "runWatchdog";

/**
 * Stops the function process that holds thread `threadId`'s run now (SIGKILL), as a crash would:
 * the lease's holder names it (`host:pid`); it must be a worker of this stack's functions
 * emulator (its process group) serving `target` (`api`, `backgroundRun`, or `runWatchdog` for a
 * continuation).
 * Resolves once the process is gone.
 */
export async function killRunHolder(
  stack: DurableStack,
  threadId: string,
  target: Target | Target[],
): Promise<{ pid: number; attempt: number }> {
  const run = (await stack.db.collection("threads").doc(threadId).get()).get("run") as
    { holder?: string; attempt?: number } | undefined;
  const pid = Number(run?.holder?.split(":").pop());
  if (!run || !Number.isInteger(pid) || pid <= 0)
    throw new Error(`thread ${threadId} has no run holder: ${JSON.stringify(run)}`);
  const pgrp = Number(readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ")[2]);
  if (!stack.pids.includes(pgrp))
    throw new Error(`process ${pid} (group ${pgrp}) is not one of this stack's`);
  const env = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
  const targets = [target].flat();
  if (!targets.some((t) => env.includes(`FUNCTION_TARGET=${t}`)))
    throw new Error(
      `process ${pid} is not a ${target} worker: ${env.filter((e) => e.startsWith("FUNCTION_")).join(" ")}`,
    );
  process.kill(pid, "SIGKILL");
  await waitFor(() => !processAlive(pid), `process ${pid} to end`);
  return { pid, attempt: run.attempt ?? 0 };
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Waits for a condition (checked every 50 ms), failing with `what` after `timeoutMs`. */
export async function waitFor(cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 60_000) {
  const until = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * The events run `runId` has stored in its log so far, in order (ids, names, data — a long string
 * repeated in the log may stand as a reference): what a rejoining client can be given.
 */
export async function loggedEvents(
  stack: DurableStack,
  threadId: string,
  runId: string,
): Promise<{ id: number; event: string; data: unknown }[]> {
  const docs = await stack.db.collection(`threads/${threadId}/runs/${runId}/log`).orderBy("n").get();
  const bytes = Buffer.concat(docs.docs.map((d) => Buffer.from(d.get("bytes") as Uint8Array)));
  return bytes
    .toString("utf8")
    .split("\n")
    .filter((line) => line.trim())
    .map((line) => {
      const [id, event, data] = JSON.parse(line) as [number, string, unknown];
      return { id, event, data };
    });
}

/** Whether the log holds a `messages` event of the answer (the generator's tokens). */
export const answerLogged = (events: { event: string; data: unknown }[]) =>
  events.some(
    (e) =>
      e.event === "messages" &&
      (e.data as [unknown, { langgraph_node?: string }])[1]?.langgraph_node === "generator",
  );

/**
 * A DuckDB worker process (started by pool.ts): it opens the DuckDB warehouse and answers the
 * parent's calls over the IPC channel. Running DuckDB here, under an address-space limit, means a
 * query that builds huge values ends as an "Out of Memory" error in this process — or at worst
 * ends this process — never the function instance and the other runs it serves.
 */
import { readFileSync } from "node:fs";
import { DuckDbWarehouse } from "./warehouse";
import type { QueryContext } from "../types";
import type { WarehouseConfig } from "../../config";
import type { WorkerCall, WorkerReply } from "./wire";
import { toWire } from "../wire-error";
import { ThreadWarehouses } from "./threads";
import type { UploadRef } from "../uploads/types";

let warehouse: DuckDbWarehouse | undefined;
/** Instances for conversations with uploaded files (threads.ts). */
let threads: ThreadWarehouses | undefined;
const running = new Map<number, AbortController>();

const send = (reply: WorkerReply) => {
  if (process.connected) process.send!(reply);
};

async function answer(call: Exclude<WorkerCall, { op: "cancel" }>): Promise<unknown> {
  if (call.op === "open") {
    warehouse = await DuckDbWarehouse.open(call.cfg as WarehouseConfig, call.options);
    threads = new ThreadWarehouses(call.cfg as WarehouseConfig, call.options);
    return null;
  }
  if (!warehouse || !threads) throw new Error("The DuckDB worker was called before it opened.");
  if (call.op === "close") {
    await Promise.all([warehouse.close(), threads.closeAll()]);
    return null;
  }
  const uploads = uploadsOf(call);
  if (uploads.length) return threads.with(uploads, (wh) => answerOn(wh, call));
  return answerOn(warehouse, call);
}

function uploadsOf(call: WorkerCall): readonly UploadRef[] {
  if (call.op === "dryRun" || call.op === "query") return call.ctx.uploads ?? [];
  return "uploads" in call ? (call.uploads ?? []) : [];
}

async function answerOn(
  warehouse: DuckDbWarehouse,
  call: Exclude<WorkerCall, { op: "cancel" | "open" | "close" }>,
): Promise<unknown> {
  switch (call.op) {
    case "listTables":
      return warehouse.listTables();
    case "describeTable":
      return warehouse.describeTable(call.table);
    case "columnValues":
      return warehouse.columnValues(call.table, call.column, call.limit);
    case "dryRun":
    case "query": {
      const abort = new AbortController();
      running.set(call.id, abort);
      const ctx: QueryContext = {
        ...call.ctx,
        signal: abort.signal,
        onEstimate: (dry) => send({ id: call.id, kind: "estimate", dry }),
      };
      try {
        return call.op === "query"
          ? await warehouse.query(call.sql, ctx)
          : await warehouse.dryRun(call.sql, ctx);
      } finally {
        running.delete(call.id);
      }
    }
  }
}

/**
 * `--probe`: load DuckDB, open an empty instance, report the address space that took, and exit —
 * the pool sizes each worker's limit from it (what this runtime needs before any query).
 */
async function probe(threads: number): Promise<void> {
  const duck = await import("@duckdb/node-api");
  const instance = await duck.DuckDBInstance.create(":memory:", { threads: String(threads) });
  (await instance.connect()).closeSync();
  const kb = /VmSize:\s+(\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"))?.[1];
  send({ id: 0, kind: "result", value: Number(kb ?? 0) / 1024 });
  instance.closeSync();
  process.disconnect();
}

const probing = process.argv.indexOf("--probe");
if (probing >= 0) void probe(Number(process.argv[probing + 1]) || 1);

process.on("message", (call: WorkerCall) => {
  if (call.op === "cancel") {
    running.get(call.id)?.abort();
    return;
  }
  answer(call).then(
    (value) => send({ id: call.id, kind: "result", value }),
    (err: unknown) => send({ id: call.id, kind: "error", error: toWire(err) }),
  );
});
// The function instance went away: so does its worker.
process.on("disconnect", () => process.exit(0));

/**
 * Checkpointer benchmark: a 20-turn scripted conversation through a real StateGraph with a messages
 * channel (each turn: human message, AI tool call, 5 KB JSON tool result, AI answer), on
 * FirestoreCheckpointer (Java emulator), SqliteSaver (file) and MemorySaver, measured in one run.
 *
 * Reported per saver: bytes stored after 20 turns; bytes and documents (rows) written per turn;
 * round trips of `getTuple` for the latest checkpoint at turn 1 and turn 20 from a fresh instance
 * (Firestore: RPCs counted on the client; SQLite: statements executed; memory: none).
 * Firestore sizes follow Firestore's storage-size rules (document name + fields + 32 bytes).
 */
import { Firestore } from "@google-cloud/firestore";
import { MemorySaver, type BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { DatabaseSync, type SQLInputValue } from "node:sqlite";
import { startStack } from "../../scripts/stack.mjs";
import { FirestoreCheckpointer } from "../../functions/src/checkpointer";
import { conversationGraph, turnInput } from "../integration/checkpointer/conversation";
import { countRpcs, docSize } from "../integration/checkpointer/rpc";

const TURNS = 20;
const THREAD = "bench-thread";
const cfg = { configurable: { thread_id: THREAD } };

interface Result {
  saver: string;
  stored: number;
  perTurnBytes: number[];
  perTurnDocs: number[];
  getTupleTurn1: number;
  getTupleTurn20: number;
  msPerTurn: number;
  note?: string;
}

/** Runs the conversation; `written()` returns cumulative [bytes, docs] written so far. */
async function converse(
  saver: BaseCheckpointSaver,
  written: () => [number, number] | Promise<[number, number]>,
  getTupleTrips: () => Promise<number>,
): Promise<Omit<Result, "saver" | "stored">> {
  const graph = conversationGraph(saver);
  const perTurnBytes: number[] = [];
  const perTurnDocs: number[] = [];
  let [bytes0, docs0] = await written();
  let getTupleTurn1 = 0;
  const started = performance.now();
  for (let turn = 1; turn <= TURNS; turn++) {
    await graph.invoke(turnInput(turn), cfg);
    const [bytes, docs] = await written();
    perTurnBytes.push(bytes - bytes0);
    perTurnDocs.push(docs - docs0);
    [bytes0, docs0] = [bytes, docs];
    if (turn === 1) getTupleTurn1 = await getTupleTrips();
  }
  const msPerTurn = (performance.now() - started) / TURNS;
  return { perTurnBytes, perTurnDocs, getTupleTurn1, getTupleTurn20: await getTupleTrips(), msPerTurn };
}

async function benchFirestore(firestore: Firestore): Promise<Result> {
  const root = `bench-${Date.now()}`;
  const rpcs = countRpcs(firestore);
  const commits = () => rpcs.filter((r) => r.method === "commit");
  const saver = new FirestoreCheckpointer({ firestore, rootCollection: root });
  const start = rpcs.length;
  const run = await converse(
    saver,
    () => [commits().reduce((n, r) => n + r.bytes, 0), commits().reduce((n, r) => n + r.documents, 0)],
    async () => {
      const fresh = new FirestoreCheckpointer({ firestore, rootCollection: root });
      const before = rpcs.length;
      await fresh.getTuple(cfg);
      return rpcs.length - before;
    },
  );
  let stored = 0;
  for (const group of ["checkpoints", "blobs"]) {
    const snap = await firestore.collectionGroup(group).get();
    for (const d of snap.docs) if (d.ref.path.startsWith(`${root}/`)) stored += docSize(d.ref.path, d.data());
  }
  // Includes the two getTuple probes of fresh instances (turns 1 and 20).
  const perTurn = (m: string) => (rpcs.slice(start).filter((r) => r.method === m).length / TURNS).toFixed(1);
  const note = `RPCs/turn: ${perTurn("commit")} commits, ${perTurn("batchGetDocuments")} getAll, ${perTurn("runQuery")} queries`;
  return { saver: "FirestoreCheckpointer (emulator)", stored, ...run, note };
}

/**
 * SqliteSaver's own code on Node 22's built-in SQLite. better-sqlite3's native binary in this
 * install targets the host's Node 20 and cannot be rebuilt offline; SqliteSaver only needs
 * `pragma`, `exec`, `prepare(…).get/all/run` and `transaction`, which this adapter provides, so
 * the rows it stores are exactly those it stores with better-sqlite3.
 */
class SqliteDb {
  readonly db: DatabaseSync;
  statements = 0;
  constructor(file: string) {
    this.db = new DatabaseSync(file);
  }
  pragma(p: string) {
    this.db.exec(`PRAGMA ${p}`);
  }
  exec(sql: string) {
    this.db.exec(sql);
  }
  prepare(sql: string) {
    const st = this.db.prepare(sql);
    const args = (a: unknown[]) => a.map((v) => (v === undefined ? null : v)) as SQLInputValue[];
    return {
      get: (...a: unknown[]) => (this.statements++, st.get(...args(a))),
      all: (...a: unknown[]) => (this.statements++, st.all(...args(a))),
      run: (...a: unknown[]) => (this.statements++, st.run(...args(a))),
    };
  }
  transaction<A extends unknown[]>(fn: (...a: A) => unknown) {
    return (...a: A) => {
      this.db.exec("BEGIN");
      try {
        const r = fn(...a);
        this.db.exec("COMMIT");
        return r;
      } catch (err) {
        this.db.exec("ROLLBACK");
        throw err;
      }
    };
  }
}

async function benchSqlite(dir: string): Promise<Result> {
  const file = path.join(dir, "bench.sqlite");
  const db = new SqliteDb(file);
  const saver = new SqliteSaver(db as unknown as ConstructorParameters<typeof SqliteSaver>[0]);
  const colsOf = (table: string) =>
    (db.db.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>).map((c) => c.name);
  const payload = () => {
    let bytes = 0;
    let rows = 0;
    for (const table of ["checkpoints", "writes"]) {
      const sum = colsOf(table)
        .map((c) => `COALESCE(LENGTH(CAST(${c} AS BLOB)), 0)`)
        .join(" + ");
      const r = db.db.prepare(`SELECT COUNT(*) AS n, COALESCE(SUM(${sum}), 0) AS b FROM ${table}`).get() as {
        n: number;
        b: number;
      };
      bytes += Number(r.b);
      rows += Number(r.n);
    }
    return [bytes, rows] as [number, number];
  };
  await saver.getTuple(cfg); // creates the tables
  const run = await converse(saver, payload, async () => {
    const before = db.statements;
    await saver.getTuple(cfg);
    return db.statements - before;
  });
  const [stored] = payload();
  db.db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  const fileSize = statSync(file).size;
  db.db.close();
  return {
    saver: "SqliteSaver (file, node:sqlite)",
    stored,
    ...run,
    note: `file ${fileSize.toLocaleString("en-US")} B`,
  };
}

async function benchMemory(): Promise<Result> {
  const saver = new MemorySaver();
  const size = (): [number, number] => {
    let bytes = 0;
    let rows = 0;
    for (const nss of Object.values(saver.storage))
      for (const cps of Object.values(nss))
        for (const [id, [c, m, parent]] of Object.entries(cps)) {
          bytes += c.length + m.length + id.length + (parent?.length ?? 0);
          rows += 1;
        }
    for (const [key, inner] of Object.entries(saver.writes))
      for (const [ik, w] of Object.entries(inner)) {
        bytes += key.length + ik.length + (w[2] as Uint8Array).length + String(w[1]).length;
        rows += 1;
      }
    return [bytes, rows];
  };
  const run = await converse(saver, size, async () => 0);
  return { saver: "MemorySaver", stored: size()[0], ...run };
}

const fmt = (n: number) => Math.round(n).toLocaleString("en-US");
const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

function print(results: Result[]) {
  const sqlite = results.find((r) => r.saver.startsWith("Sqlite"))!;
  console.log(
    `\n${TURNS}-turn conversation (human, AI tool call, 5 KB JSON tool result, AI answer per turn)\n`,
  );
  console.log(
    "| saver | bytes stored (total) | vs SqliteSaver | bytes written turn 1 / 20 / avg | docs (rows) written turn 1 / 20 / avg | getTuple round trips turn 1 / 20 | ms/turn |",
  );
  console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
  for (const r of results) {
    const b = r.perTurnBytes;
    const d = r.perTurnDocs;
    console.log(
      `| ${r.saver} | ${fmt(r.stored)}${r.note ? ` (${r.note})` : ""} | 1/${(sqlite.stored / r.stored).toFixed(1)} | ` +
        `${fmt(b[0])} / ${fmt(b[b.length - 1])} / ${fmt(avg(b))} | ${d[0]} / ${d[d.length - 1]} / ${avg(d).toFixed(1)} | ` +
        `${r.getTupleTurn1} / ${r.getTupleTurn20} | ${r.msPerTurn.toFixed(1)} |`,
    );
  }
  const fs = results[0];
  const goalStored = fs.stored * 20 <= sqlite.stored;
  const goalTrips = fs.getTupleTurn1 === fs.getTupleTurn20;
  console.log(
    `\nGoals: stored ≤ 1/20 of SqliteSaver: ${goalStored ? "met" : "NOT met"}; ` +
      `getTuple round trips equal at turn 1 and 20: ${goalTrips ? "met" : "NOT met"}.`,
  );
}

async function main() {
  const stack = await startStack({ services: ["firestore"], ports: "auto" });
  const dir = mkdtempSync(path.join(tmpdir(), "cp-bench-"));
  Object.assign(process.env, stack.env, { METADATA_SERVER_DETECTION: "none" });
  const firestore = new Firestore({ projectId: stack.env.GCLOUD_PROJECT });
  try {
    const results = [await benchFirestore(firestore), await benchSqlite(dir), await benchMemory()];
    print(results);
  } finally {
    await firestore.terminate();
    await stack.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

/**
 * Measuring one instance for `run-cost.bench.ts` (and a fresh one's first answer for
 * `cold-start.bench.ts`): starts it (run-cost-instance.ts, in a process of its own), runs questions
 * on it alone and in waves through the SDK, and reads its CPU, memory and Firestore calls, and per
 * run the time to the answer's first token, the stream's bytes and the query's row.
 */
import { fork, type ChildProcess } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { startStack } from "../../scripts/stack.mjs";
import { apiScript } from "../support/api-script";
import { currentTurnOf, type Script } from "../support/scripted-model-script";
import { startVertexStandin } from "../support/vertex-standin";
import { BENCH_ACCESS_ENV } from "./app-server";
import type { Request, Usage } from "./run-cost-instance";

/** Runs measured one at a time, after WARM_RUNS not measured. */
const RUNS = Math.max(3, Number(process.env.BENCH_RUNS ?? 21));
const WARM_RUNS = 10;
export const WAVES = [20, 50] as const;
export const QUESTION = "How many orders were placed in total?";

/** An HTTP instance with every stage on: the function as deployed. */
export const DEPLOYED_ENV = { BENCH_ROLE: "http", BENCH_STAGES: "linking,auth,access,log" };

/**
 * LangGraph's own Agent Server (`@langchain/langgraph-api`, what `langgraph dev` runs) serving
 * langgraph-agent.ts; offline: no LangSmith tracing, no API key; its request log at warn.
 */
export const LANGGRAPH_ENV = {
  BENCH_ROLE: "langgraph",
  LANGSMITH_TRACING: "false",
  LANGCHAIN_TRACING_V2: "false",
  LANGSMITH_API_KEY: "",
  LANGCHAIN_API_KEY: "",
  LOG_LEVEL: "warn",
};

/**
 * What the instances run against: the Vertex AI stand-in (the API script, no token delay) and the
 * Firestore and Auth emulators; `env` is every instance's environment on them.
 */
export async function startBackends() {
  const standin = await startVertexStandin({
    script: withLangGraphAgent(apiScript()),
    tokenDelayMs: 0,
    charsPerChunk: 8,
    trust: true,
  });
  const stack = await startStack({ services: ["firestore", "auth"], ports: "auto", env: {} }).catch(
    async (err: unknown) => {
      await standin.stop();
      throw err;
    },
  );
  const env: Record<string, string> = {
    ...stack.env,
    ...BENCH_ACCESS_ENV,
    // One person asks a few hundred questions here: no daily budget may stop them.
    QUARRY_QUOTA_TOKENS_PER_DAY: String(1e12),
    QUARRY_WAREHOUSE: "duckdb",
    VERTEX_AI_EMULATOR_HOST: standin.host,
    NODE_EXTRA_CA_CERTS: standin.certFile,
    METADATA_SERVER_DETECTION: "none",
  };
  const stop = async () => {
    await stack.stop();
    await standin.stop();
  };
  return { stack, env, stop };
}

/** The SQL tool of LangGraph's agent (langgraph-agent.ts) and the query Quarry runs for QUESTION. */
const LANGGRAPH_SQL_TOOL = "sql_query";
const QUESTION_SQL = "SELECT COUNT(*) AS orders FROM shop.orders";

/**
 * The stand-in's script for both kinds of agent: a model call that binds LangGraph's SQL tool is
 * the createReactAgent's (langgraph-agent.ts), answered as Quarry's planner and generator answer
 * QUESTION — the same query, then an answer of the same words; any other call goes to `base`.
 */
function withLangGraphAgent(base: Script): Script {
  return (req) => {
    if (!req.tools.includes(LANGGRAPH_SQL_TOOL)) return base(req);
    const usage = { input: 100, output: 20 };
    const turn = currentTurnOf(req);
    const result = turn.find((t) => t.role === "tool" && t.toolName === LANGGRAPH_SQL_TOOL);
    if (!result) return { toolCalls: [{ name: LANGGRAPH_SQL_TOOL, args: { sql: QUESTION_SQL } }], usage };
    const rows = (JSON.parse(result.text) as unknown[]).length;
    return { text: `Here is what I found (${rows} rows) with \`${QUESTION_SQL}\`.`, usage };
  };
}

/**
 * Bytes of every run stream's response body read so far, by all clients (a run measured alone is
 * the difference across it).
 */
let streamBytes = 0;
const countingFetch = async (url: string | URL, init?: RequestInit) => {
  const res = await fetch(url, init);
  if (!String(url).includes("/stream") || !res.body) return res;
  const counted = res.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, out) {
        streamBytes += chunk.byteLength;
        out.enqueue(chunk);
      },
    }),
  );
  return new Response(counted, { status: res.status, statusText: res.statusText, headers: res.headers });
};

/**
 * An SDK client of the instance at `port`, signed in as one person (LangGraph's server, which
 * checks no token, ignores the header).
 */
export const clientOf = (port: number, idToken: string) =>
  new Client({
    apiUrl: `http://127.0.0.1:${port}`,
    defaultHeaders: { authorization: `Bearer ${idToken}` },
    callerOptions: { maxRetries: 0, fetch: countingFetch },
  });

export interface Instance {
  child: ChildProcess;
  ask<T>(req: Request): Promise<T>;
  port?: number;
}

export function startInstance(env: Record<string, string>): Promise<Instance> {
  const child = fork(path.join(import.meta.dirname, "run-cost-instance.ts"), [], {
    // Node runs the TypeScript itself (type stripping), so no loader hooks sit in the instance's requires.
    // BENCH_INSTANCE_ARGS: more Node flags for the instance alone (e.g. `--cpu-prof --cpu-prof-dir=DIR`).
    execArgv: [
      "--disable-warning=MODULE_TYPELESS_PACKAGE_JSON",
      "--expose-gc",
      ...(process.env.BENCH_INSTANCE_ARGS?.split(" ").filter(Boolean) ?? []),
    ],
    env: { ...process.env, ...env },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  let pending: ((m: { reply?: unknown; error?: string }) => void) | undefined;
  const ask = <T>(req: Request) =>
    new Promise<T>((resolve, reject) => {
      pending = (m) => (m.error ? reject(new Error(m.error)) : resolve(m.reply as T));
      child.send(req);
    });
  return new Promise((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`instance exited with ${code}`)));
    child.on("message", (m: { ready?: boolean; port?: number; reply?: unknown; error?: string }) => {
      if (m.ready || m.port) resolve({ child, ask, ...(m.port ? { port: m.port } : {}) });
      else pending?.(m);
    });
  });
}

/** CPU ticks (utime + stime) of every process in a process group, from /proc (Linux). */
function groupCpuMs(pgid: number): number {
  const tick = 1000 / 100; // USER_HZ
  let ms = 0;
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(f[2]) === pgid) ms += (Number(f[11]) + Number(f[12])) * tick;
    } catch {
      // the process ended meanwhile
    }
  }
  return ms;
}

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
export const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

export interface Measured {
  alone: number[];
  waves: Record<number, number>;
  firestoreMs: number;
  /** Firestore calls per run, by method. */
  calls: string;
  /** CPU ms per run by thread kind. */
  threads: string;
  /** After 50 concurrent runs, garbage collected. */
  rssMb: number;
  heapMb: number;
  /** DuckDB's worker processes: CPU per run, resident MB after 50. */
  duckdbMs: number;
  duckdbRssMb: number;
  /** Heap after GC once 50 more concurrent runs have run. */
  heapAfterMb: number;
  wavesFailed: number;
  failed: number;
  /** Time to the answer's first token, ms, of each run alone (HTTP instances; none for a graph). */
  ttft: number[];
  /** Median time to first token at each wave size. */
  wavesTtft: Record<number, number>;
  /** Bytes of a run's stream (the SSE body) alone, median. */
  bytes: number;
  /** The query's rows as the runs' events carried them, with how many runs carried each. */
  rows: string;
}

/** The first failure an instance met (a bench that fails says why). */
export const failures: string[] = [];

/** The nodes whose streamed text is the answer: Quarry's generator, the createReactAgent's agent. */
const ANSWER_NODES = new Set(["generator", "agent"]);

/** The text of a streamed message chunk (a string, or text parts). */
function chunkText(message: unknown): string {
  const content = (message as { content?: unknown })?.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((p: { type?: string; text?: string }) => (p?.type === "text" ? (p.text ?? "") : ""))
    .join("");
}

/** The count of orders a run's events carry (the query's one row), as JSON or inside a JSON string. */
const ORDERS_ROW = /\\?"orders\\?":\s*(\d+)/;

export interface ClientRun {
  /** The answer streamed and the run ended without an error. */
  ok: boolean;
  /** From the stream request to the answer's first token. */
  ttftMs: number;
  /** The query's row as the run's events carried it (`orders=<n>`), for "the same rows". */
  rows?: string;
}

/** A client's one-query run as agent-chat-ui asks for it. */
export async function clientRun(client: Client, threadId: string): Promise<ClientRun> {
  const t0 = performance.now();
  let ttftMs = NaN;
  let rows: string | undefined;
  for await (const ev of client.runs.stream(threadId, "quarry", {
    input: { messages: [{ type: "human", content: QUESTION }] },
    streamMode: ["values", "messages-tuple", "custom"],
  })) {
    if (ev.event === "error") {
      failures.push(JSON.stringify(ev.data));
      return { ok: false, ttftMs, rows };
    }
    if (ev.event === "messages" && Number.isNaN(ttftMs)) {
      const [message, meta] = ev.data as [unknown, { langgraph_node?: string }];
      if (ANSWER_NODES.has(meta?.langgraph_node ?? "") && chunkText(message)) ttftMs = performance.now() - t0;
    }
    if (!rows && (ev.event === "values" || ev.event === "custom")) {
      const n = ORDERS_ROW.exec(JSON.stringify(ev.data))?.[1];
      if (n) rows = `orders=${n}`;
    }
  }
  return { ok: !Number.isNaN(ttftMs), ttftMs, rows };
}

/**
 * Runs `n` questions on an instance, `concurrency` at a time; CPU (µs) of the instance meanwhile.
 * A graph instance runs them itself; an HTTP one is asked through the SDK, run i by person
 * i mod `people.length` (concurrent runs come from different people, as they do in production).
 */
async function batch(inst: Instance, people: Client[], n: number, concurrency: number) {
  if (!people.length) {
    const r = await inst.ask<{ before: Usage; after: Usage; failed: number }>({
      cmd: "runs",
      question: QUESTION,
      n,
      concurrency,
    });
    return {
      cpuMicros: r.after.cpuMicros - r.before.cpuMicrosEnd,
      failed: r.failed,
      before: r.before,
      after: r.after,
      ttfts: [] as number[],
      rows: [] as string[],
      bytes: NaN,
    };
  }
  const asked = Array.from({ length: n }, (_, i) => people[i % people.length]);
  const threads = await Promise.all(asked.map((client) => client.threads.create()));
  const before = await inst.ask<Usage>({ cmd: "usage" });
  const bytes0 = streamBytes;
  const runs = await Promise.all(
    threads.map((t, i) =>
      clientRun(asked[i], t.thread_id).catch(
        (err: unknown): ClientRun => (failures.push(String(err)), { ok: false, ttftMs: NaN }),
      ),
    ),
  );
  const bytes = (streamBytes - bytes0) / n;
  const after = await inst.ask<Usage>({ cmd: "usage" });
  return {
    cpuMicros: after.cpuMicros - before.cpuMicrosEnd,
    failed: runs.filter((r) => !r.ok).length,
    before,
    after,
    ttfts: runs.map((r) => r.ttftMs),
    rows: runs.map((r) => r.rows ?? "none"),
    bytes,
  };
}

/** An instance to measure, and the people who ask it (none: a graph instance runs its own questions). */
export interface Target {
  inst: Instance;
  people: Client[];
}

/** Per-run figures between two readings of an instance's usage, as the table shows them. */
function perRun(first: Usage, end: Usage, runs: number) {
  const duckdbMs = (end.children.cpuMs - first.children.cpuMs) / runs;
  const threads = Object.entries(end.threads)
    .map(([name, ms]) => [name, (ms - (first.threads[name] ?? 0)) / runs] as const)
    .filter(([, ms]) => ms >= 0.5)
    .sort((a, b) => b[1] - a[1])
    .map(([name, ms]) => `${name} ${ms.toFixed(0)}`)
    .join(", ");
  const calls = Object.entries(end.firestoreCalls)
    .map(([method, n]) => [method, (n - (first.firestoreCalls[method] ?? 0)) / runs] as const)
    .filter(([, n]) => n > 0)
    .map(([method, n]) => `${method} ${Number(n.toFixed(1))}`)
    .join(", ");
  return { threads, calls, duckdbMs };
}

/**
 * Measures every target: warm-up, then RUNS rounds of one run on each target in turn (so drift
 * on this machine — other processes, the emulator's own garbage collection — hits every variant
 * alike), then each target's concurrent waves and memory.
 */
export async function measureAll(targets: Target[], firestorePgid: number): Promise<Measured[]> {
  const one = (t: Target) => t.people.slice(0, 1);
  for (const t of targets) for (let i = 0; i < WARM_RUNS; i++) await batch(t.inst, one(t), 1, 1);
  const acc = targets.map(() => ({
    alone: [] as number[],
    ttft: [] as number[],
    bytes: [] as number[],
    rows: [] as string[],
    firestoreMs: 0,
    failed: 0,
    first: undefined as Usage | undefined,
    end: undefined as Usage | undefined,
  }));
  for (let i = 0; i < RUNS; i++) {
    for (const [k, t] of targets.entries()) {
      const fs0 = groupCpuMs(firestorePgid);
      const r = await batch(t.inst, one(t), 1, 1);
      acc[k].firestoreMs += groupCpuMs(firestorePgid) - fs0;
      acc[k].first ??= r.before;
      acc[k].end = r.after;
      acc[k].alone.push(r.cpuMicros / 1000);
      acc[k].ttft.push(...r.ttfts);
      acc[k].bytes.push(r.bytes);
      acc[k].rows.push(...r.rows);
      acc[k].failed += r.failed;
    }
  }
  const out: Measured[] = [];
  for (const [k, t] of targets.entries()) {
    const a = acc[k];
    const waves = await wavesAndMemory(t);
    out.push({
      alone: a.alone,
      ttft: a.ttft,
      bytes: median(a.bytes),
      firestoreMs: a.firestoreMs / RUNS,
      ...perRun(a.first!, a.end!, RUNS),
      ...waves,
      rows: tally([...a.rows, ...waves.rows]),
      failed: a.failed,
    });
    out[k].failed += out[k].wavesFailed;
  }
  return out;
}

/** "orders=1234 ×40": each distinct value and how many runs carried it. */
function tally(values: string[]): string {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts].map(([v, n]) => `${v} ×${n}`).join(", ");
}

/** CPU per run at each wave size, and what the instance holds after them. */
async function wavesAndMemory(t: Target) {
  const waves: Record<number, number> = {};
  const wavesTtft: Record<number, number> = {};
  const rows: string[] = [];
  let wavesFailed = 0;
  for (const n of WAVES) {
    const r = await batch(t.inst, t.people, n, n);
    waves[n] = r.cpuMicros / 1000 / n;
    wavesTtft[n] = median(r.ttfts);
    rows.push(...r.rows);
    wavesFailed += r.failed;
  }
  // What the instance holds after those runs, garbage collected, and after 50 more: the difference
  // is what runs leave behind (caches filling up to their bounds, or a leak). The 50 more are a
  // second sample of 50 at once.
  const held = await t.inst.ask<Usage>({ cmd: "gc" });
  const more = await batch(t.inst, t.people, 50, 50);
  wavesFailed += more.failed;
  waves[50] = (waves[50] + more.cpuMicros / 1000 / 50) / 2;
  const heldAfter = await t.inst.ask<Usage>({ cmd: "gc" });
  rows.push(...more.rows);
  return {
    waves,
    wavesTtft,
    rows,
    wavesFailed,
    rssMb: held.rss / 2 ** 20,
    duckdbRssMb: held.children.rssMb,
    heapMb: held.heapUsed / 2 ** 20,
    heapAfterMb: heldAfter.heapUsed / 2 ** 20,
  };
}

/** A V8 CPU profile of `n` runs on the instance, `concurrency` at a time, written to `file`. */
export async function profile(
  inst: Instance,
  people: Client[],
  file: string,
  n: number,
  concurrency: number,
) {
  await inst.ask({ cmd: "profile-start" });
  for (let done = 0; done < n; done += concurrency) await batch(inst, people, concurrency, concurrency);
  await inst.ask({ cmd: "profile-stop", file });
}

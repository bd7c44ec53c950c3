/**
 * Measuring one instance for `run-cost.bench.ts`: starts it (run-cost-instance.ts, in a process of
 * its own), runs questions on it alone and in waves, and reads its CPU, memory and Firestore calls.
 */
import { fork, type ChildProcess } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { startStack } from "../../scripts/stack.mjs";
import { apiScript } from "../support/api-script";
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
 * What the instances run against: the Vertex AI stand-in (the API script, no token delay) and the
 * Firestore and Auth emulators; `env` is every instance's environment on them.
 */
export async function startBackends() {
  const standin = await startVertexStandin({
    script: apiScript(),
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

/** An SDK client of the instance at `port`, signed in as one person. */
export const clientOf = (port: number, idToken: string) =>
  new Client({
    apiUrl: `http://127.0.0.1:${port}`,
    defaultHeaders: { authorization: `Bearer ${idToken}` },
    callerOptions: { maxRetries: 0 },
  });

export interface Instance {
  child: ChildProcess;
  ask<T>(req: Request): Promise<T>;
  port?: number;
}

export function startInstance(env: Record<string, string>): Promise<Instance> {
  const child = fork(path.join(import.meta.dirname, "run-cost-instance.ts"), [], {
    // Node runs the TypeScript itself (type stripping), so no loader hooks sit in the instance's requires.
    execArgv: ["--disable-warning=MODULE_TYPELESS_PACKAGE_JSON", "--expose-gc"],
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
}

/** A client's one-query run as agent-chat-ui asks for it; true when the answer streamed. */
/** The first failure an instance met (a bench that fails says why). */
export const failures: string[] = [];

async function clientRun(client: Client, threadId: string): Promise<boolean> {
  let answered = false;
  for await (const ev of client.runs.stream(threadId, "quarry", {
    input: { messages: [{ type: "human", content: QUESTION }] },
    streamMode: ["values", "messages-tuple", "custom"],
  })) {
    if (ev.event === "error") {
      failures.push(JSON.stringify(ev.data));
      return false;
    }
    if (ev.event === "messages") {
      const [, meta] = ev.data as [unknown, { langgraph_node?: string }];
      if (meta?.langgraph_node === "generator") answered = true;
    }
  }
  return answered;
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
    };
  }
  const asked = Array.from({ length: n }, (_, i) => people[i % people.length]);
  const threads = await Promise.all(asked.map((client) => client.threads.create()));
  const before = await inst.ask<Usage>({ cmd: "usage" });
  const ok = await Promise.all(
    threads.map((t, i) =>
      clientRun(asked[i], t.thread_id).catch((err: unknown) => (failures.push(String(err)), false)),
    ),
  );
  const after = await inst.ask<Usage>({ cmd: "usage" });
  return {
    cpuMicros: after.cpuMicros - before.cpuMicrosEnd,
    failed: ok.filter((x) => !x).length,
    before,
    after,
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
      acc[k].failed += r.failed;
    }
  }
  const out: Measured[] = [];
  for (const [k, t] of targets.entries()) {
    const a = acc[k];
    out.push({
      alone: a.alone,
      firestoreMs: a.firestoreMs / RUNS,
      ...perRun(a.first!, a.end!, RUNS),
      ...(await wavesAndMemory(t)),
      failed: a.failed,
    });
    out[k].failed += out[k].wavesFailed;
  }
  return out;
}

/** CPU per run at each wave size, and what the instance holds after them. */
async function wavesAndMemory(t: Target) {
  const waves: Record<number, number> = {};
  let wavesFailed = 0;
  for (const n of WAVES) {
    const r = await batch(t.inst, t.people, n, n);
    waves[n] = r.cpuMicros / 1000 / n;
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
  return {
    waves,
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

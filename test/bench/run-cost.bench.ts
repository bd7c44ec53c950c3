/**
 * The cost of one question (`npm run bench -- run-cost`): CPU time (user + system) and resident
 * memory per one-query run, each variant an instance in a process of its own (run-cost-instance.ts),
 * the Vertex AI stand-in and the client in this process, all on the same Firestore and Auth
 * emulators and the DuckDB sample, measured in the same run:
 * - the floor: Quarry's graph on MemorySaver invoked directly (with and without linking and
 *   authored context), then on the FirestoreCheckpointer;
 * - the HTTP app through the SDK with agent-chat-ui's stream modes, stages switched on in turn:
 *   Firestore persistence (thread, lease, checkpoints) and linking, + auth, + access and quota,
 *   + the event log (= the function as deployed).
 * Each alone and warm (median and mean of BENCH_RUNS, one run at a time), and at 20 and 50
 * concurrent; the Firestore emulator's CPU apart. Then CPU profiles of the full app, warm and at 20
 * concurrent, read into the heaviest frames and parts. Goal: the full app's warm run ≤ 1.5 × the
 * floor + the Firestore work (FirestoreCheckpointer row − floor), ≤ 110 ms; 50 concurrent ≤ alone.
 */
import { fork, type ChildProcess } from "node:child_process";
import { mkdirSync, readFileSync, readdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { startStack } from "../../scripts/stack.mjs";
import { BENCH_ACCESS_ENV } from "./app-server";
import { summarize } from "./cpu-profile";
import type { Request, Usage } from "./run-cost-instance";
import { signUp } from "../support/auth-emulator";
import { apiScript } from "../support/api-script";
import { startVertexStandin } from "../support/vertex-standin";

const RUNS = Math.max(3, Number(process.env.BENCH_RUNS ?? 15));
const WAVES = [20, 50];
const QUESTION = "How many orders were placed in total?";
const root = path.resolve(import.meta.dirname, "../..");
const profileDir = path.join(root, ".artifacts/run-cost");

interface Instance {
  child: ChildProcess;
  ask<T>(req: Request): Promise<T>;
  port?: number;
}

function startInstance(env: Record<string, string>): Promise<Instance> {
  const child = fork(path.join(import.meta.dirname, "run-cost-instance.ts"), [], {
    // Node runs the TypeScript itself (type stripping), so no loader hooks sit in the instance's requires.
    execArgv: ["--disable-warning=MODULE_TYPELESS_PACKAGE_JSON"],
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

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

interface Measured {
  alone: number[];
  waves: Record<number, number>;
  firestoreMs: number;
  /** Firestore calls per run, by method. */
  calls: string;
  /** CPU ms per run by thread kind. */
  threads: string;
  rssMb: number;
  heapMb: number;
  failed: number;
}

/** A client's one-query run as agent-chat-ui asks for it; true when the answer streamed. */
async function clientRun(client: Client, threadId: string): Promise<boolean> {
  let answered = false;
  for await (const ev of client.runs.stream(threadId, "quarry", {
    input: { messages: [{ type: "human", content: QUESTION }] },
    streamMode: ["values", "messages-tuple", "custom"],
  })) {
    if (ev.event === "error") return false;
    if (ev.event === "messages") {
      const [, meta] = ev.data as [unknown, { langgraph_node?: string }];
      if (meta?.langgraph_node === "generator") answered = true;
    }
  }
  return answered;
}

/**
 * Runs `n` questions on an instance, `concurrency` at a time; CPU (µs) of the instance meanwhile.
 * A graph instance runs them itself; an HTTP one is asked by the SDK client here.
 */
async function batch(inst: Instance, client: Client | undefined, n: number, concurrency: number) {
  if (!client) {
    const r = await inst.ask<{ before: Usage; after: Usage; failed: number }>({
      cmd: "runs",
      question: QUESTION,
      n,
      concurrency,
    });
    return {
      cpuMicros: r.after.cpuMicros - r.before.cpuMicros,
      failed: r.failed,
      before: r.before,
      after: r.after,
    };
  }
  const threads = await Promise.all(Array.from({ length: n }, () => client.threads.create()));
  const before = await inst.ask<Usage>({ cmd: "usage" });
  const ok = await Promise.all(threads.map((t) => clientRun(client, t.thread_id).catch(() => false)));
  const after = await inst.ask<Usage>({ cmd: "usage" });
  return {
    cpuMicros: after.cpuMicros - before.cpuMicros,
    failed: ok.filter((x) => !x).length,
    before,
    after,
  };
}

async function measure(inst: Instance, client: Client | undefined, firestorePgid: number): Promise<Measured> {
  for (let i = 0; i < 10; i++) await batch(inst, client, 1, 1); // warm: DuckDB, LangChain, caches
  const alone: number[] = [];
  let failed = 0;
  const fs0 = groupCpuMs(firestorePgid);
  let first: Usage | undefined;
  let end: Usage | undefined;
  for (let i = 0; i < RUNS; i++) {
    const r = await batch(inst, client, 1, 1);
    first ??= r.before;
    end = r.after;
    alone.push(r.cpuMicros / 1000);
    failed += r.failed;
  }
  const threads = Object.entries(end!.threads)
    .map(([name, ms]) => [name, (ms - (first!.threads[name] ?? 0)) / RUNS] as const)
    .filter(([, ms]) => ms >= 0.5)
    .sort((a, b) => b[1] - a[1])
    .map(([name, ms]) => `${name} ${ms.toFixed(0)}`)
    .join(", ");
  const calls = Object.entries(end!.firestoreCalls)
    .map(([method, n]) => [method, (n - (first!.firestoreCalls[method] ?? 0)) / RUNS] as const)
    .filter(([, n]) => n > 0)
    .map(([method, n]) => `${method} ${Number(n.toFixed(1))}`)
    .join(", ");
  const firestoreMs = (groupCpuMs(firestorePgid) - fs0) / RUNS;
  const waves: Record<number, number> = {};
  let last: Usage | undefined;
  for (const n of WAVES) {
    const r = await batch(inst, client, n, n);
    waves[n] = r.cpuMicros / 1000 / n;
    failed += r.failed;
    last = r.after;
  }
  return {
    alone,
    waves,
    firestoreMs,
    calls,
    threads,
    rssMb: last!.rss / 2 ** 20,
    heapMb: last!.heapUsed / 2 ** 20,
    failed,
  };
}

async function profile(inst: Instance, client: Client, name: string, n: number, concurrency: number) {
  const file = path.join(profileDir, `${name}.cpuprofile`);
  await inst.ask({ cmd: "profile-start" });
  for (let done = 0; done < n; done += concurrency) await batch(inst, client, concurrency, concurrency);
  await inst.ask({ cmd: "profile-stop", file });
  return { file, n };
}

const VARIANTS: { name: string; env: Record<string, string> }[] = [
  {
    name: "graph alone on MemorySaver, no linking or context",
    env: { BENCH_ROLE: "graph", BENCH_SAVER: "memory", BENCH_LINKING: "off" },
  },
  {
    name: "floor: Quarry's graph on MemorySaver (linking and context)",
    env: { BENCH_ROLE: "graph", BENCH_SAVER: "memory" },
  },
  {
    name: "+ FirestoreCheckpointer (graph invoked directly)",
    env: { BENCH_ROLE: "graph", BENCH_SAVER: "firestore" },
  },
  {
    name: "HTTP app: thread, lease, checkpoints, linking; SSE",
    env: { BENCH_ROLE: "http", BENCH_STAGES: "linking" },
  },
  { name: "  + auth (ID token verified)", env: { BENCH_ROLE: "http", BENCH_STAGES: "linking,auth" } },
  {
    name: "  + access and quota (and query audit)",
    env: { BENCH_ROLE: "http", BENCH_STAGES: "linking,auth,access" },
  },
  {
    name: "  + event log = the function as deployed",
    env: { BENCH_ROLE: "http", BENCH_STAGES: "linking,auth,access,log" },
  },
];

async function main() {
  mkdirSync(profileDir, { recursive: true });
  const standin = await startVertexStandin({
    script: apiScript(),
    tokenDelayMs: 0,
    charsPerChunk: 8,
    trust: true,
  });
  const stack = await startStack({ services: ["firestore", "auth"], ports: "auto", env: {} });
  try {
    const user = await signUp(stack.urls.auth!);
    const env: Record<string, string> = {
      ...stack.env,
      ...BENCH_ACCESS_ENV,
      QUARRY_WAREHOUSE: "duckdb",
      VERTEX_AI_EMULATOR_HOST: standin.host,
      NODE_EXTRA_CA_CERTS: standin.certFile,
      METADATA_SERVER_DETECTION: "none",
      BENCH_UID: user.uid,
      BENCH_EMAIL: user.email,
    };
    const firestorePgid = stack.pids[0];
    const results: { name: string; m: Measured }[] = [];
    const profiles: { file: string; n: number; what: string }[] = [];
    // BENCH_ONLY=3,6: some variants only (while working on one stage); the table needs them all.
    const only = process.env.BENCH_ONLY?.split(",").map(Number);
    for (const v of VARIANTS.filter((_, i) => !only || only.includes(i))) {
      const inst = await startInstance({ ...env, ...v.env });
      const client = inst.port
        ? new Client({
            apiUrl: `http://127.0.0.1:${inst.port}`,
            defaultHeaders: { authorization: `Bearer ${user.idToken}` },
            callerOptions: { maxRetries: 0, maxConcurrency: 100 },
          })
        : undefined;
      try {
        results.push({ name: v.name, m: await measure(inst, client, firestorePgid) });
        if (client && v === VARIANTS.at(-1)) {
          profiles.push({
            ...(await profile(inst, client, "warm", 10, 1)),
            what: "10 warm runs, one at a time",
          });
          profiles.push({
            ...(await profile(inst, client, "concurrent-20", 20, 20)),
            what: "20 concurrent runs",
          });
        }
      } finally {
        inst.child.kill();
      }
    }
    report(results, profiles);
  } finally {
    await stack.stop();
    await standin.stop();
  }
  process.exit(0);
}

function report(
  results: { name: string; m: Measured }[],
  profiles: { file: string; n: number; what: string }[],
) {
  console.log(
    `Cost of one question: "${QUESTION}" (2 model calls, 1 query), Vertex AI stand-in, DuckDB sample, ` +
      `Firestore emulator; Node ${process.versions.node}, ${os.cpus().length} cores; ${RUNS} runs alone`,
  );
  const byName = (prefix: string) => results.find((r) => r.name.startsWith(prefix))?.m;
  const floorRow = byName("floor");
  const floor = floorRow ? median(floorRow.alone) : NaN;
  console.table(
    results.map(({ name, m }, i) => ({
      variant: name,
      "CPU ms/run alone (median)": median(m.alone).toFixed(1),
      mean: mean(m.alone).toFixed(1),
      "Δ previous": i ? (median(m.alone) - median(results[i - 1].m.alone)).toFixed(1) : "",
      "× floor": (median(m.alone) / floor).toFixed(2),
      ...Object.fromEntries(WAVES.map((n) => [`ms/run at ${n}`, m.waves[n].toFixed(1)])),
      "threads ms/run": m.threads,
      "Firestore calls/run": m.calls,
      "Firestore emulator ms/run": m.firestoreMs.toFixed(0),
      "RSS MB after 50": m.rssMb.toFixed(0),
      "heap MB": m.heapMb.toFixed(0),
      failed: m.failed,
    })),
  );
  for (const p of profiles) {
    const s = summarize(p.file);
    console.log(
      `\nCPU profile of the function as deployed, ${p.what}: ${(s.ms / p.n).toFixed(1)} ms sampled per run (${p.file})`,
    );
    console.table(s.parts.slice(0, 14).map((r) => ({ part: r.part, "ms/run": (r.ms / p.n).toFixed(1) })));
    console.table(s.frames.slice(0, 20).map((r) => ({ frame: r.frame, "ms/run": (r.ms / p.n).toFixed(2) })));
  }
  const full = byName("  + event log");
  const direct = byName("+ FirestoreCheckpointer");
  if (!full || !floorRow || !direct) return;
  const firestoreWork = median(direct.alone) - floor;
  const goal = 1.5 * floor + firestoreWork;
  const warm = median(full.alone);
  console.log(
    `goal warm run ≤ 1.5 × floor + Firestore work = ${goal.toFixed(1)} ms: ${warm <= goal ? "met" : "NOT met"} (${warm.toFixed(1)} ms)`,
  );
  console.log(`goal warm run ≤ 110 ms: ${warm <= 110 ? "met" : "NOT met"} (${warm.toFixed(1)} ms)`);
  console.log(
    `goal 50 concurrent ≤ alone per run: ${full.waves[50] <= warm ? "met" : "NOT met"} (${full.waves[50].toFixed(1)} vs ${warm.toFixed(1)} ms)`,
  );
  console.log(`RSS of the instance after 50 concurrent runs: ${full.rssMb.toFixed(0)} MB`);
  const failed = results.reduce((a, r) => a + r.m.failed, 0);
  if (failed) throw new Error(`${failed} runs failed`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

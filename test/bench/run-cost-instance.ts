/**
 * One instance for `run-cost.bench.ts`, in a process of its own so its CPU time and resident memory
 * are the instance's alone (the model stand-in and the client run in the bench's process). Driven
 * over IPC. Three kinds (BENCH_ROLE):
 * - `graph`: Quarry's graph from the compiled function, invoked directly with the executor's stream
 *   modes — on MemorySaver (BENCH_SAVER=memory, the floor) or on the FirestoreCheckpointer
 *   (`firestore`), with linking and authored context (BENCH_LINKING=on) or without (off: the graph
 *   and the model client alone). It runs the questions itself and reports its CPU per run.
 * - `http`: the function's express app, serving; BENCH_STAGES lists the stages switched on
 *   (auth, access, log, linking). A stage switched off is replaced, in this process only, by the
 *   least that lets a run through: a fixed caller for auth, full scope and no quota for access and
 *   quota (and no audit writes), QUARRY_RUN_LOG=off for the event log, the graph without a catalog
 *   or context files for linking. The bench asks it for its CPU and memory before and after a wave.
 * - `langgraph`: LangGraph's own Agent Server (`@langchain/langgraph-api`) serving
 *   langgraph-agent.ts, in memory (see `serveLangGraph`); asked for its figures like `http`.
 * `profile-start` / `profile-stop` record a V8 CPU profile (the `--cpu-prof` format) of what runs
 * between them, through the inspector, so start-up is not in it. BENCH_TRACE=1 prints every request
 * and Firestore call with its time and documents (to see what one run does, in order).
 */
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "../..");
// BENCH_FUNCTIONS_DIR: another build of the function (an earlier commit, measured in the same run).
const lib = path.join(process.env.BENCH_FUNCTIONS_DIR ?? path.join(root, "functions"), "lib");
const require = createRequire(path.join(root, "functions/package.json"));
/**
 * A module of the build, by its path today — or where an older build (BENCH_FUNCTIONS_DIR, a
 * baseline commit) had it before the run core moved out of http/ (issue #41).
 */
const MOVED: Record<string, string> = {
  "app.js": "http/app.js",
  "runs/abort.js": "http/abort.js",
  "access/caller.js": "http/auth.js",
  "runs/runtime.js": "http/runtime.js",
};
const load = (p: string) => {
  const here = path.join(lib, p);
  return require(existsSync(here) || !MOVED[p] ? here : path.join(lib, MOVED[p]));
};

/** The caller every run of a bench instance runs for (the bench's signed-up user). */
const BENCH_UID = process.env.BENCH_UID ?? "bench-user";
const BENCH_EMAIL = process.env.BENCH_EMAIL ?? "bench@example.com";

// Under `--cpu-prof` (BENCH_INSTANCE_ARGS) the profile is written when the process exits: the bench
// ends an instance with SIGTERM, which would otherwise end it without writing one.
if (process.execArgv.includes("--cpu-prof")) process.once("SIGTERM", () => process.exit(0));

export type Request =
  | { cmd: "usage" }
  | { cmd: "gc" }
  | { cmd: "runs"; question: string; n: number; concurrency: number }
  | { cmd: "profile-start" }
  | { cmd: "profile-stop"; file: string }
  | { cmd: "peak-start"; sampleHeap?: boolean }
  | { cmd: "peak-stop" };

/** What the instance held at most between `peak-start` and `peak-stop`. */
export interface Peak {
  /** Resident set (the kernel's high-water mark, reset at the start), bytes. */
  rss: number;
  /** Heap used, sampled every 2 ms (and at every GC), bytes. */
  heapUsed: number;
  /** With `sampleHeap`: where the bytes allocated meanwhile were allocated (V8's sampling heap profiler), top sites. */
  sites?: { frame: string; mb: number }[];
}

export interface Usage {
  /** process.cpuUsage(): user + system, µs. */
  cpuMicros: number;
  /** process.cpuUsage() once the other figures were read. */
  cpuMicrosEnd: number;
  rss: number;
  heapUsed: number;
  /** Firestore calls this instance has made (unary and streaming), by method. */
  firestoreCalls: Record<string, number>;
  /** CPU ms by thread kind (Linux /proc: the main thread, V8's helpers, libuv's pool, workers). */
  threads: Record<string, number>;
  /** The instance's child processes (DuckDB's workers). */
  children: { cpuMs: number; rssMb: number };
}

/** CPU ms of this process's threads, by thread name (numbers stripped: one row per kind). */
function threadCpu(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const tid of readdirSync("/proc/self/task")) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
      const name =
        tid === String(process.pid)
          ? "main"
          : stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")).replace(/[\d-]+$/, "");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out[name] = (out[name] ?? 0) + (Number(f[11]) + Number(f[12])) * 10;
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}

/**
 * This instance's child processes (DuckDB's workers: the warehouse runs in processes of its own
 * locally, BigQuery in production): CPU ms so far and resident MB now, apart from the instance's.
 */
function childrenUsage(): { cpuMs: number; rssMb: number } {
  let cpuMs = 0;
  let rssMb = 0;
  for (const pid of descendants(String(process.pid))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      cpuMs += (Number(f[11]) + Number(f[12])) * 10;
      rssMb += (Number(f[21]) * 4096) / 2 ** 20;
    } catch {
      // the process ended meanwhile
    }
  }
  return { cpuMs, rssMb };
}

/** The processes below `pid` (Linux's per-thread `children` lists), without scanning all of /proc. */
function descendants(pid: string): string[] {
  const out: string[] = [];
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const kids = readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").trim();
      for (const kid of kids ? kids.split(" ") : []) out.push(kid, ...descendants(kid));
    }
  } catch {
    // the process ended meanwhile
  }
  return out;
}

const firestoreCalls: Record<string, number> = {};

/** Counts the Firestore client's calls (the same client the function uses). */
function countFirestoreCalls() {
  const { Firestore } = require("@google-cloud/firestore");
  for (const name of ["request", "requestStream"] as const) {
    const original = Firestore.prototype[name];
    Firestore.prototype[name] = function (this: unknown, method: string, ...rest: unknown[]) {
      firestoreCalls[method] = (firestoreCalls[method] ?? 0) + 1;
      if (process.env.BENCH_TRACE)
        // When (ms), what, and the documents written or read, or the collection queried.
        console.error(
          "FS",
          (performance.now() % 100000).toFixed(1),
          method,
          (JSON.stringify(rest[0]).match(/documents\/[^"]+|"collectionId":"[^"]+"/g) ?? [])
            .map((d) => d.replace(/^documents\//, ""))
            .join(" ")
            .slice(0, 1200),
        );
      return original.call(this, method, ...rest);
    };
  }
}

/**
 * The instance's figures now. Reading /proc costs a few ms, so the CPU is read on both sides of
 * it: a measured window runs from one reading's `cpuMicrosEnd` to the next one's `cpuMicros`.
 */
function usage(): Usage {
  const c = process.cpuUsage();
  const m = process.memoryUsage();
  const figures = {
    rss: m.rss,
    heapUsed: m.heapUsed,
    firestoreCalls: { ...firestoreCalls },
    threads: threadCpu(),
    children: childrenUsage(),
  };
  const end = process.cpuUsage();
  return { cpuMicros: c.user + c.system, cpuMicrosEnd: end.user + end.system, ...figures };
}

type AnyGraph = {
  stream(input: unknown, options: unknown): Promise<AsyncIterable<[string, unknown]>>;
};

/** The graph as the floor runs it: compiled once, invoked per question on a new thread. */
async function graphRunner() {
  const agent = load("agent/index.js");
  const tools = load("tools/index.js");
  const { PERSON_KEY } = load("tools/person.js");
  const { FULL_SCOPE } = load("tools/scope.js");
  const { config } = load("config/index.js");
  const linking = process.env.BENCH_LINKING !== "off";
  let saver: unknown;
  if (process.env.BENCH_SAVER === "firestore") {
    saver = await load("runs/runtime.js").checkpointSaver();
  } else {
    const { MemorySaver } = require("@langchain/langgraph");
    saver = new MemorySaver();
  }
  const factory = linking
    ? await agent.createGraphFactory({})
    : await agent.createGraphFactory({
        tools: tools.createWarehouseTools(await tools.getWarehouse(config().warehouse), {
          previewRows: config().warehouse.previewRows,
          previewChars: config().warehouse.previewChars,
        }),
      });
  const graph = factory(saver) as AnyGraph;
  const person = { uid: BENCH_UID, email: BENCH_EMAIL, scope: FULL_SCOPE };
  return async (question: string): Promise<boolean> => {
    const threadId = randomUUID();
    const stream = await graph.stream(
      agent.turnInput({ type: "human", content: question, id: randomUUID() }),
      {
        configurable: { thread_id: threadId, user_id: BENCH_UID, [PERSON_KEY]: person },
        // The executor's modes for agent-chat-ui's request (values, messages-tuple, custom).
        streamMode: ["values", "messages", "custom", "updates"],
        durability: "sync",
      },
    );
    let answered = false;
    for await (const [mode, data] of stream) {
      if (mode === "messages") {
        const [, meta] = data as [unknown, { langgraph_node?: string }];
        if (meta?.langgraph_node === "generator") answered = true;
      }
    }
    return answered;
  };
}

async function runMany(
  run: (q: string) => Promise<boolean>,
  question: string,
  n: number,
  concurrency: number,
) {
  let failed = 0;
  let next = 0;
  const worker = async () => {
    while (next < n) {
      next++;
      if (!(await run(question).catch(() => false))) failed++;
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, worker));
  return failed;
}

/** Switches the stages not listed in BENCH_STAGES off, before the app is built. */
async function patchStages(stages: Set<string>) {
  if (!stages.has("auth")) {
    const auth = load("access/caller.js");
    auth.requireUser = async (req: { caller?: unknown }, _res: unknown, next: () => void) => {
      req.caller = { uid: BENCH_UID, email: BENCH_EMAIL, emailVerified: true };
      next();
    };
  }
  if (!stages.has("access")) {
    const gate = load("access/gate.js");
    const { FULL_SCOPE } = load("tools/scope.js");
    const { config } = load("config/index.js");
    const real = gate.accessStores;
    const stores = real().then((s: Record<string, unknown>) => ({
      ...s,
      quotas: {
        admit: async () => ({ quotas: {}, bytesLeft: Number.MAX_SAFE_INTEGER }),
        charge: async () => {},
      },
      audit: { record: async () => {} },
    }));
    gate.accessStores = () => stores;
    gate.requireAccess = async (req: { caller: { access?: unknown } }, _res: unknown, next: () => void) => {
      req.caller.access = { role: "member", limits: config().access.quotas, scope: FULL_SCOPE };
      next();
    };
  }
  if (!stages.has("linking")) {
    const runtime = load("runs/runtime.js");
    const agent = load("agent/index.js");
    const tools = load("tools/index.js");
    const { config } = load("config/index.js");
    let factory: Promise<unknown> | undefined;
    runtime.graphFactory = () =>
      (factory ??= (async () => {
        const { audit } = await load("access/gate.js").accessStores();
        const plain = await tools.getWarehouse(config().warehouse);
        const warehouse = tools.auditedWarehouse(plain, (q: Record<string, unknown>) => {
          void audit.record({ kind: "query", uid: q.userId, email: q.userEmail, sql: q.sql }).catch(() => {});
        });
        return agent.createGraphFactory({
          tools: tools.createWarehouseTools(warehouse, {
            previewRows: config().warehouse.previewRows,
            previewChars: config().warehouse.previewChars,
          }),
        });
      })());
  }
}

const highWaterRss = () =>
  Number(/VmHWM:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"))![1]) * 1024;

/** Resets the kernel's resident high-water mark and samples the heap until `stop`. */
function startPeak(session: Session, sampleHeap: boolean) {
  writeFileSync("/proc/self/clear_refs", "5");
  let heapUsed = process.memoryUsage().heapUsed;
  const timer = setInterval(() => (heapUsed = Math.max(heapUsed, process.memoryUsage().heapUsed)), 2);
  const sampling = sampleHeap
    ? (async () => {
        session.connect();
        await session.post("HeapProfiler.enable");
        // Every allocation is sampled about once per 64 KiB; samples of collected objects are kept.
        await session.post("HeapProfiler.startSampling", {
          samplingInterval: 65536,
          includeObjectsCollectedByMajorGC: true,
          includeObjectsCollectedByMinorGC: true,
        });
      })()
    : Promise.resolve();
  return async (): Promise<Peak> => {
    clearInterval(timer);
    const peak: Peak = { rss: highWaterRss(), heapUsed };
    if (!sampleHeap) return peak;
    await sampling;
    const { profile } = await session.post("HeapProfiler.stopSampling");
    session.disconnect();
    return { ...peak, sites: topSites(profile.head) };
  };
}

interface HeapNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: HeapNode[];
}

/** The allocation sites with the most bytes (self), as "function file:line". */
function topSites(head: HeapNode): { frame: string; mb: number }[] {
  const bytes = new Map<string, number>();
  const walk = (n: HeapNode) => {
    const { functionName, url, lineNumber } = n.callFrame;
    const frame = `${functionName || "(anonymous)"} ${url.replace(/^.*node_modules\//, "").replace(/^.*\/functions\/lib\//, "lib/")}:${lineNumber + 1}`;
    bytes.set(frame, (bytes.get(frame) ?? 0) + n.selfSize);
    n.children.forEach(walk);
  };
  walk(head);
  return [...bytes]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 15)
    .map(([frame, b]) => ({ frame, mb: b / 2 ** 20 }));
}

/**
 * LangGraph's own Agent Server (`@langchain/langgraph-api`, the server `langgraph dev` runs) serving
 * langgraph-agent.ts in this process, on 127.0.0.1; returns its port. As `langgraph dev` starts it
 * (10 jobs per worker, BENCH_LG_JOBS), but with its file snapshot of the in-memory state switched
 * off (it rewrites every thread and checkpoint to .langgraph_api/ 3 s after a change): state lives
 * in memory only. No LangSmith: tracing is off in the environment and no API key is set.
 */
async function serveLangGraph(): Promise<number> {
  const server = import.meta.resolve("@langchain/langgraph-api/server");
  const persist = await import(new URL("storage/persist.mjs", server).href);
  persist.FileSystemPersistence.prototype.schedulePersist = () => {};
  persist.FileSystemPersistence.prototype.persist = async () => {};
  const { startServer } = await import(server);
  // Its working folder: nothing is written there with the snapshot off (one folder, reused).
  const cwd = path.join(os.tmpdir(), "quarry-bench-langgraph");
  mkdirSync(cwd, { recursive: true });
  const { host } = await startServer({
    port: 0,
    nWorkers: Number(process.env.BENCH_LG_JOBS ?? 10),
    host: "127.0.0.1",
    cwd,
    graphs: { quarry: `${path.join(import.meta.dirname, "langgraph-agent.ts")}:graph` },
  });
  return Number(String(host).split(":").at(-1));
}

async function main() {
  const role = process.env.BENCH_ROLE;
  let run: ((q: string) => Promise<boolean>) | undefined;
  // Off for a cold start: counting loads the Firestore client before the app would.
  if (process.env.BENCH_FIRESTORE_COUNT !== "off") countFirestoreCalls();
  const session = new Session();
  let stopPeak: (() => Promise<Peak>) | undefined;
  if (role === "graph") {
    run = await graphRunner();
    process.send!({ ready: true });
  } else if (role === "http") {
    const stages = new Set((process.env.BENCH_STAGES ?? "").split(",").filter(Boolean));
    if (!stages.has("log")) process.env.QUARRY_RUN_LOG = "off";
    await patchStages(stages);
    const { installProcessGuards } = load("runs/abort.js");
    installProcessGuards((message: string, data: unknown) => console.error(message, data));
    const { createApp } = load("app.js");
    const app = createApp();
    const { createServer } = await import("node:http");
    const server = createServer((req, res) => {
      if (process.env.BENCH_TRACE)
        console.error("REQ", (performance.now() % 100000).toFixed(1), req.method, req.url);
      app(req, res);
    }).listen(0, "127.0.0.1", () => process.send!({ port: (server.address() as { port: number }).port }));
  } else if (role === "langgraph") {
    process.send!({ port: await serveLangGraph() });
  } else {
    throw new Error(`BENCH_ROLE must be graph, http or langgraph, not ${role}`);
  }
  process.on("message", (msg: Request) => {
    void (async () => {
      switch (msg.cmd) {
        case "usage":
          return usage();
        case "gc":
          // What the instance holds once garbage is collected (node --expose-gc).
          (globalThis as { gc?: () => void }).gc?.();
          return usage();
        case "runs": {
          if (!run) throw new Error("only a graph instance runs questions itself");
          const before = usage();
          const t = performance.now();
          const failed = await runMany(run, msg.question, msg.n, msg.concurrency);
          return { before, after: usage(), wallMs: performance.now() - t, failed };
        }
        case "profile-start":
          session.connect();
          await session.post("Profiler.enable");
          await session.post("Profiler.setSamplingInterval", { interval: 100 });
          await session.post("Profiler.start");
          return { ok: true };
        case "peak-start":
          stopPeak = startPeak(session, !!msg.sampleHeap);
          return { ok: true };
        case "peak-stop":
          return stopPeak!();
        case "profile-stop": {
          const { profile } = await session.post("Profiler.stop");
          session.disconnect();
          writeFileSync(msg.file, JSON.stringify(profile));
          return { ok: true };
        }
      }
    })().then(
      (reply) => process.send!({ reply }),
      (err: unknown) => process.send!({ error: String((err as Error)?.stack ?? err) }),
    );
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

/**
 * Cold start (`npm run bench -- cold-start`), two measures in the same run:
 * 1. The function entry: median time to load functions/lib/index.js in a fresh Node process,
 *    against a hello-world firebase-functions + express entry (BENCH_RUNS, 21 each). Goal: Quarry
 *    ≤ 1.15 × baseline (LangChain, Vertex AI, BigQuery, DuckDB are loaded lazily).
 * 2. The first answer of a fresh instance (issue #46): Quarry's API app as a Cloud Functions
 *    instance serves it (`createApp()` on an HTTP server, every stage on, the Firestore and Auth
 *    emulators, run-cost-instance.ts) against LangGraph's own Agent Server (`@langchain/langgraph-api`
 *    serving langgraph-agent.ts's createReactAgent, in memory), both on the same Vertex AI stand-in
 *    and DuckDB sample: ms from spawning the process to its `/ok` answering, to the first token of
 *    the first question (a new thread, the SDK with agent-chat-ui's stream modes) and to its end.
 *    Median of BENCH_FIRST_ANSWERS (5) fresh processes each, alternating, after one of each not
 *    counted (it builds what a deployment builds once: Quarry's catalog in Firestore, the sample
 *    database file). Goal: Quarry's first token ≤ 1.5 × LangGraph's.
 * BENCH_CUTS=<ref>[,<ref>]: the function as it was at those commits too, built in a folder of its own
 * (app-server.ts's buildBaseline), in both measures of the same run: a change against its baseline.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { rmSync } from "node:fs";
import { signUp } from "../support/auth-emulator";
import { buildBaseline } from "./app-server";
import {
  DEPLOYED_ENV,
  LANGGRAPH_ENV,
  clientOf,
  clientRun,
  startBackends,
  startInstance,
} from "./run-cost-measure";

const root = path.resolve(import.meta.dirname, "../..");
const entries: Record<string, string> = {
  "hello-world (baseline)": path.join(import.meta.dirname, "fixtures/hello-entry.cjs"),
  "quarry functions/lib/index.js": path.join(root, "functions/lib/index.js"),
};
/** BENCH_CUTS: earlier builds of the function, by git ref (measured beside today's in the same run). */
const cuts = (process.env.BENCH_CUTS ?? "").split(",").filter((ref) => ref && ref !== "off");
const builds: { ref: string; functionsDir: string; dir: string }[] = [];
const RUNS = Number(process.env.BENCH_RUNS ?? 21);
const FIRST_ANSWERS = Math.min(15, Math.max(1, Number(process.env.BENCH_FIRST_ANSWERS ?? 5)));

function loadMs(entry: string): number {
  const script =
    `const t=process.hrtime.bigint();require(${JSON.stringify(entry)});` +
    `process.stdout.write(String(Number(process.hrtime.bigint()-t)/1e6))`;
  const run = spawnSync(process.execPath, ["-e", script], {
    cwd: path.join(root, "functions"),
    env: {
      ...process.env,
      GCLOUD_PROJECT: "demo-quarry",
      FUNCTIONS_EMULATOR: "",
      FIRESTORE_EMULATOR_HOST: "",
    },
    encoding: "utf8",
  });
  if (run.status !== 0) throw new Error(`loading ${entry} failed:\n${run.stderr}`);
  return Number(run.stdout);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function entryLoad() {
  for (const b of builds) entries[`quarry at ${b.ref}`] = path.join(b.functionsDir, "lib/index.js");
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(entries).map((k) => [k, []]));
  loadMs(entries["hello-world (baseline)"]); // warm the OS file cache for both
  loadMs(entries["quarry functions/lib/index.js"]);
  for (let i = 0; i < RUNS; i++) {
    // Alternate so drift on this machine hits both equally.
    for (const [name, file] of Object.entries(entries)) samples[name].push(loadMs(file));
  }
  const base = median(samples["hello-world (baseline)"]);
  console.log(
    `Cold start: require() of the function entry, ${RUNS} fresh processes each, Node ${process.versions.node}`,
  );
  console.table(
    Object.entries(samples).map(([name, xs]) => ({
      entry: name,
      "median ms": median(xs).toFixed(1),
      "min ms": Math.min(...xs).toFixed(1),
      "max ms": Math.max(...xs).toFixed(1),
      "× baseline": (median(xs) / base).toFixed(2),
    })),
  );
  const ratio = median(samples["quarry functions/lib/index.js"]) / base;
  console.log(`goal ≤ 1.15× baseline: ${ratio <= 1.15 ? "met" : "NOT met"} (${ratio.toFixed(2)}×)`);
}

interface FirstAnswer {
  okMs: number;
  firstTokenMs: number;
  endMs: number;
}

/** A fresh instance with `env`: spawn → `/ok` → first token of the first question → its end. */
async function firstAnswer(env: Record<string, string>, idToken: string): Promise<FirstAnswer> {
  const t0 = performance.now();
  const inst = await startInstance(env);
  try {
    const ok = await fetch(`http://127.0.0.1:${inst.port}/ok`);
    if (!ok.ok) throw new Error(`/ok answered ${ok.status}`);
    const okMs = performance.now() - t0;
    const client = clientOf(inst.port!, idToken);
    const thread = await client.threads.create();
    const tRun = performance.now();
    const run = await clientRun(client, thread.thread_id);
    if (!run.ok) throw new Error("the first question was not answered");
    return { okMs, firstTokenMs: tRun - t0 + run.ttftMs, endMs: performance.now() - t0 };
  } finally {
    if (inst.child.exitCode === null && inst.child.signalCode === null) {
      const exited = new Promise((resolve) => inst.child.once("exit", resolve));
      inst.child.kill();
      await exited;
    }
  }
}

async function firstAnswers() {
  const { stack, env, stop } = await startBackends();
  try {
    const person = await signUp(stack.urls.auth!);
    const servers: Record<string, Record<string, string>> = {
      "Quarry: the function as deployed (createApp(), one instance)": { ...env, ...DEPLOYED_ENV },
      "LangGraph's Agent Server (createReactAgent, in memory)": { ...env, ...LANGGRAPH_ENV },
    };
    for (const b of builds)
      servers[`Quarry at ${b.ref}, as deployed`] = {
        ...env,
        ...DEPLOYED_ENV,
        BENCH_FUNCTIONS_DIR: b.functionsDir,
      };
    const samples = Object.fromEntries(Object.keys(servers).map((k) => [k, [] as FirstAnswer[]]));
    // Not counted: the first instance of each, which builds what a deployment builds once (Quarry's
    // catalog, shared through Firestore; the sample database file) and warms the OS file cache.
    for (const serverEnv of Object.values(servers))
      await firstAnswer({ ...serverEnv, BENCH_FIRESTORE_COUNT: "off" }, person.idToken);
    for (let i = 0; i < FIRST_ANSWERS; i++) {
      for (const [name, serverEnv] of Object.entries(servers))
        samples[name].push(await firstAnswer({ ...serverEnv, BENCH_FIRESTORE_COUNT: "off" }, person.idToken));
    }
    console.log(
      `\nFirst answer of a fresh instance: "How many orders were placed in total?", ${FIRST_ANSWERS} fresh ` +
        "processes each, ms from spawning the process (median, min–max)",
    );
    const cell = (xs: number[]) =>
      `${median(xs).toFixed(0)} (${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)})`;
    console.table(
      Object.entries(samples).map(([name, xs]) => ({
        server: name,
        "→ /ok": cell(xs.map((x) => x.okMs)),
        "→ first token": cell(xs.map((x) => x.firstTokenMs)),
        "→ end of the answer": cell(xs.map((x) => x.endMs)),
      })),
    );
    const [quarry, langgraph, ...before] = Object.values(samples).map((xs) =>
      median(xs.map((x) => x.firstTokenMs)),
    );
    before.forEach((ms, i) =>
      console.log(
        `at ${builds[i].ref}: ${ms.toFixed(0)} ms to the first token, ${(ms / langgraph).toFixed(2)}× LangGraph's; ` +
          `today ${(quarry / ms).toFixed(2)}× of it`,
      ),
    );
    const ratio = quarry / langgraph;
    console.log(
      `goal: a fresh instance's first token ≤ 1.5 × LangGraph's server's: ${ratio <= 1.5 ? "met" : "NOT met"} ` +
        `(${quarry.toFixed(0)} against ${langgraph.toFixed(0)} ms, ${ratio.toFixed(2)}×)`,
    );
  } finally {
    await stop();
  }
}

async function main() {
  for (const ref of cuts) builds.push({ ref, ...(await buildBaseline(ref)) });
  try {
    entryLoad();
    await firstAnswers();
  } finally {
    for (const b of builds) rmSync(b.dir, { recursive: true, force: true });
  }
  process.exit(0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

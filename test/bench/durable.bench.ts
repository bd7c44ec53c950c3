/**
 * Durable runs, issue #44 (`npm run bench -- durable`), two tables:
 * 1. Recovery time through the durable stack (test/support/durable-stack.ts: the functions and
 *    tasks emulators, lease 6 s, watchdog interval 1 s): a background run held at a known point (the
 *    planner's model call, `[hold:<key>]`; once also the generator mid-answer, `[pause-answer:<key>]`)
 *    has its function process stopped (SIGKILL), the hold is released right after, and the bench
 *    polls every 50 ms for (a) the continuation's first event in the run's log (its `metadata` with
 *    `attempt: 2`) and (b) the run's end (the thread's `run` null). Median and max of BENCH_RUNS (3),
 *    against the bound the design gives (lease + watchdog interval + a few round trips).
 * 2. Cost when nothing fails: Firestore calls per streamed one-query run with durable runs on
 *    (QUARRY_RUN_CONTINUATIONS=2, the default) and off (0), in the same bench run, each setting an
 *    in-process instance in a child process of its own (the configuration is read once per
 *    process), counted on its Firestore client as `stream-size` and `api-load` count them
 *    (firestore-rpcs.ts): commits, documents written, reads; the round trips before the first token
 *    and every call made before it; the watchdog tasks queued (a Cloud Tasks stand-in records them)
 *    and the Firestore calls of their delivery — delivered once the run has ended, as in production
 *    where the first delivery comes at the lease's length plus an interval (70 s by default).
 */
import { fork } from "node:child_process";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { signUp } from "../support/auth-emulator";
import {
  answerLogged,
  killRunHolder,
  loggedEvents,
  startDurableStack,
  type DurableStack,
} from "../support/durable-stack";
import { countFirestoreRpcs, awaitedCalls, sequentialRoundTrips, type Rpc } from "./firestore-rpcs";
import { startStack } from "../../scripts/stack.mjs";
import { apiScript } from "../support/api-script";
import { startVertexStandin } from "../support/vertex-standin";
import { BENCH_ACCESS_ENV } from "./app-server";
import { QUESTION } from "./run-cost-measure";

const root = path.resolve(import.meta.dirname, "../..");
const require = createRequire(import.meta.url);
const RUNS = Math.max(1, Number(process.env.BENCH_RUNS ?? 3));
const COST_RUNS = Math.max(1, Number(process.env.BENCH_COST_RUNS ?? 5));
const LEASE_S = 6;
const WATCHDOG_S = 1;
const STREAM_MODES = ["values", "updates", "messages-tuple", "custom"];

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------- 1. recovery time

interface Recovery {
  cut: string;
  /** Kill → the lease's expiry as stored before the kill (renewed every third of its length). */
  toLapseMs: number;
  /** Kill → the watchdog's takeover (the thread's lease at attempt 1). */
  toTakeOverMs: number;
  toContinuationMs: number;
  toEndMs: number;
}

async function recoveryTable(): Promise<Recovery[]> {
  const stack = await startDurableStack();
  const out: Recovery[] = [];
  try {
    const user = await signUp(stack.authUrl);
    const client = new Client({
      apiUrl: stack.api,
      defaultHeaders: { Authorization: `Bearer ${user.idToken}` },
    });
    const cuts: {
      cut: string;
      word: (key: string) => string;
      ready?: (s: DurableStack, t: string, r: string) => Promise<boolean>;
    }[] = [
      ...Array.from({ length: RUNS }, () => ({ cut: "planner", word: (k: string) => `[hold:${k}]` })),
      {
        cut: "generator",
        word: (k: string) => `[pause-answer:${k}]`,
        ready: async (s: DurableStack, t: string, r: string) => answerLogged(await loggedEvents(s, t, r)),
      },
    ];
    for (const c of cuts) {
      const key = stack.holds.newKey(`bench-${c.cut}`);
      const thread = await client.threads.create();
      const run = await client.runs.create(thread.thread_id, "quarry", {
        input: { messages: [{ type: "human", content: `How many orders? ${c.word(key)}` }] },
      });
      const threadId = thread.thread_id;
      const runId = run.run_id;
      await stack.holds.waitHeld(key);
      if (c.ready) {
        const until = Date.now() + 60_000;
        while (!(await c.ready(stack, threadId, runId))) {
          if (Date.now() > until) throw new Error("the answer's first tokens never reached the log");
          await sleep(50);
        }
      }
      const lease = (await stack.db.collection("threads").doc(threadId).get()).get("run") as {
        expiresAt: { toMillis(): number };
      };
      const t0 = performance.now();
      const killedAt = Date.now();
      await killRunHolder(stack, threadId, "backgroundRun");
      await stack.holds.release(key);
      let continued = NaN;
      let ended = NaN;
      let taken = NaN;
      const until = Date.now() + 90_000;
      while (Number.isNaN(continued) || Number.isNaN(ended)) {
        if (Date.now() > until) throw new Error(`run ${runId} was not continued and finished in 90 s`);
        const now = performance.now();
        if (Number.isNaN(continued)) {
          const events = await loggedEvents(stack, threadId, runId);
          if (events.some((e) => e.event === "metadata" && (e.data as { attempt?: number }).attempt === 2))
            continued = now - t0;
        }
        if (Number.isNaN(ended) || Number.isNaN(taken)) {
          const doc = await stack.db.collection("threads").doc(threadId).get();
          const run = doc.get("run") as { attempt?: number } | null;
          if (Number.isNaN(taken) && (run === null || (run?.attempt ?? 0) >= 1)) taken = now - t0;
          if (run === null) ended = now - t0;
        }
        await sleep(50);
      }
      const end = (await stack.db.collection("threads").doc(threadId).get()).get("lastRunEnd") as
        { outcome?: string } | undefined;
      if (end?.outcome !== "success") throw new Error(`run ${runId} ended ${JSON.stringify(end)}`);
      const lapse = lease.expiresAt.toMillis() - killedAt;
      out.push({
        cut: c.cut,
        toLapseMs: lapse,
        toTakeOverMs: taken,
        toContinuationMs: continued,
        toEndMs: ended,
      });
      console.error(
        `recovery: ${c.cut} cut, lease lapsed ${lapse} ms, taken over ${taken.toFixed(0)} ms, ` +
          `continued ${continued.toFixed(0)} ms, ended ${ended.toFixed(0)} ms`,
      );
    }
  } finally {
    await stack.stop();
  }
  return out;
}

// ---------------------------------------------------------------- 2. cost when nothing fails

/** The progress checkpoint's document id starts with its namespace, base64url-encoded. */
const PROGRESS_ID = `~${Buffer.from("quarry~progress").toString("base64url")}!`;

/**
 * What a commit writes, as one label: the kinds of documents in it (the run's log, its progress
 * checkpoint, its fence, the thread's checkpoints, the thread document, …), sorted and joined by "+".
 */
function commitLabel(body: string): string {
  const names = [...body.matchAll(/"name":"[^"]*?\/documents\/([^"]+)"/g)].map((m) => m[1]);
  const kinds = names.map((n) =>
    /\/runs\/[^/]+\/log\//.test(n)
      ? "log"
      : /\/runs\/[^/]+\/fence\//.test(n)
        ? "fence"
        : n.includes(PROGRESS_ID)
          ? "progress"
          : /^checkpoints\//.test(n)
            ? "checkpoint"
            : /^threads\/[^/]+$/.test(n)
              ? "thread"
              : /^threads\/[^/]+\/runs\/[^/]+$/.test(n)
                ? "run"
                : n.split("/")[0],
  );
  return [...new Set(kinds)].sort().join("+");
}

/** What a read asks for: the collection of its first document, or of its query. */
function readTarget(body: string): string {
  const doc = /\/documents\/([^/"]+)/.exec(body)?.[1];
  const query = /"collectionId":"([^"]+)"/.exec(body)?.[1];
  return query ? `${query} query` : (doc ?? "");
}

/**
 * Reads every instance makes on its own schedule, whichever run is going on (the authored-context,
 * group, approved-query and catalog caches, the member list): not the run's, and left out of its
 * round trips; counted apart.
 */
const SHARED = /"(context_imports|groups|approved_queries)"|documents\/(catalogs|members)\//;

/** The child: one in-process instance with this process's QUARRY_RUN_CONTINUATIONS. */
async function costChild() {
  const enqueued: { data: unknown; at: number }[] = [];
  const tasks = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c));
    req.on("end", () => {
      const { task } = JSON.parse(body) as { task: { httpRequest: { body: string } } };
      const { data } = JSON.parse(Buffer.from(task.httpRequest.body, "base64").toString()) as {
        data: unknown;
      };
      enqueued.push({ data, at: performance.now() });
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((r) => tasks.listen(0, "127.0.0.1", r));
  process.env.CLOUD_TASKS_EMULATOR_HOST = `127.0.0.1:${(tasks.address() as AddressInfo).port}`;
  const rpcs = countFirestoreRpcs();
  // Documents written and asked for, per call (on top of firestore-rpcs' count).
  const extra = new WeakMap<Rpc, { writes: number; docs: number; label: string; shared: boolean }>();
  const what = (r: Rpc) => {
    const e = extra.get(r);
    return e?.label ? `${r.method}(${e.label})` : r.method;
  };
  {
    const { Firestore } = require(
      require.resolve("@google-cloud/firestore", { paths: [path.join(root, "functions")] }),
    );
    const original = Firestore.prototype.request;
    const originalStream = Firestore.prototype.requestStream;
    const note = (method: string, arg: unknown) => {
      const r = rpcs.at(-1);
      if (!r || r.method !== method) return;
      const a = (arg ?? {}) as { writes?: unknown[]; documents?: unknown[] };
      // BENCH_TRACE=1: every call with the documents it names.
      if (process.env.BENCH_TRACE)
        console.error(
          "FS",
          method,
          (method === "commit"
            ? (JSON.stringify(arg).match(/documents\/[^"]+/g) ?? []).join(" ")
            : JSON.stringify(arg)
          ).slice(0, 600),
          performance.now().toFixed(0),
        );
      extra.set(r, {
        writes: a.writes?.length ?? 0,
        docs: method === "batchGetDocuments" ? (a.documents?.length ?? 0) : method === "runQuery" ? 1 : 0,
        label: method === "commit" ? commitLabel(JSON.stringify(arg)) : readTarget(JSON.stringify(arg)),
        shared: method !== "commit" && SHARED.test(JSON.stringify(arg)),
      });
    };
    Firestore.prototype.request = function (this: unknown, method: string, ...rest: unknown[]) {
      const out = original.call(this, method, ...rest);
      note(method, rest[0]);
      return out;
    };
    Firestore.prototype.requestStream = function (this: unknown, method: string, ...rest: unknown[]) {
      const out = originalStream.call(this, method, ...rest);
      note(method, rest[1]); // (method, bidirectional, request, …)
      return out;
    };
  }
  const { createApp } = require(path.join(root, "functions/lib/app.js"));
  const { watchRun } = require(path.join(root, "functions/lib/runs/continuation.js"));
  const server = createApp().listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  const client = new Client({
    apiUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    defaultHeaders: { authorization: `Bearer ${process.env.BENCH_ID_TOKEN}` },
    callerOptions: { maxRetries: 0 },
  });
  const settle = async () => {
    // The run's log and checkpoint writes go on in the background after the stream ends.
    for (let quiet = 0; quiet < 4;) {
      await sleep(50);
      quiet = rpcs.some((r) => r.method !== "listen" && r.end === Infinity) ? 0 : quiet + 1;
    }
  };
  const one = async (): Promise<RunCost> => {
    const { thread_id } = await client.threads.create();
    await settle();
    const from = rpcs.length;
    const queued = enqueued.length;
    const start = performance.now();
    let first = Infinity;
    let failed = false;
    for await (const ev of client.runs.stream(thread_id, "quarry", {
      input: { messages: [{ type: "human", content: QUESTION }] },
      streamMode: STREAM_MODES as never,
      streamResumable: true,
    }) as AsyncIterable<{ event: string; data: unknown }>) {
      if (ev.event === "error") failed = true;
      if (first === Infinity && ev.event === "messages") {
        const meta = (ev.data as [unknown, { langgraph_node?: string }])[1];
        if (meta?.langgraph_node === "generator") first = performance.now();
      }
    }
    await settle();
    const all = rpcs.slice(from);
    const run = all.filter((r) => !extra.get(r)?.shared);
    // The watchdog's deliveries, as production makes them: the first one at the lease's length plus
    // an interval, by when this run has ended (one delivery, which finds it done).
    const deliveryFrom = rpcs.length;
    let deliveries = 0;
    for (const t of enqueued.slice(queued)) {
      deliveries++;
      await watchRun(t.data).catch((err: unknown) => console.error("watchdog delivery:", String(err)));
    }
    await settle();
    const delivered = rpcs.slice(deliveryFrom);
    const before = run.filter((r) => r.at >= start && r.at < first);
    const sum = (rs: Rpc[], f: (e: { writes: number; docs: number }) => number) =>
      rs.reduce((n, r) => n + f(extra.get(r) ?? { writes: 0, docs: 0 }), 0);
    const reads = (rs: Rpc[]) =>
      rs.filter((r) => r.method === "batchGetDocuments" || r.method === "runQuery");
    return {
      failed: failed || first === Infinity,
      shared: all.length - run.length,
      rpcs: run.length,
      commits: run.filter((r) => r.method === "commit").length,
      writes: sum(run, (e) => e.writes),
      reads: sum(reads(run), (e) => e.docs),
      beforeToken: before.length,
      roundTrips: sequentialRoundTrips(awaitedCalls(before)),
      callsBeforeToken: awaitedCalls(before).map(what).join(" → "),
      commitLabels: run.filter((r) => r.method === "commit").map(what),
      afterToken: run.filter((r) => r.at >= first).map(what),
      enqueues: enqueued.length - queued,
      enqueuedBeforeToken: enqueued.slice(queued).filter((t) => t.at < first).length,
      deliveries,
      deliveryRpcs: delivered.map(what),
    };
  };
  await one(); // warm-up: LangChain, DuckDB's sample, the Firestore channel
  const results = [];
  for (let i = 0; i < COST_RUNS; i++) results.push(await one());
  server.close();
  tasks.close();
  process.send!(results, () => process.exit(0));
}

/** One measured run of a cost instance. */
interface RunCost {
  failed: boolean;
  /** Calls of the instance's own caches (SHARED) that fell in the run's window. */
  shared: number;
  rpcs: number;
  commits: number;
  writes: number;
  reads: number;
  beforeToken: number;
  roundTrips: number;
  callsBeforeToken: string;
  commitLabels: string[];
  afterToken: string[];
  enqueues: number;
  enqueuedBeforeToken: number;
  deliveries: number;
  deliveryRpcs: string[];
}

function costIn(env: Record<string, string>): Promise<RunCost[]> {
  return new Promise((resolve, reject) => {
    const child = fork(import.meta.filename, [], {
      execArgv: ["--import", "tsx"],
      env: { ...process.env, ...env, BENCH_DURABLE_ROLE: "cost" },
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    let got: RunCost[] | undefined;
    child.once("message", (m) => (got = m as RunCost[]));
    child.once("exit", (code) =>
      got ? resolve(got) : reject(new Error(`cost instance exited with ${code}`)),
    );
  });
}

function countOf(xs: string[]): string {
  const n = new Map<string, number>();
  for (const x of xs) n.set(x, (n.get(x) ?? 0) + 1);
  return [...n].map(([k, v]) => `${k} ${v}`).join(", ");
}

/**
 * The Vertex AI stand-in and the Firestore and Auth emulators, as run-cost's backends but with the
 * stand-in's certificate handed to the instances (NODE_EXTRA_CA_CERTS) rather than trusted here.
 */
async function startBackends() {
  const standin = await startVertexStandin({ script: apiScript(), tokenDelayMs: 0, charsPerChunk: 8 });
  const stack = await startStack({ services: ["firestore", "auth"], ports: "auto", env: {} }).catch(
    async (err: unknown) => {
      await standin.stop();
      throw err;
    },
  );
  const env: Record<string, string> = {
    ...stack.env,
    ...BENCH_ACCESS_ENV,
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

async function costTable(): Promise<Record<string, RunCost[]>> {
  const { stack, env, stop } = await startBackends();
  try {
    const user = await signUp(stack.urls.auth!);
    const base = { ...env, BENCH_ID_TOKEN: user.idToken, QUARRY_QUOTA_TOKENS_PER_DAY: String(1e12) };
    const off = await costIn({ ...base, QUARRY_RUN_CONTINUATIONS: "0" });
    const on = await costIn({ ...base, QUARRY_RUN_CONTINUATIONS: "2" });
    return {
      "durable runs off (QUARRY_RUN_CONTINUATIONS=0), baseline": off,
      "durable runs on (=2, the default)": on,
    };
  } finally {
    await stop();
  }
}

async function main() {
  if (process.env.BENCH_DURABLE_ROLE === "cost") return costChild();
  const costs = await costTable();
  const recoveries = process.env.BENCH_RECOVERY === "off" ? [] : await recoveryTable();

  console.log(
    `\nCost when nothing fails: "${QUESTION}" streamed (Quarry's page's modes, resumable), ${COST_RUNS} runs per ` +
      `setting after a warm-up, one in-process instance per setting (its own process), Firestore and Auth ` +
      `emulators, DuckDB sample; Node ${process.versions.node}, ${os.cpus().length} cores. Medians per run.`,
  );
  console.table(
    Object.entries(costs).map(([name, rs]) => {
      const med = (f: (r: RunCost) => number) => median(rs.map(f));
      return {
        setting: name,
        "Firestore calls": med((r) => r.rpcs),
        commits: med((r) => r.commits),
        "docs written": med((r) => r.writes),
        "docs read": med((r) => r.reads),
        "commits with the progress checkpoint": med(
          (r) => r.commitLabels.filter((l) => l.includes("progress")).length,
        ),
        "commits with the fence": med((r) => r.commitLabels.filter((l) => l.includes("fence")).length),
        "calls before 1st token": med((r) => r.beforeToken),
        "round trips before 1st token (max)": Math.max(...rs.map((r) => r.roundTrips)),
        "watchdog tasks queued (before 1st token)": `${med((r) => r.enqueues)} (${med((r) => r.enqueuedBeforeToken)})`,
        "watchdog deliveries: Firestore calls": `${med((r) => r.deliveries)}: ${med((r) => r.deliveryRpcs.length)}`,
        failed: rs.filter((r) => r.failed).length,
      };
    }),
  );
  for (const [name, rs] of Object.entries(costs)) {
    console.log(`${name}:`);
    console.log(
      `  awaited before the 1st token: ${[...new Set(rs.map((r) => r.callsBeforeToken))].join(" | ")}`,
    );
    console.log(
      `  commits, by what they write (${rs.length} runs): ${countOf(rs.flatMap((r) => r.commitLabels))}`,
    );
    console.log(
      `  calls at or after the 1st token (${rs.length} runs): ${countOf(rs.flatMap((r) => r.afterToken))}`,
    );
    console.log(
      `  watchdog deliveries' calls (${rs.length} runs): ${countOf(rs.flatMap((r) => r.deliveryRpcs)) || "none"}`,
    );
  }

  if (recoveries.length) {
    console.log(
      `\nRecovery time through the functions and tasks emulators (lease ${LEASE_S} s, watchdog interval ` +
        `${WATCHDOG_S} s), background run, its function process SIGKILLed while held, released right after; ` +
        `polled every 50 ms. Design bound for (a): lease + interval + a few round trips ≈ ${LEASE_S + WATCHDOG_S}.x s.`,
    );
    const rows = ["planner", "generator"].flatMap((cut) => {
      const rs = recoveries.filter((r) => r.cut === cut);
      if (!rs.length) return [];
      const s = (xs: number[]) =>
        `${(median(xs) / 1000).toFixed(2)} / ${(Math.max(...xs) / 1000).toFixed(2)}`;
      return [
        {
          cut: `${cut} (n=${rs.length})`,
          "kill → lease lapsed, s (median / max)": s(rs.map((r) => r.toLapseMs)),
          "kill → taken over (attempt 1), s": s(rs.map((r) => r.toTakeOverMs)),
          "kill → continuation's 1st event, s (median / max)": s(rs.map((r) => r.toContinuationMs)),
          "kill → run ended, s (median / max)": s(rs.map((r) => r.toEndMs)),
          "bound for the 1st event, s": `${LEASE_S} + ${WATCHDOG_S} + round trips`,
        },
      ];
    });
    console.table(rows);
    const worst = Math.max(...recoveries.map((r) => r.toContinuationMs)) / 1000;
    console.log(
      `bound: every continuation's first event within lease + interval + 1 s of round trips (${LEASE_S + WATCHDOG_S + 1} s): ` +
        `${worst <= LEASE_S + WATCHDOG_S + 1 ? "met" : "NOT met"} (worst ${worst.toFixed(2)} s)`,
    );
  }
  const failed = Object.values(costs)
    .flat()
    .filter((r) => r.failed).length;
  if (failed) throw new Error(`${failed} measured runs failed`);
  process.exit(0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

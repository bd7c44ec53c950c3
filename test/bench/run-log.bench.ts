/**
 * What the run event log costs: Firestore writes (log documents) per run against the events the run
 * emits, bytes stored, and time to first answer token with the log and without it (QUARRY_RUN_LOG=off),
 * measured in the same session, runs interleaved. Each variant is the function's express app in its
 * own process (configuration is read once per process) on the Firestore and Auth emulators, with the
 * Vertex AI stand-in streaming at a fixed token delay and the DuckDB sample warehouse.
 */
import type { ChildProcess } from "node:child_process";
import os from "node:os";
import { Firestore } from "@google-cloud/firestore";
import { Client } from "@langchain/langgraph-sdk";
import { startStack } from "../../scripts/stack.mjs";
import { signUp } from "../support/auth-emulator";
import { startAppServer, BENCH_ACCESS_ENV } from "./app-server";
import { apiScript } from "../support/api-script";
import { startVertexStandin } from "../support/vertex-standin";

const RUNS = Number(process.env.BENCH_RUNS ?? 12);
const TOKEN_DELAY_MS = 20;
const QUESTIONS = ["How many orders were placed in total?", "Which countries have the most customers?"];

/** Child role: serve the app on a free port and print it. */
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

async function main() {
  process.env.METADATA_SERVER_DETECTION = "none";
  const standin = await startVertexStandin({
    script: apiScript(),
    tokenDelayMs: TOKEN_DELAY_MS,
    charsPerChunk: 8,
    trust: true,
  });
  const stack = await startStack({ services: ["firestore", "auth"], ports: "auto", env: {} });
  const children: ChildProcess[] = [];
  try {
    const env: Record<string, string> = {
      ...(stack.env as Record<string, string>),
      ...BENCH_ACCESS_ENV,
      QUARRY_WAREHOUSE: "duckdb",
      VERTEX_AI_EMULATOR_HOST: standin.host,
      NODE_EXTRA_CA_CERTS: standin.certFile,
      METADATA_SERVER_DETECTION: "none",
    };
    const variants = {
      "with the event log": await startAppServer({ ...env, QUARRY_RUN_LOG: "on" }),
      "without it (QUARRY_RUN_LOG=off)": await startAppServer({ ...env, QUARRY_RUN_LOG: "off" }),
    };
    for (const v of Object.values(variants)) children.push(v.child);
    const user = await signUp(stack.urls.auth!);
    const db = new Firestore({
      projectId: env.GCLOUD_PROJECT,
      host: env.FIRESTORE_EMULATOR_HOST,
      ssl: false,
    });
    const stats: Record<string, { ttft: number[]; events: number[]; docs: number[]; bytes: number[] }> = {};
    for (const name of Object.keys(variants)) stats[name] = { ttft: [], events: [], docs: [], bytes: [] };
    for (let i = -1; i < RUNS; i++) {
      for (const [name, { url }] of Object.entries(variants)) {
        const client = new Client({
          apiUrl: url,
          defaultHeaders: { authorization: `Bearer ${user.idToken}` },
          callerOptions: { maxRetries: 0 },
        });
        const thread = (await client.threads.create()).thread_id;
        let runId = "";
        let events = 0;
        let first = 0;
        const start = performance.now();
        for await (const ev of client.runs.stream(thread, "quarry", {
          input: { messages: [{ type: "human", content: QUESTIONS[Math.max(i, 0) % QUESTIONS.length] }] },
          streamMode: ["values", "updates", "messages-tuple", "custom"],
          onRunCreated: (m) => (runId = m.run_id),
        })) {
          events++;
          const meta =
            ev.event === "messages" ? (ev.data as [unknown, { langgraph_node?: string }])[1] : undefined;
          if (!first && meta?.langgraph_node === "generator") first = performance.now();
        }
        if (i < 0) continue; // warm-up
        const log = await db.collection(`threads/${thread}/runs/${runId}/log`).get();
        const s = stats[name];
        s.ttft.push(first - start);
        s.events.push(events);
        s.docs.push(log.size);
        s.bytes.push(log.docs.reduce((n, d) => n + (d.get("bytes") as Buffer).length, 0));
      }
    }
    console.log(
      `Run event log: ${RUNS} runs per variant, interleaved; one-query questions; Vertex AI stand-in token delay ` +
        `${TOKEN_DELAY_MS} ms; Firestore emulator; Node ${process.versions.node}, ${os.cpus().length} cores`,
    );
    console.table(
      Object.entries(stats).map(([name, s]) => ({
        variant: name,
        "events per run": Math.round(mean(s.events)),
        "log writes per run (documents)": Number(mean(s.docs).toFixed(1)),
        "log KiB per run": Number((mean(s.bytes) / 1024).toFixed(1)),
        "first token p50 ms": Math.round(pct(s.ttft, 50)),
        "first token p90 ms": Math.round(pct(s.ttft, 90)),
      })),
    );
    await db.terminate();
  } finally {
    for (const c of children) c.kill();
    await stack.stop();
    await standin.stop();
  }
  process.exit(0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

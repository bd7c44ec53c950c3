/**
 * Stop that stops billing: how fast a cancel reaches the model's upstream request, and how many
 * tokens the model still streams after it. Two instances of the function's app (each in its own
 * process) on the Firestore and Auth emulators; the Vertex AI stand-in (in this process, so it sees
 * its request close) streams a long answer at a fixed token delay. A run on instance A is stopped
 * by the cancel endpoint on A, by the cancel endpoint on B (it reaches A through Firestore), or by
 * its client disconnecting; the baseline is the same answer not stopped.
 */
import type { ChildProcess } from "node:child_process";
import os from "node:os";
import { Client } from "@langchain/langgraph-sdk";
import { startStack } from "../../scripts/stack.mjs";
import { signUp } from "../support/auth-emulator";
import { startAppServer, BENCH_ACCESS_ENV } from "./app-server";
import { smartScript, type Script } from "../support/scripted-model-script";
import { startVertexStandin } from "../support/vertex-standin";

const RUNS = Number(process.env.BENCH_RUNS ?? 8);
const TOKEN_DELAY_MS = 20;
const ANSWER_CHUNKS = 300;

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

/** The sample analyst, with a long answer: ANSWER_CHUNKS chunks of 8 characters. */
function longAnswers(): Script {
  const base = smartScript();
  return async (req) => {
    const reply = await base(req);
    return req.role === "generator" ? { ...reply, text: "word ok ".repeat(ANSWER_CHUNKS) } : reply;
  };
}

async function main() {
  process.env.METADATA_SERVER_DETECTION = "none";
  const standin = await startVertexStandin({
    script: longAnswers(),
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
    const a = await startAppServer(env);
    const b = await startAppServer(env);
    children.push(a.child, b.child);
    const user = await signUp(stack.urls.auth!);
    const clientOf = (url: string) =>
      new Client({
        apiUrl: url,
        defaultHeaders: { authorization: `Bearer ${user.idToken}` },
        callerOptions: { maxRetries: 0 },
      });
    const onA = clientOf(a.url);
    const onB = clientOf(b.url);

    type How =
      "cancel endpoint, same instance" | "cancel endpoint, other instance" | "client disconnects" | "none";
    const one = async (how: How) => {
      const thread = (await onA.threads.create()).thread_id;
      const ac = new AbortController();
      let runId = "";
      let tokens = 0;
      let cancelAt = 0;
      let cancelled: Promise<unknown> | undefined;
      let closedAt = 0;
      const before = standin.requests.length;
      try {
        for await (const ev of onA.runs.stream(thread, "quarry", {
          input: { messages: [{ type: "human", content: "How many orders were placed in total?" }] },
          streamMode: ["messages-tuple"],
          signal: ac.signal,
          onRunCreated: (m) => (runId = m.run_id),
        })) {
          const meta =
            ev.event === "messages" ? (ev.data as [unknown, { langgraph_node?: string }])[1] : undefined;
          if (meta?.langgraph_node !== "generator") continue;
          // Stop once 20 chunks of the answer have arrived.
          if (++tokens === 20 && how !== "none") {
            // The answer's upstream request: when the stand-in sees it close, measured as it happens.
            const answer = standin.requests.slice(before).find((r) => r.reply.text?.startsWith("word ok"));
            void answer?.closed.then(() => (closedAt = performance.now()));
            cancelAt = performance.now();
            if (how === "client disconnects") ac.abort();
            else
              cancelled = (how === "cancel endpoint, same instance" ? onA : onB).runs.cancel(thread, runId);
          }
        }
      } catch {
        /* the aborted stream */
      }
      await cancelled;
      const answer = standin.requests.slice(before).find((r) => r.reply.text?.startsWith("word ok"));
      const closed = await answer!.closed;
      return {
        ms: closedAt - cancelAt,
        after: Math.max(0, closed.chunksSent - tokens),
        sent: closed.chunksSent,
      };
    };

    // Warm-up, not counted: each instance's first request opens its Firestore channel (a cold
    // instance's first cancel takes about a second more).
    await one("none");
    await one("cancel endpoint, other instance");
    const rows = [];
    for (const how of [
      "cancel endpoint, same instance",
      "cancel endpoint, other instance",
      "client disconnects",
    ] as How[]) {
      const ms: number[] = [];
      const after: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const r = await one(how);
        ms.push(r.ms);
        after.push(r.after);
      }
      rows.push({
        "stopped by": how,
        "cancel → upstream request closed, p50 ms": Math.round(pct(ms, 50)),
        "p90 ms": Math.round(pct(ms, 90)),
        "max ms": Math.round(Math.max(...ms)),
        "chunks streamed after the cancel (max)": Math.max(...after),
      });
    }
    const baseline = await one("none");
    rows.push({
      "stopped by": "not stopped (baseline)",
      "cancel → upstream request closed, p50 ms": NaN,
      "p90 ms": NaN,
      "max ms": NaN,
      "chunks streamed after the cancel (max)": baseline.sent - 20,
    });
    console.log(
      `Cancel: ${RUNS} runs per way, stopped after 20 answer chunks of ${ANSWER_CHUNKS}; stand-in token delay ` +
        `${TOKEN_DELAY_MS} ms; Firestore emulator; Node ${process.versions.node}, ${os.cpus().length} cores. Goal: ≤ 1,000 ms.`,
    );
    console.table(rows);
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

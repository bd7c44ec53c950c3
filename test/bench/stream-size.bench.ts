/**
 * Bytes on the wire for a one-query answer, per event, with the stream modes LangChain's
 * agent-chat-ui asks for (`values`, `messages-tuple`, `custom`): today's build against the build
 * before lean streams (git BENCH_STREAM_BASELINE, default the commit before them), each the function's
 * express app in its own process on the same Firestore and Auth emulators, Vertex AI stand-in and
 * DuckDB sample warehouse, the same questions interleaved.
 */
import type { ChildProcess } from "node:child_process";
import { rmSync } from "node:fs";
import os from "node:os";
import { startStack } from "../../scripts/stack.mjs";
import { signUp } from "../support/auth-emulator";
import { BENCH_ACCESS_ENV, buildBaseline, startAppServer } from "./app-server";
import { apiScript } from "../support/api-script";
import { startVertexStandin } from "../support/vertex-standin";

const BASELINE = process.env.BENCH_STREAM_BASELINE ?? "d88ca02";
const MODES = ["values", "messages-tuple", "custom"];
const QUESTIONS = ["How many orders were placed in total?", "Which countries have the most customers?"];
const GOAL_BYTES = 25 * 1024;

type Sizes = Record<string, number>;

/** One streamed run; bytes per event name, and the total. */
async function streamSizes(url: string, token: string, question: string): Promise<Sizes> {
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  const created = await fetch(`${url}/threads`, { method: "POST", headers, body: "{}" });
  const { thread_id } = (await created.json()) as { thread_id: string };
  const r = await fetch(`${url}/threads/${thread_id}/runs/stream`, {
    method: "POST",
    headers,
    body: JSON.stringify({
      assistant_id: "quarry",
      input: { messages: [{ type: "human", content: question }] },
      stream_mode: MODES,
    }),
  });
  const text = await r.text();
  if (!r.ok || text.includes("event: error")) throw new Error(`run failed: ${text.slice(0, 500)}`);
  const sizes: Sizes = { total: Buffer.byteLength(text) };
  for (const block of text.split("\n\n")) {
    const ev = /^event: (.*)$/m.exec(block)?.[1];
    if (ev) sizes[ev] = (sizes[ev] ?? 0) + Buffer.byteLength(block) + 2;
  }
  return sizes;
}

async function main() {
  process.env.METADATA_SERVER_DETECTION = "none";
  const baseline = await buildBaseline(BASELINE);
  const standin = await startVertexStandin({
    script: apiScript(),
    tokenDelayMs: 0,
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
      [`before (${BASELINE})`]: await startAppServer({ ...env, BENCH_FUNCTIONS_DIR: baseline.functionsDir }),
      today: await startAppServer(env),
    };
    for (const v of Object.values(variants)) children.push(v.child);
    const user = await signUp(stack.urls.auth!);
    const rows: Record<string, unknown>[] = [];
    for (const question of QUESTIONS) {
      for (const [name, { url }] of Object.entries(variants)) {
        const s = await streamSizes(url, user.idToken, question);
        rows.push({
          question,
          build: name,
          "total KB": +(s.total / 1024).toFixed(1),
          "values KB": +((s.values ?? 0) / 1024).toFixed(1),
          "messages KB": +((s.messages ?? 0) / 1024).toFixed(1),
          "custom KB": +((s.custom ?? 0) / 1024).toFixed(1),
          "≤ 25 KB": s.total <= GOAL_BYTES ? "yes" : "no",
        });
      }
    }
    console.log(
      `Stream size of a one-query answer, stream modes ${MODES.join(", ")} (agent-chat-ui's); Vertex AI ` +
        `stand-in, 8 characters per token chunk; Node ${process.versions.node}, ${os.cpus().length} cores`,
    );
    console.table(rows);
  } finally {
    for (const c of children) c.kill();
    await stack.stop();
    await standin.stop();
    rmSync(baseline.dir, { recursive: true, force: true });
  }
  process.exit(0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

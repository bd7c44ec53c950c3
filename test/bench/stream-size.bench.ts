/**
 * Bytes on the wire for a one-query answer — the same question through the same Vertex AI stand-in
 * script — over the streaming protocol v1 and v2 in the same run, on one in-process instance of
 * the function's express app (Firestore and Auth emulators, DuckDB sample warehouse):
 * - v1, `POST /threads/:id/runs/stream` as each client sends it, through the SDK's own `Client`:
 *   agent-chat-ui's hook (SDK 1.8.10, its lockfile's; `streamMode: ["values"]`, subgraphs and
 *   resumable streams, to which the hook adds `messages-tuple` for `stream.messages` and `custom`
 *   for its `onCustomEvent`), the same options as written without the hook's additions
 *   (`values` only), and Quarry's page (SDK 1.15.0, web/src/chat/runs.ts: `STREAM_MODES`, resumable);
 * - v2, @langchain/react 1.1.0's `useStream` as it runs, without React: its `StreamController`
 *   (from the SDK 1.11.0 it pins) with the hook's defaults, `submit` of the question — `run.start`,
 *   then the event streams the controller opens itself (recorded, not assumed) — each stream read
 *   until the root lifecycle reaches a terminal event (completed / failed / interrupted).
 * Every request and response body goes through a recording `fetch` handed to the SDK (bytes as
 * decoded by fetch: no HTTP headers, no chunk framing; the function sends SSE uncompressed).
 * Per variant, the median of BENCH_RUNS rounds (default 3, variants interleaved): response bytes,
 * events, bytes per channel; and for v1's streamed answer the Firestore round trips before the
 * first token, counted on the instance's Firestore client as `api-load` counts them (goal ≤ 3:
 * serving v2 beside v1 must not add one); for v2, the answer the hook's `messages` show once the
 * run has ended, against the one its streams carried. v2 runs start on the task queue; here a
 * stand-in for Cloud Tasks (CLOUD_TASKS_EMULATOR_HOST) hands each task to the task function's
 * body (`runInBackground`) in this process.
 */
import { createServer } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { Client as Client1_15 } from "@langchain/langgraph-sdk";
import { Client as Client1_8 } from "langgraph-sdk-1-8-10";
import { startStack } from "../../scripts/stack.mjs";
import { STREAM_MODES } from "../../functions/src/contract/protocol";
import { signUp } from "../support/auth-emulator";
import { apiScript } from "../support/api-script";
import { startVertexStandin } from "../support/vertex-standin";
import { BENCH_ACCESS_ENV } from "./app-server";
import { awaitedCalls, countFirestoreRpcs, sequentialRoundTrips, type Rpc } from "./firestore-rpcs";

const root = path.resolve(import.meta.dirname, "../..");
const require = createRequire(import.meta.url);
const QUESTION = "How many orders were placed in total?";
const RUNS = Math.max(1, Number(process.env.BENCH_RUNS ?? 3));
const TERMINAL = new Set(["completed", "failed", "interrupted"]);

/** One SSE frame as received: its event name (`:` for a comment such as a heartbeat), bytes, when. */
interface Frame {
  event: string;
  bytes: number;
  at: number;
  data: string;
}

/** One HTTP request the client made, and what came back (an SSE body up to its root terminal event). */
interface Exchange {
  at: number;
  url: string;
  requestBody: string;
  status: number;
  sse: boolean;
  responseBytes: number;
  frames: Frame[];
  /** v2: the stream carried the root lifecycle's terminal event (later bytes are not counted). */
  ended: boolean;
}

/** A `fetch` that records every request and response body passing through it. */
class Wire {
  readonly exchanges: Exchange[] = [];

  readonly fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const ex: Exchange = {
      at: performance.now(),
      url: String(input instanceof Request ? input.url : input),
      requestBody: typeof init?.body === "string" ? init.body : "",
      status: 0,
      sse: false,
      responseBytes: 0,
      frames: [],
      ended: false,
    };
    this.exchanges.push(ex);
    const res = await fetch(input, init);
    ex.status = res.status;
    ex.sse = (res.headers.get("content-type") ?? "").startsWith("text/event-stream");
    if (!res.body) return res;
    const decoder = new TextDecoder();
    let buf = "";
    const frame = (block: string, bytes: number) => {
      if (ex.ended) return;
      const lines = block.split("\n");
      const event =
        lines.find((l) => l.startsWith("event: "))?.slice(7) ?? (block.startsWith(":") ? ":" : "message");
      const data = lines.find((l) => l.startsWith("data: "))?.slice(6) ?? "";
      ex.frames.push({ event, bytes, at: performance.now(), data });
      ex.responseBytes += bytes;
      if (event === "lifecycle") {
        const e = JSON.parse(data) as { params: { namespace: string[]; data: { event?: string } } };
        if (e.params.namespace.length === 0 && TERMINAL.has(e.params.data.event ?? "")) ex.ended = true;
      }
    };
    const tee = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        if (!ex.sse) ex.responseBytes += chunk.byteLength;
        else {
          buf += decoder.decode(chunk, { stream: true });
          for (let i = buf.indexOf("\n\n"); i >= 0; i = buf.indexOf("\n\n")) {
            const block = buf.slice(0, i);
            buf = buf.slice(i + 2);
            frame(block, Buffer.byteLength(block) + 2);
          }
        }
        controller.enqueue(chunk);
      },
      flush() {
        if (ex.sse && buf) frame(buf, Buffer.byteLength(buf));
      },
    });
    return new Response(res.body.pipeThrough(tee), {
      status: res.status,
      statusText: res.statusText,
      headers: res.headers,
    });
  };
}

/** What one variant's run put on the wire. */
interface Measured {
  requests: number;
  requestBytes: number;
  responseBytes: number;
  events: number;
  /** Response bytes per channel (SSE event name; `:` heartbeats; `json` a command's answer). */
  byChannel: Record<string, number>;
  eventsByChannel: Record<string, number>;
  /** The answer's length in the last state the stream carried. */
  answerChars: number;
  /** v2: the answer's length in the hook's own state once the run ended (what a page shows). */
  hookAnswerChars?: number;
  roundTrips?: number;
  calls?: string;
  /** v2: each event stream's request body and its bytes and events. */
  streams?: { filter: string; bytes: number; events: number }[];
}

const channelOf = (event: string) => event.split("|")[0];

function measure(exchanges: Exchange[]): Measured {
  const byChannel: Record<string, number> = {};
  const eventsByChannel: Record<string, number> = {};
  for (const ex of exchanges) {
    if (!ex.sse) byChannel.json = (byChannel.json ?? 0) + ex.responseBytes;
    for (const f of ex.frames) {
      const ch = channelOf(f.event);
      byChannel[ch] = (byChannel[ch] ?? 0) + f.bytes;
      if (ch !== ":") eventsByChannel[ch] = (eventsByChannel[ch] ?? 0) + 1;
    }
  }
  return {
    requests: exchanges.length,
    requestBytes: exchanges.reduce((n, ex) => n + Buffer.byteLength(ex.requestBody), 0),
    responseBytes: exchanges.reduce((n, ex) => n + ex.responseBytes, 0),
    events: Object.values(eventsByChannel).reduce((a, b) => a + b, 0),
    byChannel,
    eventsByChannel,
    answerChars: 0,
  };
}

type Msg = { type?: string; content?: unknown };
const textOf = (m: Msg | undefined) =>
  typeof m?.content === "string"
    ? m.content
    : Array.isArray(m?.content)
      ? (m.content as { text?: string }[]).map((p) => p.text ?? "").join("")
      : "";

/** The answer's text in the last state a stream sent (v1 `values` data, or v2 `values` params.data). */
function answerOf(frames: Frame[], v2: boolean): string {
  const last = frames.filter((f) => channelOf(f.event) === "values").at(-1);
  if (!last) return "";
  const parsed = JSON.parse(last.data) as { messages?: Msg[]; params?: { data?: { messages?: Msg[] } } };
  const messages = (v2 ? parsed.params?.data?.messages : parsed.messages) ?? [];
  return textOf(messages.filter((m) => m.type === "ai").at(-1));
}

interface Instance {
  apiUrl: string;
  headers: Record<string, string>;
  rpcs: Rpc[];
  /** Resolves once every task the task queue was given has run. */
  tasksIdle: () => Promise<void>;
}

type V1Client = {
  threads: { create: () => Promise<{ thread_id: string }> };
  runs: { stream: (t: string, a: string, o: Record<string, unknown>) => AsyncIterable<unknown> };
};

/** A v1 streamed run as `ClientClass` sends it with `options`; round trips before the first token when it streams tokens. */
async function v1Run(
  inst: Instance,
  ClientClass: new (o: object) => unknown,
  options: Record<string, unknown>,
): Promise<Measured> {
  const wire = new Wire();
  const plain = new Client1_15({ apiUrl: inst.apiUrl, defaultHeaders: inst.headers });
  const { thread_id } = await plain.threads.create(); // the hooks create the thread first; not counted
  const client = new ClientClass({
    apiUrl: inst.apiUrl,
    defaultHeaders: inst.headers,
    callerOptions: { fetch: wire.fetch, maxRetries: 0 },
  }) as V1Client;
  for await (const ev of client.runs.stream(thread_id, "quarry", {
    input: { messages: [{ type: "human", content: QUESTION }] },
    ...options,
  })) {
    if ((ev as { event?: string }).event === "error") throw new Error(`run failed: ${JSON.stringify(ev)}`);
  }
  const m = measure(wire.exchanges);
  const frames = wire.exchanges.flatMap((ex) => ex.frames);
  m.answerChars = answerOf(frames, false).length;
  const first = frames.find(
    (f) =>
      channelOf(f.event) === "messages" &&
      (JSON.parse(f.data) as [unknown, { langgraph_node?: string }])[1]?.langgraph_node === "generator",
  );
  if (first) {
    const start = wire.exchanges[0].at;
    const awaited = awaitedCalls(
      inst.rpcs.filter((r) => r.at >= start && r.at < first.at),
      thread_id,
    );
    m.roundTrips = sequentialRoundTrips(awaited);
    m.calls = awaited.map((r) => r.method).join(" → ");
  }
  return m;
}

interface HookController {
  activate(): () => void;
  submit(input: unknown): Promise<void>;
  dispose(): Promise<void>;
  rootStore: { getSnapshot(): { error?: unknown; messages: Msg[] } };
}

/** @langchain/react's StreamController and Client, from the SDK it pins (1.11.0). */
function hookSdk(): {
  Client: new (o: object) => unknown;
  StreamController: new (o: object) => HookController;
} {
  const reactRequire = createRequire(require.resolve("@langchain/react/package.json"));
  return {
    Client: reactRequire("@langchain/langgraph-sdk/client").Client,
    StreamController: reactRequire("@langchain/langgraph-sdk/stream").StreamController,
  };
}

async function until(ok: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A v2 answer as useStream asks it: submit, then its event streams until the root lifecycle ends. */
async function v2Run(inst: Instance): Promise<Measured> {
  const { Client, StreamController } = hookSdk();
  const wire = new Wire();
  // useStream's own client and controller, with the hook's defaults (SSE transport, new thread).
  const client = new Client({ apiUrl: inst.apiUrl, defaultHeaders: inst.headers });
  const controller = new StreamController({
    assistantId: "quarry",
    client,
    threadId: null,
    fetch: wire.fetch,
  });
  const release = controller.activate();
  try {
    await controller.submit({ messages: [{ type: "human", content: QUESTION }] });
    const failed = controller.rootStore.getSnapshot().error;
    if (failed) throw new Error(`run failed: ${String(failed)}`);
    const streams = () => wire.exchanges.filter((ex) => ex.sse);
    await until(
      () => streams().length > 0 && streams().every((ex) => ex.ended),
      20_000,
      "every stream's end",
    );
    const m = measure(wire.exchanges);
    m.answerChars = answerOf(
      streams().flatMap((ex) => ex.frames),
      true,
    ).length;
    // What the page renders: the hook's `messages` once the run has ended. The hook may still be
    // applying the last events when its streams have ended (they can all come in the stream's last
    // read), so wait, bounded, until it shows what the streams carried; if it never does, what it
    // shows is reported.
    const hookAnswer = () =>
      textOf(
        controller.rootStore
          .getSnapshot()
          .messages.filter((x) => x.type === "ai")
          .at(-1),
      ).length;
    await until(() => hookAnswer() >= m.answerChars, 5_000, "the hook to show the answer").catch(() => {});
    m.hookAnswerChars = hookAnswer();
    m.streams = wire.exchanges
      .map((ex) => ({
        filter: `${new URL(ex.url).pathname.replace(/\/threads\/[^/]+/, "/threads/:id")} ${ex.requestBody}`,
        bytes: ex.responseBytes,
        events: ex.frames.filter((f) => f.event !== ":").length,
      }))
      .sort((a, b) => a.filter.localeCompare(b.filter));
    return m;
  } finally {
    release();
    await controller.dispose();
    await inst.tasksIdle(); // the background run lets go of the thread before the next run is measured
  }
}

/**
 * Cloud Tasks for the function's `taskQueue(...).enqueue` (CLOUD_TASKS_EMULATOR_HOST): each task
 * of the background-run queue is run at once, in this process, by that task-queue function's body.
 * Other queues' tasks are taken and not run: every run queues its watchdog (`runWatchdog`, due
 * only once the run's lease could have lapsed), and running it here as a background run would put
 * its calls inside the measured run.
 */
async function startTaskQueue(run: (task: unknown) => Promise<void>) {
  const pending = new Set<Promise<void>>();
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c));
    req.on("end", () => {
      if (!/\/queues\/backgroundRun\/tasks/.test(req.url ?? "")) {
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
        return;
      }
      const { task } = JSON.parse(body) as { task: { httpRequest: { body: string } } };
      const { data } = JSON.parse(Buffer.from(task.httpRequest.body, "base64").toString()) as {
        data: unknown;
      };
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
      const p: Promise<void> = run(data)
        .catch((err: unknown) => console.error("background run failed", err))
        .finally(() => pending.delete(p));
      pending.add(p);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    host: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    idle: async () => {
      while (pending.size) await Promise.all([...pending]);
    },
    close: () => server.close(),
  };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const kb = (bytes: number) => +(bytes / 1024).toFixed(1);

async function main() {
  const standin = await startVertexStandin({
    script: apiScript(),
    tokenDelayMs: 0,
    charsPerChunk: 8,
    trust: true,
  });
  const stack = await startStack({ services: ["firestore", "auth"], ports: "auto", env: {} });
  let tasks: Awaited<ReturnType<typeof startTaskQueue>> | undefined;
  let close = () => {};
  try {
    // The function's code reads its configuration once, when loaded: the environment first.
    let runInBackground: (task: unknown) => Promise<void> = async () => {};
    tasks = await startTaskQueue((task) => runInBackground(task));
    Object.assign(process.env, stack.env, BENCH_ACCESS_ENV, {
      QUARRY_WAREHOUSE: "duckdb",
      VERTEX_AI_EMULATOR_HOST: standin.host,
      NODE_EXTRA_CA_CERTS: standin.certFile,
      METADATA_SERVER_DETECTION: "none",
      CLOUD_TASKS_EMULATOR_HOST: tasks.host,
    });
    const rpcs = countFirestoreRpcs();
    runInBackground = require(path.join(root, "functions/lib/runs/background.js")).runInBackground;
    const { createApp } = require(path.join(root, "functions/lib/app.js"));
    const server = createApp().listen(0, "127.0.0.1");
    await new Promise((r) => server.once("listening", r));
    close = () => server.close();
    const user = await signUp(stack.urls.auth!);
    const inst: Instance = {
      apiUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      headers: { authorization: `Bearer ${user.idToken}` },
      rpcs,
      tasksIdle: tasks.idle,
    };
    const ui = { streamMode: ["values"], streamSubgraphs: true, streamResumable: true };
    const variants: Record<string, () => Promise<Measured>> = {
      "v1 agent-chat-ui (values, messages-tuple, custom; subgraphs)": () =>
        v1Run(inst, Client1_8, { ...ui, streamMode: ["values", "messages-tuple", "custom"] }),
      "v1 its options as written (values; subgraphs)": () => v1Run(inst, Client1_15, ui),
      "v1 Quarry's page (values, updates, messages-tuple, custom)": () =>
        v1Run(inst, Client1_15, { streamMode: [...STREAM_MODES], streamResumable: true }),
      "v2 @langchain/react 1.1.0 useStream defaults": () => v2Run(inst),
    };
    // Warm-up (not counted): DuckDB's sample, LangChain, the Firestore channel, the task queue.
    for (const run of Object.values(variants)) await run();
    const results: Record<string, Measured[]> = {};
    for (let round = 0; round < RUNS; round++) {
      for (const [name, run] of Object.entries(variants)) (results[name] ??= []).push(await run());
    }

    const channels = ["values", "messages", "updates", "custom", "lifecycle", "metadata", "json", ":"];
    const rows = Object.entries(results).map(([name, ms]) => {
      const med = (f: (m: Measured) => number) => median(ms.map(f));
      const other = (m: Measured) =>
        Object.entries(m.byChannel)
          .filter(([c]) => !channels.includes(c))
          .reduce((n, [, b]) => n + b, 0);
      const trips = ms.map((m) => m.roundTrips).filter((n): n is number => n !== undefined);
      return {
        variant: name,
        requests: med((m) => m.requests),
        "request B": med((m) => m.requestBytes),
        "response KB": kb(med((m) => m.responseBytes)),
        events: med((m) => m.events),
        ...Object.fromEntries(
          ["values", "messages", "updates", "custom", "lifecycle"].map((ch) => [
            `${ch} KB (events)`,
            `${kb(med((m) => m.byChannel[ch] ?? 0))} (${med((m) => m.eventsByChannel[ch] ?? 0)})`,
          ]),
        ),
        "metadata, command, other B": med(
          (m) => (m.byChannel.metadata ?? 0) + (m.byChannel.json ?? 0) + other(m),
        ),
        "answer chars (in the hook)": `${med((m) => m.answerChars)}${ms[0].hookAnswerChars === undefined ? "" : ` (${med((m) => m.hookAnswerChars ?? 0)})`}`,
        "Firestore round trips before 1st token": trips.length
          ? `${Math.max(...trips)} (max of ${trips.length})`
          : "—",
      };
    });
    console.log(
      `Stream size of a one-query answer ("${QUESTION}"), median of ${RUNS} runs per variant; Vertex AI ` +
        `stand-in, 8 characters per token chunk; one in-process instance; Node ${process.versions.node}, ` +
        `${os.cpus().length} cores`,
    );
    console.table(rows);
    const v1 = Object.entries(results).filter(([n]) => n.startsWith("v1"));
    console.log("v1 Firestore calls awaited before the first token:", [
      ...new Set(v1.flatMap(([, ms]) => ms.map((m) => m.calls).filter(Boolean))),
    ]);
    const worst = Math.max(...v1.flatMap(([, ms]) => ms.map((m) => m.roundTrips ?? 0)));
    console.log(
      `v1 round trips before the first token, goal ≤ 3: ${worst <= 3 ? "met" : "NOT met"} (worst ${worst})`,
    );
    const [v2name, v2] = Object.entries(results).find(([n]) => n.startsWith("v2"))!;
    const [shown, carried] = [
      median(v2.map((m) => m.hookAnswerChars ?? 0)),
      median(v2.map((m) => m.answerChars)),
    ];
    console.log(
      `v2: the hook's messages show ${shown} of the ${carried} answer characters its streams carried` +
        (shown === carried ? "" : " — NOT the answer"),
    );
    console.log(`\n${v2name}: each request as the hook sent it (median bytes and events of the response)`);
    console.table(
      v2[0].streams!.map((s, i) => ({
        request: s.filter,
        "response B": median(v2.map((m) => m.streams![i].bytes)),
        events: median(v2.map((m) => m.streams![i].events)),
      })),
    );
  } finally {
    close();
    tasks?.close();
    await stack.stop();
    await standin.stop();
  }
  process.exit(0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

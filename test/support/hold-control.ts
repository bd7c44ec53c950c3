/**
 * Holds: a deterministic way for a test to stop a run at a known point. The Vertex AI stand-in's
 * script runs in vitest's global-setup process, the tests in worker processes, so the two meet over
 * a tiny loopback HTTP control server:
 *
 * - the script calls `hold(key)` when a question carries a hold word (see `api-script.ts`); the
 *   model call then waits until the test releases `key` (at once if it already has);
 * - the test waits until the call has actually reached the hold (`waitHeld`: a long poll that
 *   answers when the condition holds, no sleeping), does what it needs while the run is stopped
 *   there, then calls `release(key)`. A release is sticky: later calls with that key pass through.
 *
 * Everything is bounded: a held call that is never released fails after `timeoutMs` with a message
 * naming the key, and `close()` lets every held call go, so a broken test fails instead of hanging.
 */
import { randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";

/** The name under which the control URL reaches the tests (the provided stack's env). */
export const HOLD_URL_ENV = "QUARRY_TEST_HOLD_URL";

/** A held call that is never released lets go after this long (and fails). */
const HOLD_TIMEOUT_MS = 60_000;

/** How a held call ended. */
type HoldOutcome = "released" | "timeout" | "closed";

export interface HoldServer {
  /** Control URL: GET /held?key=K&count=N&timeoutMs=T (long poll), POST /release?key=K, GET /status,
   * GET /prompts?key=<marker>. */
  url: string;
  timeoutMs: number;
  /** Called by the script: waits until `key` is released, the timeout passes or the server closes. */
  hold(key: string): Promise<HoldOutcome>;
  /** Where GET /prompts?key=<marker> reads the model requests from (the stand-in's record). */
  recordPrompts(source: () => string[]): void;
  /** Where GET /calls?key=<marker> reads the model calls and how they ended (the stand-in's arrivals). */
  recordCalls(source: () => { prompt: string; state: string }[]): void;
  close(): Promise<void>;
}

interface Gate {
  /** Calls that have reached this hold, ever. */
  arrived: number;
  released: boolean;
  /** Calls waiting now. */
  waiting: Set<(outcome: HoldOutcome) => void>;
  /** Long polls waiting for `arrived` to grow. */
  watchers: Set<() => void>;
}

const describeGate = (key: string, g: Gate) => ({
  key,
  arrived: g.arrived,
  waiting: g.waiting.size,
  released: g.released,
});

/** Starts the control server (in the global-setup process, next to the stand-in). */
export async function startHoldServer(opts: { timeoutMs?: number } = {}): Promise<HoldServer> {
  const timeoutMs = opts.timeoutMs ?? HOLD_TIMEOUT_MS;
  const gates = new Map<string, Gate>();
  let closed = false;
  const gate = (key: string): Gate => {
    let g = gates.get(key);
    if (!g) {
      g = { arrived: 0, released: false, waiting: new Set(), watchers: new Set() };
      gates.set(key, g);
    }
    return g;
  };

  const hold = (key: string): Promise<HoldOutcome> => {
    const g = gate(key);
    g.arrived++;
    for (const w of [...g.watchers]) w();
    if (g.released) return Promise.resolve("released");
    if (closed) return Promise.resolve("closed");
    return new Promise<HoldOutcome>((resolve) => {
      const done = (outcome: HoldOutcome) => {
        clearTimeout(timer);
        g.waiting.delete(done);
        resolve(outcome);
      };
      const timer = setTimeout(() => {
        console.error(
          `[hold-control] the model call held on "${key}" was never released within ${timeoutMs} ms; ` +
            "it fails now (the test should call release in a finally block).",
        );
        done("timeout");
      }, timeoutMs);
      g.waiting.add(done);
    });
  };

  let recorded: () => string[] = () => [];
  let calls: () => { prompt: string; state: string }[] = () => [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://hold");
    const key = url.searchParams.get("key") ?? "";
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (req.method === "GET" && url.pathname === "/status") {
      return send(200, { holds: [...gates].map(([k, g]) => describeGate(k, g)) });
    }
    if (!key) return send(400, { error: "Give the hold's key: ?key=<key>." });
    if (req.method === "GET" && url.pathname === "/prompts") {
      // The model requests the stand-in received whose text holds the key (a test's marker).
      return send(200, { prompts: recorded().filter((p) => p.includes(key)) });
    }
    if (req.method === "GET" && url.pathname === "/calls") {
      // How each model call whose request holds the key ended: open, finished, or aborted by the function.
      return send(200, {
        states: calls()
          .filter((c) => c.prompt.includes(key))
          .map((c) => c.state),
      });
    }
    if (req.method === "POST" && url.pathname === "/release") {
      const g = gate(key);
      g.released = true;
      const released = g.waiting.size;
      for (const done of [...g.waiting]) done("released");
      return send(200, { ...describeGate(key, g), releasedNow: released });
    }
    if (req.method === "GET" && url.pathname === "/held") {
      const g = gate(key);
      const count = Number(url.searchParams.get("count") ?? 1);
      const wait = Math.min(Number(url.searchParams.get("timeoutMs") ?? 30_000), 5 * 60_000);
      if (g.arrived >= count) return send(200, describeGate(key, g));
      // Answer as soon as the condition holds; bounded by the caller's timeout.
      const finish = (status: number, body: unknown) => {
        clearTimeout(timer);
        g.watchers.delete(check);
        res.off("close", onClose);
        send(status, body);
      };
      const check = () => {
        if (g.arrived >= count) finish(200, describeGate(key, g));
      };
      const onClose = () => {
        clearTimeout(timer);
        g.watchers.delete(check);
      };
      const timer = setTimeout(
        () =>
          finish(408, {
            error:
              `No model call reached the hold "${key}" ${count > 1 ? `${count} times ` : ""}within ${wait} ms ` +
              `(it was reached ${g.arrived} times). Holds known now: ` +
              JSON.stringify([...gates].map(([k, gg]) => describeGate(k, gg))),
          }),
        wait,
      );
      g.watchers.add(check);
      res.on("close", onClose);
      return;
    }
    send(404, { error: `No such control call: ${req.method} ${url.pathname}` });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    timeoutMs,
    hold,
    recordPrompts: (source) => {
      recorded = source;
    },
    recordCalls: (source) => {
      calls = source;
    },
    close: async () => {
      closed = true;
      for (const g of gates.values()) for (const done of [...g.waiting]) done("closed");
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A test's side of the holds (any process): hold words, waiting for a hold, releasing it. */
export interface Holds {
  /** A fresh key; the label only makes failures readable. */
  newKey(label: string): string;
  /** Put in a question: its planner's model call waits until `release(key)`. */
  planner(key: string): string;
  /** Put in a question: its generator's model call (the answer) waits until `release(key)`. */
  answer(key: string): string;
  /** Resolves once `count` model calls (default 1) have reached the hold; fails after `timeoutMs`. */
  waitHeld(
    key: string,
    opts?: { count?: number; timeoutMs?: number },
  ): Promise<{ arrived: number; waiting: number }>;
  /** What the hold has seen so far. */
  status(key: string): Promise<{ arrived: number; waiting: number; released: boolean }>;
  /** Lets the held calls go, and every later call with this key. */
  release(key: string): Promise<void>;
  /** The model requests (as JSON text) the stand-in received that contain `marker`. */
  prompts(marker: string): Promise<string[]>;
  /** How the model calls whose request contains `marker` ended so far: open, finished or aborted. */
  calls(marker: string): Promise<string[]>;
}

/** The hold words `api-script.ts` reads: `[hold:<key>]` (planner) and `[hold-answer:<key>]` (generator). */
export const HOLD_WORD = /\[hold:([\w-]+)\]/;
export const HOLD_ANSWER_WORD = /\[hold-answer:([\w-]+)\]/;

export function holdClient(url: string | undefined): Holds {
  if (!url) {
    throw new Error(
      `${HOLD_URL_ENV} is not set: the integration project's global setup (test/support/global-stack.ts) ` +
        "starts the hold control server and provides its URL.",
    );
  }
  const control = async (method: string, path: string, timeoutMs = 10_000) => {
    const res = await fetch(`${url}${path}`, { method, signal: AbortSignal.timeout(timeoutMs) });
    const body = (await res.json()) as Record<string, unknown>;
    if (!res.ok) throw new Error(String(body.error ?? `hold control answered ${res.status}`));
    return body;
  };
  const q = (key: string) => `key=${encodeURIComponent(key)}`;
  return {
    newKey: (label) => `${label}-${randomUUID().slice(0, 8)}`,
    planner: (key) => `[hold:${key}]`,
    answer: (key) => `[hold-answer:${key}]`,
    async waitHeld(key, { count = 1, timeoutMs = 45_000 } = {}) {
      const body = await control(
        "GET",
        `/held?${q(key)}&count=${count}&timeoutMs=${timeoutMs}`,
        timeoutMs + 5000,
      );
      return { arrived: Number(body.arrived), waiting: Number(body.waiting) };
    },
    async status(key) {
      const body = (await control("GET", "/status")) as {
        holds: Array<{ key: string; arrived: number; waiting: number; released: boolean }>;
      };
      return body.holds.find((h) => h.key === key) ?? { arrived: 0, waiting: 0, released: false };
    },
    async release(key) {
      await control("POST", `/release?${q(key)}`);
    },
    async prompts(marker) {
      return ((await control("GET", `/prompts?${q(marker)}`)) as { prompts: string[] }).prompts;
    },
    async calls(marker) {
      return ((await control("GET", `/calls?${q(marker)}`)) as { states: string[] }).states;
    },
  };
}

/**
 * Results no instance can be taken down by, and SQL the way models send it, through the functions
 * emulator with the real SDK client: the model stand-in sends the tool call ("[sql:<name>]" in
 * api-script.ts), the function runs it against DuckDB in its worker processes.
 */
import { readFileSync, readdirSync } from "node:fs";
import type { Client } from "@langchain/langgraph-sdk";
import { beforeAll, describe, expect, it } from "vitest";
import { signUp } from "../../support/auth-emulator";
import { sdkClient } from "../../support/api-client";
import { stackEnv } from "../../support/stack-env";
import { HOLD_URL_ENV, holdClient, type Holds } from "../../support/hold-control";
import { generateSampleData } from "../../../functions/src/tools/duckdb/sample-data";

type Ev = { event: string; data: unknown };
type Custom = { type: string; [k: string]: unknown };

let alice: Client;
let bob: Client;
let holds: Holds;
const orders = generateSampleData().orders.length;

beforeAll(async () => {
  const stack = stackEnv();
  const api = stack.urls.api!;
  alice = sdkClient(api, await signUp(stack.urls.auth!));
  bob = sdkClient(api, await signUp(stack.urls.auth!));
  holds = holdClient(stack.env[HOLD_URL_ENV]);
});

/** Asks on a new thread and returns the run's custom events and whether it ended in an error event. */
async function ask(client: Client, question: string, onMetadata?: () => Promise<void>) {
  const thread = await client.threads.create();
  const custom: Custom[] = [];
  const events: string[] = [];
  for await (const ev of client.runs.stream(thread.thread_id, "quarry", {
    input: { messages: [{ type: "human", content: question }] },
    streamMode: ["custom", "messages-tuple"],
  }) as AsyncIterable<Ev>) {
    events.push(ev.event);
    if (ev.event === "custom") custom.push(ev.data as Custom);
    if (ev.event === "metadata") await onMetadata?.();
  }
  const of = (type: string) => custom.filter((c) => c.type === type);
  return { events, of, thread };
}

/** Peak resident memory (VmHWM, MiB) of every process whose command line contains `text`. */
function peaksOf(text: string): number[] {
  const out: number[] = [];
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (!cmd.includes(text)) continue;
      const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
      if (kb) out.push(Number(kb) / 1024);
    } catch {
      /* the process ended meanwhile */
    }
  }
  return out;
}

describe("SQL the way models send it", () => {
  it("a fenced, semicolon-terminated query runs on the first try: no tool error, no retry", async () => {
    const { of, events } = await ask(alice, "[sql:fenced] How many orders?");
    expect(events).not.toContain("error");
    expect(of("tool_error")).toEqual([]);
    expect(of("retry")).toEqual([]);
    expect(of("sql").map((e) => e.sql)).toEqual(["SELECT COUNT(*) AS orders FROM shop.orders"]);
    const [result] = of("result");
    expect(result).toMatchObject({ sql: "SELECT COUNT(*) AS orders FROM shop.orders", rows: [{ orders }] });
  });

  it("two statements inside one fence are still refused, shown as the statement without its fence", async () => {
    const { of } = await ask(alice, "[sql:fenced-two] How many orders?");
    const [err] = of("tool_error");
    expect(err).toMatchObject({ category: "refused", message: expect.stringMatching(/2 statements/) });
    expect(err.sql).toBe("SELECT COUNT(*) AS orders FROM shop.orders;\nSELECT 1");
  });
});

describe("results too large for memory", () => {
  for (const bomb of ["repeat", "cross-join", "string-agg"]) {
    it(`${bomb}: ends bounded within the timeout; another person's run held meanwhile, and the next, are answered`, async () => {
      const key = holds.newKey(`during-${bomb}`);
      // Bob's question waits at its model call while Alice's bomb runs, then goes on.
      const bobs = ask(bob, `${holds.planner(key)} How many orders were placed in total?`);
      await holds.waitHeld(key);
      const started = Date.now();
      const { of, events } = await ask(alice, `[sql:${bomb}] Show me everything`);
      expect(Date.now() - started).toBeLessThan(60_000);
      expect(events).not.toContain("error");
      const [err] = of("tool_error");
      const [result] = of("result");
      if (err) {
        expect(err).toMatchObject({ category: "too_large", message: expect.stringMatching(/more memory/) });
      } else {
        expect(result).toMatchObject({ truncated: true });
        expect(JSON.stringify(result.rows).length).toBeLessThanOrEqual(2_000_000);
      }
      await holds.release(key);
      const during = await bobs;
      expect(during.events).not.toContain("error");
      expect(during.of("result")[0]).toMatchObject({ rows: [{ orders }] });
      const after = await ask(bob, "How many orders were placed in total?");
      expect(after.of("result")[0]).toMatchObject({ rows: [{ orders }] });
      // The function's processes never took the bomb's memory: each stayed under the function's 1 GiB.
      const fns = peaksOf("functionsEmulatorRuntime");
      expect(fns.length).toBeGreaterThan(0);
      for (const peak of [...fns, ...peaksOf("duckdb/worker.js")]) expect(peak).toBeLessThan(1024);
    }, 120_000);
  }

  it("the REPEAT statement itself is a too_large tool error the planner sees", async () => {
    const { of } = await ask(alice, "[sql:repeat] Show me everything");
    expect(of("tool_error")[0]).toMatchObject({ category: "too_large" });
  }, 60_000);
});

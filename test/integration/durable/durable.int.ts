/**
 * Durable runs (docs/runs.md, "What survives what"), through firebase-tools' functions and tasks
 * emulators with the SDK client: the function process serving a run is stopped (SIGKILL by PID)
 * while the run is held at a known point, and the run is continued by its watchdog task on another
 * process from its last stored step — the stand-ins show what was done again and what was not.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@langchain/langgraph-sdk";
import { signUp, type TestUser } from "../../support/auth-emulator";
import {
  BILLED,
  killRunHolder,
  startDurableStack,
  waitFor,
  type DurableStack,
} from "../../support/durable-stack";

let stack: DurableStack;
let ann: TestUser;
let client: Client;

type Ev = { event: string; data: unknown; id?: string };
const ask = (content: string) => ({ messages: [{ type: "human", content }] });
const messagesOf = (values: unknown) =>
  ((values as { messages?: { type: string; content: unknown }[] }).messages ?? []).map((m) => ({
    type: m.type,
    content: typeof m.content === "string" ? m.content : JSON.stringify(m.content),
  }));

beforeAll(async () => {
  stack = await startDurableStack();
  ann = await signUp(stack.authUrl);
  client = new Client({ apiUrl: stack.api, defaultHeaders: { Authorization: `Bearer ${ann.idToken}` } });
}, 180_000);

afterAll(async () => {
  await stack?.stop();
});

/** Starts a background run (nobody streams it) and returns its ids. */
async function background(question: string) {
  const thread = await client.threads.create();
  const run = await client.runs.create(thread.thread_id, "quarry", { input: ask(question) });
  return { threadId: thread.thread_id, runId: run.run_id };
}

/** The run's lease as the thread document holds it. */
const leaseOf = async (threadId: string) =>
  (await stack.db.collection("threads").doc(threadId).get()).get("run") as
    { attempt?: number; runId: string } | null | undefined;

/** Joins the run from its start and returns every event (the SDK's join, as a rejoining client). */
async function joinAll(threadId: string, runId: string): Promise<Ev[]> {
  const out: Ev[] = [];
  for await (const ev of client.runs.joinStream(threadId, runId, { lastEventId: "0" }) as AsyncIterable<Ev>)
    out.push(ev);
  return out;
}

describe("a run whose function process stops is finished by another, once", () => {
  it("cut in the planner's second model call: the planner is asked again, the steps before it are not", async () => {
    const key = stack.holds.newKey("replan");
    const marker = `durable-plan-${key}`;
    const { threadId, runId } = await background(
      `How many orders? [sql:bad-column] [hold-replan:${key}] ${marker}`,
    );
    await stack.holds.waitHeld(key);
    const killed = await killRunHolder(stack, threadId, "backgroundRun");
    expect(killed.attempt).toBe(0);
    // The watchdog takes the run over on a runWatchdog process and asks the planner again.
    await stack.holds.waitHeld(key, { count: 2, timeoutMs: 60_000 });
    expect((await leaseOf(threadId))?.attempt).toBe(1);
    await stack.holds.release(key);
    const events = await joinAll(threadId, runId);
    expect(events.at(-1)?.event, JSON.stringify(events.map((e) => e.event))).not.toBe("error");
    const state = await client.threads.getState(threadId);
    const said = messagesOf(state.values);
    expect(said.filter((m) => m.type === "human")).toHaveLength(1);
    expect(
      said.filter((m) => m.type === "ai" && m.content.trim() && !m.content.startsWith("[")),
    ).not.toHaveLength(0);
    // The model calls of this question: planner (bad query), planner again (cut), planner again
    // (continued), the answer — the first planner call and the failed query were not redone.
    const calls = await stack.holds.calls(marker);
    expect(calls, JSON.stringify(calls)).toHaveLength(4);
    const dryRuns = stack.bq.requests.filter(
      (r) =>
        r.method === "POST" &&
        JSON.stringify(r.body ?? "").includes("nme") &&
        JSON.stringify(r.body).includes("dryRun"),
    );
    expect(dryRuns).toHaveLength(1);
    expect(await leaseOf(threadId)).toBeNull();
    const thread = (await stack.db.collection("threads").doc(threadId).get()).data()!;
    expect(thread.status).toBe("idle");
    expect(thread.lastRunEnd).toMatchObject({ runId, outcome: "success" });
  });

  it("cut while BigQuery runs the query: the continuation attaches to the same job, billed and audited once", async () => {
    const marker = `durable-job-${Date.now()}`;
    const inserts = () =>
      stack.bq
        .inserts()
        .filter(
          (b) => !b.configuration?.dryRun && String(b.configuration?.query?.query).includes("held job"),
        );
    const before = inserts().length;
    const { threadId, runId } = await background(`How many orders? [sql:held-job] ${marker}`);
    await waitFor(() => inserts().length === before + 1, "the query job to be inserted");
    await killRunHolder(stack, threadId, "backgroundRun");
    // The continuation inserts the same job id, is told it exists, and takes that job.
    await waitFor(() => inserts().length === before + 2, "the continuation to insert the job again", 60_000);
    const [first, second] = inserts().slice(before);
    expect(second.jobReference.jobId).toBe(first.jobReference.jobId);
    expect(first.jobReference.jobId).toContain(runId.replace(/[^A-Za-z0-9_-]/g, "_"));
    stack.releaseJob();
    const events = await joinAll(threadId, runId);
    expect(events.at(-1)?.event, JSON.stringify(events.map((e) => e.event))).not.toBe("error");
    const thread = (await stack.db.collection("threads").doc(threadId).get()).data()!;
    expect(thread.lastRunEnd).toMatchObject({ runId, outcome: "success" });
    expect(thread.usage.bytesBilled).toBe(BILLED);
    const audited = await stack.db.collection("audit").where("runId", "==", runId).get();
    expect(audited.docs.map((d) => d.get("sql"))).toEqual([expect.stringContaining("held job")]);
    expect(audited.docs[0].id).toBe(first.jobReference.jobId);
    const usage = await stack.db.collection("usage").where("uid", "==", ann.uid).get();
    expect(usage.docs.reduce((n, d) => n + Number(d.get("bytes") ?? 0), 0)).toBe(BILLED);
  });
});

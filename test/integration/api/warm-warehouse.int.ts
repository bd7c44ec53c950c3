/**
 * The local warehouse starts at an instance's first admitted request (app.ts `warmOnce`,
 * tools/open.ts `warmWarehouse`, issue #46): the function's app served in this process, on the
 * integration stack's emulators with DuckDB in worker processes. A request refused at the gate
 * starts nothing; the first admitted one (a new conversation's thread) starts DuckDB's worker
 * before any question, and the first question runs in that worker.
 */
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signUp } from "../../support/auth-emulator";
import { call } from "../../support/api-client";
import { startInProcessApp, type InProcessApp } from "../../support/in-process-app";
import { stackEnv } from "../../support/stack-env";

let app: InProcessApp;
let open: typeof import("../../../functions/src/tools/open");

/** DuckDB worker processes this process started (the pool's, under their address-space limit). */
function duckDbWorkers(): number[] {
  const out = execFileSync("ps", ["--ppid", String(process.pid), "-o", "pid=,args="], { encoding: "utf8" });
  return out
    .split("\n")
    .filter((l) => /duckdb\/worker/.test(l) && !/--probe/.test(l))
    .map((l) => Number(l.trim().split(/\s+/)[0]));
}

/** Waits (bounded) until `ok()` holds. */
async function until(ok: () => boolean, what: string, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  app = await startInProcessApp({ QUARRY_DUCKDB_WORKERS: "1" });
  open = await import("../../../functions/src/tools/open");
});
afterAll(async () => {
  await app?.close();
  await open?.closeWarehouses();
});

describe("the local warehouse at an instance's first admitted request", () => {
  it("is not started by requests the gate refuses", async () => {
    expect((await call(app.url, "/threads", { method: "POST", body: {} })).status).toBe(401);
    const outsider = await signUp(stackEnv().urls.auth!, `outsider${Date.now()}@elsewhere.test`);
    const refused = await call(app.url, "/threads", { method: "POST", token: outsider.idToken, body: {} });
    expect([refused.status, refused.json?.error]).toEqual([403, "forbidden:not_member"]);
    expect(open.warehouseOpened()).toBe(false);
    expect(duckDbWorkers()).toEqual([]);
  });

  it("starts with a new conversation's thread, and the first question runs in that worker", async () => {
    const person = await signUp(stackEnv().urls.auth!);
    const thread = await call(app.url, "/threads", { method: "POST", token: person.idToken, body: {} });
    expect(thread.status).toBe(200);
    expect(open.warehouseOpened()).toBe(true); // asked before the thread's answer, no question yet
    await until(() => duckDbWorkers().length === 1, "DuckDB's worker to start");
    const started = duckDbWorkers();
    const threadId = (thread.json as { thread_id: string }).thread_id;
    const res = await call(app.url, `/threads/${threadId}/runs/wait`, {
      method: "POST",
      token: person.idToken,
      body: {
        assistant_id: "quarry",
        input: { messages: [{ type: "human", content: "How many orders were placed in total?" }] },
      },
    });
    expect(res.status).toBe(200);
    const messages = (res.json as { messages?: { type: string; content: unknown }[] }).messages ?? [];
    expect(messages.at(-1)?.type).toBe("ai");
    const pool = (await open.getWarehouse()) as unknown as { pids: number[] };
    expect(pool.pids).toEqual(started); // the worker started early is the one that answered
    expect(duckDbWorkers()).toEqual(started);
  });
});

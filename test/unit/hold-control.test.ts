/** The test-support holds: a model call waits at a hold until the test, over HTTP, releases it. */
import { describe, it, expect, afterEach } from "vitest";
import { apiScript } from "../support/api-script";
import { holdClient, startHoldServer, type HoldServer } from "../support/hold-control";
import type { ScriptRequest } from "../support/scripted-model-script";

let server: HoldServer;

afterEach(async () => {
  await server?.close();
});

const planner = (question: string): ScriptRequest => ({
  role: "planner",
  system: "",
  turns: [{ role: "user", text: question }],
  tools: ["list_tables", "bq_query", "describe_table"],
  call: 0,
});

describe("holds", () => {
  it("a held call waits until released; the test sees it arrive first; a release is sticky", async () => {
    server = await startHoldServer();
    const holds = holdClient(server.url);
    const key = holds.newKey("unit");
    let outcome: string | undefined;
    const held = server.hold(key).then((o) => (outcome = o));
    expect(await holds.waitHeld(key)).toEqual({ arrived: 1, waiting: 1 });
    expect(outcome).toBeUndefined();
    await holds.release(key);
    await held;
    expect(outcome).toBe("released");
    // Later calls with the key pass at once.
    expect(await server.hold(key)).toBe("released");
    expect(await holds.status(key)).toEqual({ key, arrived: 2, waiting: 0, released: true });
  });

  it("waiting for a hold nobody reaches fails, saying what is held", async () => {
    server = await startHoldServer();
    const holds = holdClient(server.url);
    void server.hold("other");
    await expect(holds.waitHeld("never", { timeoutMs: 50 })).rejects.toThrow(
      /No model call reached the hold "never" within 50 ms .*"other"/,
    );
  });

  it("a call never released fails after the timeout; closing lets every held call go", async () => {
    server = await startHoldServer({ timeoutMs: 50 });
    expect(await server.hold("forgotten")).toBe("timeout");
    const late = server.hold("at-close");
    await server.close();
    expect(await late).toBe("closed");
  });

  it("the API script holds the planner's call on [hold:<key>] and fails it with a message on timeout", async () => {
    server = await startHoldServer({ timeoutMs: 50 });
    const script = apiScript({ holds: server });
    const reply = await script(planner("[hold:k1] How many orders?"));
    expect(reply.error?.message).toMatch(/"k1" was never released within 50 ms/);
    // Without a hold word, or for another role, nothing waits.
    expect((await script(planner("How many orders?"))).error).toBeUndefined();
    expect(
      (await script({ ...planner("[hold-answer:k2] How many orders?"), role: "planner" })).error,
    ).toBeUndefined();
  });

  it("a test without the control URL is told where it comes from", () => {
    expect(() => holdClient(undefined)).toThrow(/QUARRY_TEST_HOLD_URL is not set.*global-stack/);
  });
});

/** Tool timeouts and model errors surface as errors, and the user's message is already checkpointed. */
import { tool } from "@langchain/core/tools";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { closeWarehouses } from "../../../functions/src/tools";
import { byRole } from "../../support/scripted-model-script";
import { duckTools, harness, runTurn } from "./harness";

afterAll(() => closeWarehouses());

/** A bq_query that never finishes on its own but stops when its signal aborts. */
function hangingQuery(seen: { aborted: boolean }) {
  return tool(
    (_input: { sql: string }, config) =>
      new Promise<string>((_resolve, reject) => {
        config?.signal?.addEventListener("abort", () => {
          seen.aborted = true;
          reject(new Error("aborted"));
        });
      }),
    { name: "bq_query", description: "Run SQL", schema: z.object({ sql: z.string() }) },
  );
}

describe("failures", () => {
  it("turns a hanging tool into a timeout tool error, cancels it, and still answers", async () => {
    const seen = { aborted: false };
    const tools = [hangingQuery(seen), ...(await duckTools()).filter((t) => t.name !== "bq_query")];
    const h = await harness(
      byRole({
        planner: [{ toolCalls: [{ name: "bq_query", args: { sql: "SELECT 1" } }] }],
        generator: [{ text: "The query timed out." }],
      }),
      { tools, toolTimeoutMs: 150, env: { QUARRY_MAX_RETRIES: "0" } },
    );
    const out = await runTurn(h, "t-timeout", "Count everything");
    expect(out.error).toBeUndefined();
    expect(seen.aborted).toBe(true);
    const err = out.custom.find((e) => e.type === "tool_error");
    expect(err).toMatchObject({ tool: "bq_query", category: "timeout", sql: "SELECT 1" });
    expect(h.model.callsBy("generator")[0].request.system).toMatch(
      /could not be retrieved: .*timeout.*did not finish within 0.2 s/,
    );
    const state = await h.graph.getState({ configurable: { thread_id: "t-timeout" } });
    const toolMsg = (state.values.messages as { getType(): string; content: unknown }[]).find(
      (m) => m.getType() === "tool",
    );
    expect(String(toolMsg?.content)).toMatch(/^Error \(timeout\)/);
  });

  it("surfaces a model error, leaving the user's message checkpointed", async () => {
    const h = await harness(byRole({ planner: [{ error: { status: 503, message: "model overloaded" } }] }));
    const out = await runTurn(h, "t-model-error", "What is the revenue by month?");
    expect(String(out.error)).toContain("model overloaded");
    // A specific code and a message saying what to do, not the generic internal error.
    expect(out.error).toMatchObject({
      code: "model:unavailable",
      message: expect.stringMatching(/ask again/),
    });
    const state = await h.graph.getState({ configurable: { thread_id: "t-model-error" } });
    const messages = state.values.messages as { getType(): string; content: unknown }[];
    expect(messages.map((m) => [m.getType(), m.content])).toEqual([
      ["human", "What is the revenue by month?"],
    ]);
    // The run stopped in the planner: resuming the thread later starts from a consistent state.
    expect(state.next).toEqual(["planner"]);
  });

  it("refuses empty and write requests without calling the model", async () => {
    const h = await harness(byRole({}));
    const empty = await runTurn(h, "t-refuse", "   ");
    const write = await runTurn(h, "t-refuse", "DROP TABLE shop.orders");
    expect(empty.error).toBeUndefined();
    expect(write.error).toBeUndefined();
    expect(h.model.calls).toHaveLength(0);
    const state = await h.graph.getState({ configurable: { thread_id: "t-refuse" } });
    expect(state.values.finalAnswer).toMatch(/only reads data/);
    expect(write.custom.map((e) => e.type === "phase" && e.phase)).toEqual(["ingress", "done"]);
  });
});

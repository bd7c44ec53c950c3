import { afterAll, describe, expect, it } from "vitest";
import { closeWarehouses } from "../../../functions/src/tools";
import { byRole } from "../../support/scripted-model-script";
import { harness, runTurn, tokenChunks } from "./harness";

afterAll(() => closeWarehouses());

describe("greeting", () => {
  it("answers without tools in at most 2 model calls, streaming tokens only from the generator", async () => {
    const h = await harness(
      byRole({
        planner: [{ text: "Just a greeting, no data needed." }],
        generator: [{ text: "Hello! Ask me anything about your shop data." }],
      }),
    );
    const out = await runTurn(h, "t-greet", "Hello there");
    expect(out.error).toBeUndefined();
    expect(h.model.calls.length).toBeLessThanOrEqual(2);
    expect(h.model.calls.flatMap((c) => c.reply.toolCalls ?? [])).toEqual([]);
    expect(out.custom.filter((e) => e.type === "sql" || e.type === "result")).toEqual([]);

    const tokens = tokenChunks(out);
    expect(tokens.length).toBeGreaterThan(3);
    expect(new Set(tokens.map((t) => t.node))).toEqual(new Set(["generator"]));
    expect(tokens.map((t) => t.text).join("")).toBe("Hello! Ask me anything about your shop data.");
    // The planner's own reply is neither streamed nor kept in the thread.
    const state = await h.graph.getState({ configurable: { thread_id: "t-greet" } });
    const texts = (state.values.messages as { content: unknown }[]).map((m) => m.content);
    expect(texts).toEqual(["Hello there", "Hello! Ask me anything about your shop data."]);
    expect(state.values.finalAnswer).toBe("Hello! Ask me anything about your shop data.");
  });
});

/** Checkpointer-backed memory, the summarizer, and the custom events with accumulating usage. */
import { afterAll, describe, expect, it } from "vitest";
import type { QuarryEvent, Usage } from "../../../functions/src/agent";
import { closeWarehouses } from "../../../functions/src/tools";
import { byRole, smartScript } from "../../support/scripted-model-script";
import { harness, runTurn } from "./harness";

afterAll(() => closeWarehouses());

const usageOf = (events: QuarryEvent[]) =>
  events.filter((e): e is Extract<QuarryEvent, { type: "usage" }> => e.type === "usage");

describe("memory", () => {
  it("lets the second turn see the first", async () => {
    const h = await harness(smartScript());
    await runTurn(h, "t-mem", "How many orders are there?");
    const out = await runTurn(h, "t-mem", "And how many customers?");
    expect(out.error).toBeUndefined();
    const planner = h.model.callsBy("planner").at(-1)!.request;
    const texts = planner.turns.map((t) => `${t.role}:${t.text}`);
    expect(texts[0]).toBe("user:How many orders are there?");
    expect(texts[1]).toMatch(/^model:Here is what I found \(1 rows\) with `SELECT COUNT\(\*\) AS orders/);
    expect(texts[2]).toBe("user:And how many customers?");
    // Earlier turns reach the model as plain text, without their tool traffic.
    expect(planner.turns.slice(0, 2).every((t) => !t.toolCalls?.length)).toBe(true);
  });

  it("summarizes older turns when over budget and keeps the summary", async () => {
    const h = await harness(smartScript(), { env: { QUARRY_CONTEXT_TOKEN_BUDGET: "120" } });
    const first = await runTurn(h, "t-sum", "How many orders are there?");
    expect(h.model.callsBy("summarizer")).toHaveLength(0);
    expect(first.custom.some((e) => e.type === "phase" && e.phase === "summarizing")).toBe(false);

    const second = await runTurn(h, "t-sum", "And how many customers?");
    expect(h.model.callsBy("summarizer")).toHaveLength(1);
    expect(second.custom.some((e) => e.type === "phase" && e.phase === "summarizing")).toBe(true);
    const state = await h.graph.getState({ configurable: { thread_id: "t-sum" } });
    expect(state.values.summary).toBe("Summary: the user asked about How many orders are there?");
    const kept = state.values.messages as { getType(): string; content: unknown }[];
    expect(kept[0].getType()).toBe("human");
    expect(kept[0].content).toBe("And how many customers?");

    await runTurn(h, "t-sum", "Thanks!");
    const planner = h.model.callsBy("planner").at(-1)!.request;
    expect(planner.system).toContain(
      "Summary of the earlier conversation: Summary: the user asked about How many orders",
    );
  });
});

describe("custom events", () => {
  it("arrive in order with their payloads, and usage accumulates over the turn and the thread", async () => {
    const h = await harness(
      byRole({
        planner: [
          {
            toolCalls: [{ name: "bq_query", args: { sql: "SELECT 1 AS x WHERE 1 = 0" } }],
            usage: { input: 100, output: 10 },
          },
          {
            toolCalls: [{ name: "bq_query", args: { sql: "SELECT 42 AS answer" } }],
            usage: { input: 120, output: 12 },
          },
        ],
        generator: [{ text: "The answer is 42.", usage: { input: 200, output: 20 } }],
      }),
    );
    const out = await runTurn(h, "t-events", "What is the answer?");
    expect(out.error).toBeUndefined();
    const kinds = out.custom.map((e) => (e.type === "phase" ? `phase:${e.phase}` : e.type));
    expect(kinds).toEqual([
      "phase:ingress",
      "phase:planning",
      "usage",
      "phase:querying",
      "sql",
      "result",
      "usage",
      "phase:verifying",
      "retry",
      "phase:planning",
      "usage",
      "phase:querying",
      "sql",
      "result",
      "usage",
      "phase:verifying",
      "phase:answering",
      "computed",
      "usage",
      "phase:done",
    ]);
    const sqls = out.custom.filter((e) => e.type === "sql");
    expect(sqls.map((e) => e.type === "sql" && [e.sql, e.attempt])).toEqual([
      ["SELECT 1 AS x WHERE 1 = 0", 1],
      ["SELECT 42 AS answer", 2],
    ]);
    const result = out.custom.filter((e) => e.type === "result").at(-1);
    expect(result).toMatchObject({ rows: [{ answer: 42 }], columns: [{ name: "answer" }], totalRows: 1 });
    // The result's ref points at the ToolMessage that keeps it in state.
    const state = await h.graph.getState({ configurable: { thread_id: "t-events" } });
    const ref = result?.type === "result" ? result.ref : "";
    const toolMsg = (state.values.messages as { tool_call_id?: string; artifact?: { kind: string } }[]).find(
      (m) => m.tool_call_id === ref,
    );
    expect(toolMsg?.artifact?.kind).toBe("query");

    const usages = usageOf(out.custom);
    const last = usages.at(-1)!;
    const turn1: Usage = {
      inputTokens: 420,
      outputTokens: 42,
      totalTokens: 462,
      bytesBilled: 0,
      modelCalls: 3,
      toolCalls: 2,
    };
    expect(last.turn).toEqual(turn1);
    expect(last.thread).toEqual(turn1);
    // Monotonic within the turn.
    for (let i = 1; i < usages.length; i++) {
      expect(usages[i].turn.totalTokens).toBeGreaterThanOrEqual(usages[i - 1].turn.totalTokens);
    }

    // The script repeats its last replies for the second turn: planner queries, generator answers.
    const second = await runTurn(h, "t-events", "And again?");
    const secondLast = usageOf(second.custom).at(-1)!;
    expect(secondLast.thread.modelCalls).toBe(turn1.modelCalls + secondLast.turn.modelCalls);
    expect(secondLast.thread.totalTokens).toBe(turn1.totalTokens + secondLast.turn.totalTokens);
    const after = await h.graph.getState({ configurable: { thread_id: "t-events" } });
    expect(after.values.usage).toEqual(secondLast.thread);
  });
});

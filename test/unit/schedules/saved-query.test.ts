/**
 * A schedule's turn: the planner runs the saved SQL as one `bq_query` call and makes no model call;
 * what the verifier sends back is not re-planned (a failure gives up, an empty result is answered).
 */
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { beforeEach, describe, expect, it } from "vitest";
import type { AgentDeps } from "../../../functions/src/agent/deps";
import { makePlanner } from "../../../functions/src/agent/nodes/planner";
import type { QuarryStateType } from "../../../functions/src/agent/state";
import { PERSON_KEY } from "../../../functions/src/tools/person";
import { limitedScope } from "../../../functions/src/tools/scope";

const SQL = "SELECT count(*) AS n FROM shop.orders";
let modelCalls = 0;
const deps = {
  agent: { maxModelCalls: 6, maxRetries: 2, clarify: false },
  model: new Proxy({}, { get: () => () => void modelCalls++ }),
} as unknown as AgentDeps;

const config = (schedule?: { id: string; sql: string }): LangGraphRunnableConfig => ({
  configurable: { [PERSON_KEY]: { uid: "u1", email: null, scope: limitedScope(["shop"]), schedule } },
});

function state(over: Partial<QuarryStateType> = {}): QuarryStateType {
  return {
    messages: [new HumanMessage("How many orders?")],
    modelCalls: 0,
    retryCount: 0,
    verdict: null,
    systemContext: { now: "", dialect: "duckdb", dialectNote: "", tables: [] },
    ...over,
  } as QuarryStateType;
}

describe("the planner on a schedule's turn", () => {
  // Each case counts its own model calls: one that made a call fails, whatever ran before it.
  beforeEach(() => {
    modelCalls = 0;
  });

  it("calls bq_query with the saved SQL and no model", async () => {
    const update = await makePlanner(deps)(state(), config({ id: "s1", sql: SQL }));
    expect(modelCalls).toBe(0);
    expect(update.modelCalls).toBeUndefined();
    const [message] = update.messages as AIMessage[];
    expect(message.tool_calls).toEqual([expect.objectContaining({ name: "bq_query", args: { sql: SQL } })]);
  });

  it("gives up on a failed saved query instead of planning another", async () => {
    const replan = { action: "replan" as const, reason: 'column "total_renamed" does not exist' };
    const update = await makePlanner(deps)(
      state({ verdict: replan, retryCount: 1 }),
      config({ id: "s1", sql: SQL }),
    );
    expect(modelCalls).toBe(0);
    expect(update.messages).toBeUndefined();
    expect(update.verdict).toEqual({ action: "give_up", reason: expect.stringContaining("total_renamed") });
  });

  it("answers an empty result as it is", async () => {
    const update = await makePlanner(deps)(
      state({ verdict: { action: "replan" } }),
      config({ id: "s1", sql: SQL }),
    );
    expect(update.verdict).toEqual({ action: "answer" });
    expect(modelCalls).toBe(0);
  });
});

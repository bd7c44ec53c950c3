/**
 * Follow-up questions from the answer's own model call: the generator is asked for them, the
 * server sends them as a `suggestions` event and keeps them on the answer message, drops any that
 * name a table or column the prompt did not show, and the model-call count stays what it was.
 */
import { afterAll, describe, expect, it } from "vitest";
import { AIMessage } from "@langchain/core/messages";
import { closeWarehouses } from "../../../functions/src/tools";
import { FOLLOW_UPS_MARKER, splitFollowUps } from "../../../functions/src/contract/follow-ups";
import { namedIdentifiers, visibleFollowUps } from "../../../functions/src/agent/prompt-inputs/follow-ups";
import { byRole } from "../../support/scripted-model-script";
import { harness, runTurn } from "./harness";

afterAll(() => closeWarehouses());

const SQL = "SELECT channel, COUNT(*) AS orders FROM shop.orders GROUP BY channel ORDER BY orders DESC";

describe("splitFollowUps", () => {
  it("splits the answer from up to three questions after the marker", () => {
    const text = `Web leads.\n\n${FOLLOW_UPS_MARKER}\n- Revenue by channel?\n* Orders last year?\n1. Top products?\n- A fourth?`;
    expect(splitFollowUps(text)).toEqual({
      body: "Web leads.",
      followUps: ["Revenue by channel?", "Orders last year?", "Top products?"],
    });
  });

  it("holds back a marker still being typed, and leaves text without one alone", () => {
    expect(splitFollowUps("Web leads.\n:::fol").body).toBe("Web leads.");
    expect(splitFollowUps("Web leads.\n:::follow-ups").body).toBe("Web leads.");
    expect(splitFollowUps("Ratio 3:1 overall")).toEqual({ body: "Ratio 3:1 overall", followUps: [] });
    expect(splitFollowUps("a\n- b")).toEqual({ body: "a\n- b", followUps: [] });
  });

  it("drops duplicates, empty lines and overlong lines", () => {
    const long = "x".repeat(201);
    expect(
      splitFollowUps(`A\n${FOLLOW_UPS_MARKER}\n- Same?\n\n- same?\n- ${long}\n- Other?`).followUps,
    ).toEqual(["Same?", "Other?"]);
  });
});

describe("visibleFollowUps", () => {
  it("finds identifiers: dotted names, snake_case, backticks", () => {
    expect(namedIdentifiers("Revenue by `Region` from hr.salaries and order_date?")).toEqual([
      "region",
      "hr.salaries",
      "order_date",
    ]);
    expect(namedIdentifiers("Which channel grew fastest last year?")).toEqual([]);
  });

  it("keeps plain questions and ones naming what the prompt showed; drops the rest", () => {
    const shown = "Tables: shop.orders (order_id, channel, order_date)";
    expect(
      visibleFollowUps(
        [
          "Orders by channel last year?",
          "Orders by order_date?",
          "Salaries from hr.salaries by department?",
          "What is the average employee_salary?",
        ],
        shown,
      ),
    ).toEqual(["Orders by channel last year?", "Orders by order_date?"]);
  });
});

describe("the generator's follow-ups in a turn", () => {
  const answer = [
    "**Web** leads with the most orders.",
    "",
    FOLLOW_UPS_MARKER,
    "- What was revenue by channel last year?",
    "- How many shop.orders per channel by month?",
    "- Which hr.salaries are highest?",
  ].join("\n");

  it("asks for them in the generator's prompt, emits the visible ones and keeps them on the answer", async () => {
    const h = await harness(
      byRole({
        planner: [{ toolCalls: [{ name: "bq_query", args: { sql: SQL } }] }, { text: "Done." }],
        generator: [{ text: answer }],
      }),
    );
    const out = await runTurn(h, "t-follow", "Orders by channel?");
    expect(out.error).toBeUndefined();
    expect(h.model.callsBy("generator")[0].request.system).toContain(FOLLOW_UPS_MARKER);
    const expected = ["What was revenue by channel last year?", "How many shop.orders per channel by month?"];
    expect(out.custom.filter((e) => e.type === "suggestions")).toEqual([
      { type: "suggestions", questions: expected },
    ]);
    // The suggestions event comes after the answer's last token.
    const lastToken = out.all.map(([mode]) => mode).lastIndexOf("messages");
    const event = out.all.findIndex(
      ([mode, v]) => mode === "custom" && (v as { type?: string }).type === "suggestions",
    );
    expect(event).toBeGreaterThan(lastToken);
    const state = await h.graph.getState({ configurable: { thread_id: "t-follow" } });
    expect(state.values.finalAnswer).toBe("**Web** leads with the most orders.");
    const last = state.values.messages.at(-1) as AIMessage;
    expect(last.response_metadata.quarry_suggestions).toEqual(expected);
    // No extra model call: planner (query), planner (done) … and one generator call.
    expect(h.model.callsBy("generator")).toHaveLength(1);
  });

  it("sends no event when the answer has no follow-ups", async () => {
    const h = await harness(
      byRole({
        planner: [{ toolCalls: [{ name: "bq_query", args: { sql: SQL } }] }, { text: "Done." }],
        generator: [{ text: "Web leads." }],
      }),
    );
    const out = await runTurn(h, "t-none", "Orders by channel?");
    expect(out.custom.some((e) => e.type === "suggestions")).toBe(false);
  });
});

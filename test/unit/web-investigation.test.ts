/**
 * The page's chat reducer for an investigation: the plan interrupt makes the turn wait for the
 * person, their answer resumes it, step events become progress, the report arrives by event and,
 * after a reload, from the answer message's metadata.
 */
import { describe, expect, it } from "vitest";
import type { InvestigationReport, PlanReview } from "../../functions/src/contract/investigations";
import { chatReducer, EMPTY_CHAT, type ChatAction } from "../../web/src/chat/reducer";
import { turnsFromMessages } from "../../web/src/chat/model";
import { PLANTED_PLAN } from "../support/investigation-script";

const run = (actions: ChatAction[]) => actions.reduce(chatReducer, EMPTY_CHAT);
const review: PlanReview = {
  kind: "investigation_plan",
  plan: PLANTED_PLAN,
  parallel: 3,
  budget: { maxSteps: 8, bytes: 1e9, tokens: 60_000, seconds: 300 },
  howToAnswer: "run",
};
const report: InvestigationReport = {
  title: "Why revenue fell",
  summary: "It fell.",
  sections: [],
  notDone: [],
  writtenBy: "model",
  markdown: "# Why revenue fell\n\nIt fell.",
};
const step = (id: number, status: string): ChatAction => ({
  type: "stream",
  event: "custom",
  data: { type: "investigation_step", id, title: `Step ${id}`, kind: "compare", status, ref: `r${id}` },
});

describe("an investigation in the chat reducer", () => {
  const asked = run([
    { type: "submitted", key: "k1", question: "Why did revenue fall?" },
    { type: "stream", event: "values", data: { messages: [], __interrupt__: [{ value: review }] } },
    { type: "finished" },
  ]);

  it("waits for the person at the plan", () => {
    const turn = asked.turns[0];
    expect(turn.status).toBe("asking");
    expect(turn.investigation?.review?.plan.steps).toHaveLength(4);
    expect(turn.clarification).toBeUndefined();
  });

  it("resumes on the answer, shows progress in step order, and the report", () => {
    const done = [
      { type: "answered", answer: '{"drop":[3]}' } as ChatAction,
      step(2, "running"),
      step(1, "running"),
      step(2, "done"),
      { type: "stream", event: "custom", data: { type: "investigation_report", report } } as ChatAction,
      {
        type: "stream",
        event: "values",
        data: {
          messages: [
            { type: "human", content: "Why?" },
            { type: "ai", content: report.markdown, response_metadata: { quarry_investigation: report } },
          ],
        },
      } as ChatAction,
      { type: "finished" } as ChatAction,
    ].reduce(chatReducer, asked);
    const turn = done.turns[0];
    expect(turn.investigation?.answered).toBe('{"drop":[3]}');
    expect(turn.investigation?.steps.map((s) => `${s.id}:${s.status}`)).toEqual(["1:running", "2:done"]);
    expect(turn.investigation?.report).toEqual(report);
    expect(turn.answer).toBe(report.markdown);
    expect(turn.status).toBe("done");
  });

  it("after a reload, a thread waiting on a plan waits for the person again", () => {
    const loaded = chatReducer(EMPTY_CHAT, {
      type: "loaded",
      values: { messages: [{ type: "human", id: "h1", content: "Why?" }] },
      waiting: [review],
    });
    expect(loaded.turns[0].status).toBe("asking");
    expect(loaded.turns[0].investigation?.review?.plan.question).toBe(PLANTED_PLAN.question);
    const plain = chatReducer(EMPTY_CHAT, {
      type: "loaded",
      values: { messages: [{ type: "human", id: "h1", content: "Why?" }] },
      waiting: [{ kind: "clarification", question: "Which?" }],
    });
    expect(plain.turns[0].investigation).toBeUndefined();
  });

  it("finds the report on the stored answer after a reload", () => {
    const stored = {
      id: 1,
      ref: "inv-run-s1",
      sql: "SELECT 1",
      columns: [{ name: "change", type: "DOUBLE" }],
      rows: [{ change: -300 }],
      truncated: false,
    };
    const turns = turnsFromMessages([
      { type: "human", id: "h1", content: "Why?" },
      {
        type: "ai",
        id: "a1",
        content: report.markdown,
        response_metadata: { quarry_investigation: report, quarry_investigation_results: [stored] },
      },
    ]);
    expect(turns[0].status).toBe("done");
    expect(turns[0].investigation?.report?.title).toBe("Why revenue fell");
    // Each step's table and chart come back from the stored results.
    expect(turns[0].queries).toEqual([
      expect.objectContaining({ id: "inv-run-s1", sql: "SELECT 1", status: "done" }),
    ]);
    expect(turns[0].queries[0].result?.rows).toEqual([{ change: -300 }]);
  });
});

/**
 * `clarify`: when the planner calls `ask_user`, the run stops with LangGraph's `interrupt()` and
 * the question (with its choices) goes to the client as the stream's `__interrupt__`. The client
 * answers with `command: { resume: "<answer>" }` on the next run; the node then runs again from
 * its start (it has no side effects before the interrupt, so re-running it costs nothing), turns
 * the answer into the tool's result, and the planner carries on with it.
 *
 * At most one question per turn: a second `ask_user` in the same turn is answered by the node
 * itself ("decide with what you have") and the run does not stop again.
 */
import { ToolMessage, type ToolCall } from "@langchain/core/messages";
import { interrupt, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { ASK_USER } from "../ask-user";
import { emitPhase } from "../emit";
import { pendingToolCalls } from "../prompt-inputs/history";
import type { QuarryStateType, QuarryUpdate } from "../state";

/** What the client gets in the interrupt: the question, its choices, and the tool call it answers. */
export interface Clarification {
  kind: "clarification";
  question: string;
  choices: string[];
  toolCallId: string;
}

/** Cleans the model's arguments: a question and 0–4 distinct, non-empty choices of bounded length. */
export function clarificationOf(call: ToolCall): Clarification {
  const args = (call.args ?? {}) as { question?: unknown; choices?: unknown };
  const question = typeof args.question === "string" ? args.question.trim().slice(0, 500) : "";
  const raw = Array.isArray(args.choices) ? args.choices : [];
  const choices = [
    ...new Set(raw.filter((c): c is string => typeof c === "string").map((c) => c.trim().slice(0, 200))),
  ]
    .filter(Boolean)
    .slice(0, 4);
  return {
    kind: "clarification",
    question: question || "Could you say a little more about what you are looking for?",
    choices,
    toolCallId: call.id ?? "",
  };
}

/** The client's resume value as the user's answer: a string, or `{ answer }`. */
export function answerOf(resume: unknown): string {
  const value =
    typeof resume === "object" && resume !== null && "answer" in resume
      ? (resume as { answer: unknown }).answer
      : resume;
  const text = typeof value === "string" ? value : value == null ? "" : JSON.stringify(value);
  return text.trim().slice(0, 2_000);
}

export function makeClarify() {
  return async function clarify(
    state: QuarryStateType,
    config: LangGraphRunnableConfig,
  ): Promise<QuarryUpdate> {
    const calls = pendingToolCalls(state.messages);
    const ask = calls.find((c) => c.name === ASK_USER);
    const others = calls.filter((c) => c !== ask);
    const skipped = (c: ToolCall) =>
      new ToolMessage({
        content: "Not run: it was asked together with a question to the user. Call it again if still needed.",
        tool_call_id: c.id ?? "",
        name: c.name,
      });
    if (!ask) return { messages: others.map(skipped) };
    if (state.clarified) {
      return {
        messages: [
          new ToolMessage({
            content:
              "Not asked: you already asked the user once in this turn. Decide with what you have and say in " +
              "the answer which reading you chose.",
            tool_call_id: ask.id ?? "",
            name: ASK_USER,
          }),
          ...others.map(skipped),
        ],
      };
    }
    emitPhase(config, "asking");
    const answer = answerOf(interrupt<Clarification, unknown>(clarificationOf(ask)));
    return {
      phase: "asking",
      clarified: true,
      messages: [
        new ToolMessage({
          content: answer
            ? `The user answered: ${answer}`
            : "The user gave no answer. Decide with what you have and say which reading you chose.",
          tool_call_id: ask.id ?? "",
          name: ASK_USER,
        }),
        ...others.map(skipped),
      ],
    };
  };
}

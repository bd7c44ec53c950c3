/**
 * A scripted analyst conversation through a real StateGraph with a messages channel: each turn is
 * a human question, an AI tool call, a JSON tool result and an AI answer (no model involved).
 */
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { Annotation, END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";

const State = Annotation.Root({
  ...MessagesAnnotation.spec,
  turns: Annotation<number>({ reducer: (a, b) => a + b, default: () => 0 }),
});

/** A deterministic JSON tool result of about `bytes` bytes for turn `turn`. */
export function toolResult(turn: number, bytes: number): string {
  const rows: Array<{ day: string; region: string; revenue: number }> = [];
  let json = "";
  for (let i = 0; json.length < bytes; i++) {
    rows.push({
      day: `2024-01-${String((i % 28) + 1).padStart(2, "0")}`,
      region: `r${(turn * 7 + i) % 13}`,
      revenue: turn * 1000 + i,
    });
    json = JSON.stringify({ turn, rows });
  }
  return json.slice(0, bytes);
}

/**
 * Compiles the conversation graph on `checkpointer`. `result(turn)` is the tool's output for a
 * turn (defaults to a 5 KB JSON result).
 */
export function conversationGraph(
  checkpointer: BaseCheckpointSaver,
  result: (turn: number) => string = (t) => toolResult(t, 5 * 1024),
) {
  const agent = (state: typeof State.State) => {
    const last = state.messages[state.messages.length - 1];
    const turn = state.turns;
    if (last instanceof HumanMessage || last?.getType() === "human") {
      return {
        messages: [
          new AIMessage({
            content: "",
            tool_calls: [
              {
                id: `call-${turn}`,
                name: "bq_query",
                args: { sql: `SELECT * FROM sales WHERE turn = ${turn}` },
              },
            ],
          }),
        ],
      };
    }
    return { messages: [new AIMessage(`Turn ${turn}: revenue peaked in r${turn % 13}.`)] };
  };
  const tools = (state: typeof State.State) => {
    const turn = state.turns;
    return {
      messages: [new ToolMessage({ content: result(turn), tool_call_id: `call-${turn}`, name: "bq_query" })],
    };
  };
  const route = (state: typeof State.State): "tools" | typeof END => {
    const last = state.messages[state.messages.length - 1] as AIMessage;
    return last.tool_calls?.length ? "tools" : END;
  };
  return new StateGraph(State)
    .addNode("agent", agent)
    .addNode("tools", tools)
    .addEdge(START, "agent")
    .addConditionalEdges("agent", route, ["tools", END])
    .addEdge("tools", "agent")
    .compile({ checkpointer });
}

/** The input of turn `turn` (1-based). */
export function turnInput(turn: number): { messages: BaseMessage[]; turns: number } {
  return { messages: [new HumanMessage(`Question ${turn}: how did revenue do?`)], turns: 1 };
}

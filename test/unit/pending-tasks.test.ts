/**
 * `hasPendingTasks` decides whether a turn may go in as a Command: on checkpoints LangGraph itself
 * wrote (MemorySaver), a finished run has none, a run stopped between nodes has the next node's.
 */
import { Annotation, END, MemorySaver, START, StateGraph, messagesStateReducer } from "@langchain/langgraph";
import type { BaseMessage } from "@langchain/core/messages";
import { hasPendingTasks } from "../../functions/src/http/runs/checkpointer";

const State = Annotation.Root({
  messages: Annotation<BaseMessage[]>({ reducer: messagesStateReducer, default: () => [] }),
});

function graph(saver: MemorySaver) {
  return new StateGraph(State)
    .addNode("ingress", () => ({}))
    .addNode("generator", () => ({ messages: [{ type: "ai", content: "answer" } as never] }))
    .addEdge(START, "ingress")
    .addEdge("ingress", "generator")
    .addEdge("generator", END)
    .compile({ checkpointer: saver });
}

const input = { messages: [{ type: "human", content: "q" } as never] };

describe("hasPendingTasks", () => {
  it("is false without a checkpoint and after a finished run", async () => {
    expect(hasPendingTasks(undefined)).toBe(false);
    const saver = new MemorySaver();
    const cfg = { configurable: { thread_id: "done" } };
    await graph(saver).invoke(input, cfg);
    expect(hasPendingTasks((await saver.getTuple(cfg))!.checkpoint)).toBe(false);
  });

  it("is true when a run stopped before a node ran, as LangGraph's own `next` says", async () => {
    const saver = new MemorySaver();
    const cfg = { configurable: { thread_id: "stopped" } };
    const g = graph(saver);
    await g.invoke(input, { ...cfg, interruptBefore: ["generator"] });
    expect((await g.getState(cfg)).next).toEqual(["generator"]);
    expect(hasPendingTasks((await saver.getTuple(cfg))!.checkpoint)).toBe(true);
    // The input checkpoint of a run (START's task pending) counts too.
    const history = [];
    for await (const t of saver.list(cfg)) history.push(t);
    const inputCheckpoint = history.find((t) => t.metadata?.source === "input")!;
    expect(hasPendingTasks(inputCheckpoint.checkpoint)).toBe(true);
  });
});

/**
 * The LangGraph internals the run lifecycle relies on (functions/src/runs/langgraph-internals.ts),
 * checked against LangGraph itself, so an upgrade that changes them fails here:
 * - `hasPendingTasks` decides whether a turn may go in as a Command: on checkpoints LangGraph itself
 *   wrote (MemorySaver), a finished run has none, a run stopped between nodes has the next node's.
 * - `NULL_TASK_ID` is the task id LangGraph gives a Command's update writes.
 */
import { describe, it, expect } from "vitest";
import type { RunnableConfig } from "@langchain/core/runnables";
import {
  Annotation,
  Command,
  END,
  MemorySaver,
  START,
  StateGraph,
  messagesStateReducer,
} from "@langchain/langgraph";
import type { PendingWrite } from "@langchain/langgraph-checkpoint";
import type { BaseMessage } from "@langchain/core/messages";
import { NULL_TASK_ID, hasPendingTasks } from "../../functions/src/runs/langgraph-internals";

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

/** A MemorySaver that records the task id of every putWrites, with the channels written. */
class RecordingSaver extends MemorySaver {
  recorded: Array<{ taskId: string; channels: string[] }> = [];
  override async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string): Promise<void> {
    this.recorded.push({ taskId, channels: writes.map(([c]) => c) });
    return super.putWrites(config, writes, taskId);
  }
}

describe("NULL_TASK_ID", () => {
  it("is the task id of a Command's update writes, and of no node's task", async () => {
    const saver = new RecordingSaver();
    const cfg = { configurable: { thread_id: "command" } };
    const g = graph(saver);
    await g.invoke(input, cfg);
    saver.recorded = [];
    await g.invoke(new Command({ update: input, goto: "ingress" }), cfg);
    const nullTask = saver.recorded.filter((w) => w.taskId === NULL_TASK_ID);
    expect(nullTask.flatMap((w) => w.channels)).toContain("messages");
    // The nodes' own writes come with their tasks' ids.
    expect(saver.recorded.some((w) => w.taskId !== NULL_TASK_ID)).toBe(true);
  });
});

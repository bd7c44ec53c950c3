/** What a stopped run leaves behind: what had streamed of an answer stopped midway is kept as the turn's last message. */
import type { QuarryGraph } from "../agent/index.js";

/**
 * What the user saw of an answer stopped midway stays in the thread: the stopped graph is closed
 * first, then the partial answer is added as the turn's last message (marked `quarry_stopped`), as
 * if the turn had ended there — so the next turn starts clean and a reload shows what was shown.
 */
export async function keepStoppedAnswer(
  graph: QuarryGraph,
  threadId: string,
  partial: { id?: string; text: string },
  iterator: AsyncIterator<unknown> | undefined,
): Promise<void> {
  await iterator?.return?.().catch(() => {});
  const { AIMessage } = await import("@langchain/core/messages");
  const message = new AIMessage({
    content: partial.text,
    ...(partial.id ? { id: partial.id } : {}),
    response_metadata: { quarry_stopped: true },
  });
  await graph.updateState(
    { configurable: { thread_id: threadId, checkpoint_ns: "" } },
    { messages: [message], finalAnswer: partial.text, phase: "done" },
    "summarizer",
  );
}

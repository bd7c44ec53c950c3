/**
 * What a stopped run leaves behind, and how storage failures are worded: the answer's tokens are
 * told apart from nodes' finished messages, and what had streamed of an answer stopped midway is
 * kept as the turn's last message.
 */
import * as logger from "firebase-functions/logger";
import type { QuarryGraph } from "../../agent/index.js";
import { QuarryError } from "../../errors";
import { StorageTimeout } from "../within";

/**
 * A Firestore failure or timeout as `unavailable:storage`; anything else as is. `midRun`: the run
 * had its lease, so the user's message is stored (and the error is one whatever its cause).
 */
export function storageError(err: unknown, midRun = false): unknown {
  const e = err as { code?: unknown; name?: string } | undefined;
  const fromStorage =
    midRun ||
    err instanceof StorageTimeout ||
    typeof e?.code === "number" ||
    e?.name === "FirestoreCheckpointerError";
  if (!fromStorage) return err;
  logger.warn("storage failure", { err: String((err as Error)?.stack ?? err) });
  return new QuarryError(
    "unavailable:storage",
    midRun
      ? "Quarry lost contact with its database during this answer, so it stopped. Your question is saved; " +
          "ask again in a few seconds."
      : "Quarry could not reach its database, so the question was not taken: send it again in a few seconds.",
  );
}

/** The run name of the generator's model call (model-call.ts: `quarry_<node>`), on its tokens' metadata. */
export const GENERATOR_CALL = "quarry_generator";

/**
 * Whether a `messages` item is a streamed AI token (a chunk), not a node's finished message. Duck
 * typed: in the compiled (CommonJS) function, a provider loaded as ESM makes its chunks with the
 * other build of @langchain/core, whose classes `AIMessageChunk.isInstance` does not recognise.
 */
export function isAiChunk(m: unknown): m is { id?: string; content: unknown } {
  const x = m as { type?: unknown; _getType?: () => string; concat?: unknown } | null;
  if (!x || typeof x !== "object" || typeof x.concat !== "function") return false;
  return x.type === "ai" || x._getType?.() === "ai";
}

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

/**
 * `summarizer`: when the history exceeds the context budget, folds the turns before the latest one
 * into the running summary and removes them from the message list; otherwise it does nothing (no
 * model call). It ends every turn, so it also announces the `done` phase.
 */
import { HumanMessage, RemoveMessage } from "@langchain/core/messages";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { AgentDeps } from "../deps";
import { emitPhase, emitUsage } from "../emit";
import { callModel } from "../model-call";
import { messageText, splitForSummary, transcript } from "../prompt-inputs/history";
import { usageOfModelCall } from "../prompt-inputs/usage";
import { SUMMARIZER_PROMPT, fill } from "../prompts";
import type { QuarryStateType, QuarryUpdate } from "../state";

export function makeSummarizer(deps: AgentDeps) {
  return async function summarizer(
    state: QuarryStateType,
    config: LangGraphRunnableConfig,
  ): Promise<QuarryUpdate> {
    const { older } = splitForSummary(state.messages, state.summary, deps.agent.contextTokenBudget);
    if (older.length === 0) {
      emitPhase(config, "done");
      return { phase: "done" };
    }
    emitPhase(config, "summarizing", `${older.length} older messages`);
    const prompt = fill(SUMMARIZER_PROMPT, {
      summary: state.summary || "(none yet)",
      turns: transcript(older),
    });
    const reply = await callModel(deps, config, { node: "summarizer", messages: [new HumanMessage(prompt)] });
    const delta = usageOfModelCall(reply);
    emitUsage(config, state, delta);
    emitPhase(config, "done");
    return {
      phase: "done",
      summary: messageText(reply).trim(),
      messages: older.filter((m) => m.id).map((m) => new RemoveMessage({ id: m.id as string })),
      modelCalls: state.modelCalls + 1,
      usage: delta,
    };
  };
}

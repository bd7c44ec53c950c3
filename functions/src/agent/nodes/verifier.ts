/**
 * `verifier`: judges the latest batch of tool results without a model call. Errors, empty results
 * and sums across a declared one-to-many join (fan-out) send the planner back with a concrete
 * refinement while retries remain; when they run out
 * the generator explains what failed. Schema-only batches go back to the planner (not a retry).
 * With `adequacyCheck` on, a non-empty result is also checked by the model.
 */
import { HumanMessage } from "@langchain/core/messages";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { teamContext, type AgentDeps } from "../deps";
import { emit, emitPhase, emitUsage } from "../emit";
import { callModel } from "../model-call";
import { latestQuestion, messageText } from "../prompt-inputs/history";
import {
  digestResults,
  failureSummary,
  findProblems,
  hasRows,
  refinementForBatch,
} from "../prompt-inputs/results";
import { usageOfModelCall } from "../prompt-inputs/usage";
import { ADEQUACY_PROMPT, fill } from "../prompts";
import type { QuarryStateType, QuarryUpdate, TurnResult } from "../state";

/** The results of the executor's latest batch (the tool calls of the last AI message). */
function latestBatch(state: QuarryStateType): TurnResult[] {
  const ids = new Set<string>();
  for (let i = state.messages.length - 1; i >= 0; i--) {
    const m = state.messages[i];
    if (m.getType() !== "tool") break;
    ids.add((m as unknown as { tool_call_id: string }).tool_call_id);
  }
  return state.turnResults.filter((r) => ids.has(r.toolCallId));
}

export function makeVerifier(deps: AgentDeps) {
  return async function verifier(
    state: QuarryStateType,
    config: LangGraphRunnableConfig,
  ): Promise<QuarryUpdate> {
    emitPhase(config, "verifying");
    const batch = latestBatch(state);
    const { knowledge } = await teamContext(deps);
    const found = findProblems(
      batch,
      knowledge?.declaredJoins() ?? [],
      state.systemContext?.definitions ?? [],
    );
    const { maxRetries } = deps.agent;
    // Out of retries, stated facts that do not match their SQL are not worth losing the rows over:
    // the answer goes out without them (computedFacts leaves them out), never with them.
    const problems =
      state.retryCount >= maxRetries ? found.filter((p) => p.kind !== "unsupported_facts") : found;

    if (problems.length > 0) {
      if (state.retryCount >= maxRetries) {
        const what = failureSummary(problems);
        return {
          phase: "verifying",
          verdict: { action: "give_up", reason: `after ${maxRetries} retries, ${what}` },
        };
      }
      const attempt = state.retryCount + 1;
      const reason = refinementForBatch(problems);
      emit(config, { type: "retry", attempt, maxRetries, reason });
      return { phase: "verifying", retryCount: attempt, verdict: { action: "replan", reason } };
    }

    if (!hasRows(batch)) return { phase: "verifying", verdict: { action: "replan" } };

    if (
      deps.agent.adequacyCheck &&
      state.retryCount < maxRetries &&
      state.modelCalls + 3 <= deps.agent.maxModelCalls
    ) {
      const prompt = fill(ADEQUACY_PROMPT, {
        question: latestQuestion(state.messages),
        digest: digestResults(batch, deps.digestChars),
      });
      const reply = await callModel(deps, config, { node: "verifier", messages: [new HumanMessage(prompt)] });
      const delta = usageOfModelCall(reply);
      emitUsage(config, state, delta);
      const verdictText = messageText(reply).trim();
      const counted = { phase: "verifying" as const, modelCalls: state.modelCalls + 1, usage: delta };
      if (/^no\b/i.test(verdictText)) {
        const attempt = state.retryCount + 1;
        const reason = `The result does not answer the question: ${verdictText.replace(/^no[\s:,.-]*/i, "")}`;
        emit(config, { type: "retry", attempt, maxRetries, reason });
        return { ...counted, retryCount: attempt, verdict: { action: "replan", reason } };
      }
      return { ...counted, verdict: { action: "answer" } };
    }
    return { phase: "verifying", verdict: { action: "answer" } };
  };
}

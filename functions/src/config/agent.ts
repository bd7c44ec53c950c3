/** The agent's budget per turn: re-plans, model calls, history, and what it may ask. */
import { docsOf, flag, int, readAll, type Env } from "./define";

export interface AgentConfig {
  /** Re-plans after an error or empty result before the generator explains what failed. */
  maxRetries: number;
  /** Hard cap on model calls in one turn. */
  maxModelCalls: number;
  /** History above this many (estimated) tokens is summarized. */
  contextTokenBudget: number;
  /** Ask the model whether a non-empty result answers the question. */
  adequacyCheck: boolean;
  /** Let the planner ask the user one clarifying question per turn (`ask_user`); on unless false. */
  clarify?: boolean;
}

const concern = "agent";

const AGENT_SETTINGS = {
  maxRetries: int("QUARRY_MAX_RETRIES", {
    concern,
    default: 2,
    description: "Re-plans after an error or empty result.",
  }),
  maxModelCalls: int("QUARRY_MAX_MODEL_CALLS", {
    concern,
    default: 8,
    description: "Hard cap on model calls in one turn.",
  }),
  contextTokenBudget: int("QUARRY_CONTEXT_TOKEN_BUDGET", {
    concern,
    default: 24_000,
    description: "History above this (estimated tokens) is summarized.",
  }),
  adequacyCheck: flag("QUARRY_ADEQUACY_CHECK", {
    concern,
    default: false,
    description: "Ask the model whether a result answers the question.",
  }),
  clarify: flag("QUARRY_CLARIFY", {
    concern,
    default: true,
    description:
      "Let the agent ask one clarifying question per turn when the context cannot settle an ambiguity; `false` never asks.",
  }),
} as const;

/** The agent settings from an environment. */
export function readAgentConfig(env: Env): AgentConfig {
  return readAll(AGENT_SETTINGS, env);
}

export const AGENT_DOCS = docsOf(AGENT_SETTINGS);

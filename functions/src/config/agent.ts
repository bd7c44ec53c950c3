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
  /** Investigations (docs/investigations.md): plan size, parallel steps and the budget per investigation. */
  investigation: {
    maxSteps: number;
    parallel: number;
    bytes: number;
    tokens: number;
    seconds: number;
  };
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

const INVESTIGATION_SETTINGS = {
  maxSteps: int("QUARRY_INVESTIGATION_MAX_STEPS", {
    concern,
    default: 8,
    min: 1,
    max: 20,
    description: "Most steps an investigation's plan may have; a longer plan is refused.",
  }),
  parallel: int("QUARRY_INVESTIGATION_PARALLEL", {
    concern,
    default: 3,
    min: 1,
    max: 8,
    description: "Steps of an investigation that run at once.",
  }),
  bytes: int("QUARRY_INVESTIGATION_BYTES", {
    concern,
    default: 20 * 1024 ** 3,
    min: 0,
    description:
      "Bytes an investigation's steps may bill in all; a step whose dry run does not fit what is left is not run.",
  }),
  tokens: int("QUARRY_INVESTIGATION_TOKENS", {
    concern,
    default: 60_000,
    min: 0,
    description:
      "Model tokens an investigation may use; once spent, Quarry writes the report from the results without the model.",
  }),
  seconds: int("QUARRY_INVESTIGATION_SECONDS", {
    concern,
    default: 300,
    min: 1,
    description: "Wall time for an investigation's steps; steps not started by then are not run.",
  }),
} as const;

/** The agent settings from an environment. */
export function readAgentConfig(env: Env): AgentConfig {
  return { ...readAll(AGENT_SETTINGS, env), investigation: readAll(INVESTIGATION_SETTINGS, env) };
}

export const AGENT_DOCS = [...docsOf(AGENT_SETTINGS), ...docsOf(INVESTIGATION_SETTINGS)];

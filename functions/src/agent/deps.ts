/** What the nodes need besides state: the model, the tools and the agent's settings. */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { AgentConfig } from "../config";

export interface AgentDeps {
  model: BaseChatModel;
  tools: StructuredToolInterface[];
  agent: AgentConfig;
  /** A tool call running longer than this becomes a `timeout` tool error. */
  toolTimeoutMs: number;
  /** Characters of tool results the generator sees. */
  digestChars: number;
  /** SQL dialect the prompt names, and the warehouse's note on it. */
  dialect: { name: string; note: string };
  /** Clock, injectable so prompts are reproducible in tests. */
  now: () => Date;
}

/**
 * Stands in for the model to see what the planner is given: records the first prompt it gets and
 * stops the turn there (no model is called). Used by `npm run context` and the linking bench.
 */
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";

/** Thrown to stop the turn once the prompt is recorded. */
export class PromptCaptured extends Error {
  constructor() {
    super("prompt captured");
    this.name = "PromptCaptured";
  }
}

export class PromptRecorder extends BaseChatModel {
  prompt: BaseMessage[] | undefined;
  _llmType() {
    return "prompt-recorder";
  }
  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    this.prompt ??= messages;
    throw new PromptCaptured();
  }
  override bindTools() {
    return this as never;
  }
}

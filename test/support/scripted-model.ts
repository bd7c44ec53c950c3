/**
 * An in-process chat model driven by a Script (scripted-model-script.ts): it can answer with tool
 * calls, then text, streams text token by token (so LangGraph's `messages` mode sees real chunks)
 * and reports usage. The stock fake models cannot script "tool call, then answer".
 */
import { BaseChatModel, type BaseChatModelCallOptions } from "@langchain/core/language_models/chat_models";
import { AIMessage, AIMessageChunk, type BaseMessage } from "@langchain/core/messages";
import { ChatGenerationChunk, type ChatResult } from "@langchain/core/outputs";
import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import type { StructuredToolInterface } from "@langchain/core/tools";
import {
  roleOf,
  type Script,
  type ScriptReply,
  type ScriptRequest,
  type ScriptTurn,
} from "./scripted-model-script";

interface CallOptions extends BaseChatModelCallOptions {
  tools?: StructuredToolInterface[];
}

/** One recorded call: what the model was asked and what it replied. */
export interface RecordedCall {
  request: ScriptRequest;
  reply: ScriptReply;
  tags: string[];
  streamed: boolean;
}

/** Thrown for a scripted `error` reply. */
class ScriptedModelError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = "ScriptedModelError";
  }
}

export class ScriptedChatModel extends BaseChatModel<CallOptions> {
  readonly calls: RecordedCall[] = [];
  private readonly script: Script;
  private toolCallCounter = 0;

  constructor(script: Script) {
    super({});
    this.script = script;
  }

  _llmType(): string {
    return "scripted";
  }

  override bindTools(tools: StructuredToolInterface[]) {
    return this.withConfig({ tools } as Partial<CallOptions>);
  }

  private async reply(
    messages: BaseMessage[],
    options: CallOptions,
    streamed: boolean,
    runManager?: CallbackManagerForLLMRun,
  ): Promise<AIMessage> {
    const request = toRequest(messages, options.tools ?? [], this.calls.length);
    const reply = await this.script(request);
    // Tags reach the model through its run manager (LangChain separates them from call options).
    this.calls.push({
      request,
      reply,
      tags: (runManager as unknown as { tags?: string[] } | undefined)?.tags ?? [],
      streamed,
    });
    if (reply.error) throw new ScriptedModelError(reply.error.status, reply.error.message);
    const input = reply.usage?.input ?? 10;
    const output = reply.usage?.output ?? Math.max(1, Math.ceil((reply.text ?? "").length / 4));
    return new AIMessage({
      content: reply.text ?? "",
      tool_calls: (reply.toolCalls ?? []).map((c) => ({
        id: `call_${++this.toolCallCounter}`,
        name: c.name,
        args: c.args,
        type: "tool_call" as const,
      })),
      usage_metadata: { input_tokens: input, output_tokens: output, total_tokens: input + output },
    });
  }

  async _generate(
    messages: BaseMessage[],
    options: CallOptions,
    runManager?: CallbackManagerForLLMRun,
  ): Promise<ChatResult> {
    const message = await this.reply(messages, options, false, runManager);
    return { generations: [{ message, text: typeof message.content === "string" ? message.content : "" }] };
  }

  override async *_streamResponseChunks(
    messages: BaseMessage[],
    options: CallOptions,
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    const message = await this.reply(messages, options, true, runManager);
    const text = typeof message.content === "string" ? message.content : "";
    const tokens = text.match(/\S+\s*|\s+/g) ?? [];
    for (const token of tokens) {
      options.signal?.throwIfAborted();
      const chunk = new ChatGenerationChunk({ text: token, message: new AIMessageChunk({ content: token }) });
      yield chunk;
      await runManager?.handleLLMNewToken(token, undefined, undefined, undefined, undefined, { chunk });
    }
    // The last chunk carries tool calls and usage, as real providers do.
    const last = new AIMessageChunk({
      content: "",
      tool_call_chunks: (message.tool_calls ?? []).map((c, index) => ({
        id: c.id,
        name: c.name,
        args: JSON.stringify(c.args),
        index,
        type: "tool_call_chunk" as const,
      })),
      usage_metadata: message.usage_metadata,
    });
    yield new ChatGenerationChunk({ text: "", message: last });
  }

  /** Calls made by one role, e.g. `model.callsBy("generator")`. */
  callsBy(role: ScriptRequest["role"]): RecordedCall[] {
    return this.calls.filter((c) => c.request.role === role);
  }
}

function textOf(m: BaseMessage): string {
  if (typeof m.content === "string") return m.content;
  return m.content.map((p) => (typeof p === "string" ? p : p.type === "text" ? String(p.text) : "")).join("");
}

/** LangChain messages → the script's normalised request. */
function toRequest(messages: BaseMessage[], tools: StructuredToolInterface[], call: number): ScriptRequest {
  let system = "";
  const turns: ScriptTurn[] = [];
  for (const m of messages) {
    const type = m.getType();
    if (type === "system") system += textOf(m);
    else if (type === "human") turns.push({ role: "user", text: textOf(m) });
    else if (type === "ai") {
      const calls = (m as AIMessage).tool_calls ?? [];
      turns.push({
        role: "model",
        text: textOf(m),
        toolCalls: calls.map((c) => ({ name: c.name, args: c.args })),
      });
    } else if (type === "tool") turns.push({ role: "tool", text: textOf(m), toolName: m.name });
  }
  const role = roleOf(system || turns[0]?.text || "");
  return { role, system, turns, tools: tools.map((t) => t.name), call };
}

/**
 * Pure views over the message history: where the current turn starts, the earlier conversation as
 * plain text turns, pending tool calls, and token estimates for the context budget.
 */
import { AIMessage, HumanMessage, type BaseMessage, type ToolCall } from "@langchain/core/messages";
import { isAttachment } from "../model/content";

/** Plain text of a message's content (text parts only). */
export function messageText(m: BaseMessage): string {
  if (typeof m.content === "string") return m.content;
  return m.content
    .map((part) => (typeof part === "string" ? part : part.type === "text" ? String(part.text) : ""))
    .join("");
}

const isHuman = (m: BaseMessage) => m.getType() === "human";
const isAi = (m: BaseMessage): m is AIMessage => m.getType() === "ai";

/** Index of the message that started the current turn (the last human message), or -1. */
export function turnStartIndex(messages: BaseMessage[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (isHuman(messages[i])) return i;
  return -1;
}

/** The current turn: the last human message and everything after it. */
export function currentTurn(messages: BaseMessage[]): BaseMessage[] {
  const i = turnStartIndex(messages);
  return i < 0 ? [] : messages.slice(i);
}

/** The user's latest question, as text. */
export function latestQuestion(messages: BaseMessage[]): string {
  const i = turnStartIndex(messages);
  return i < 0 ? "" : messageText(messages[i]);
}

/**
 * Earlier turns as plain human/AI text messages: tool calls and tool results of past turns are
 * dropped (their conclusions are in the answers), which keeps prompts small and valid for models
 * that reject function-call history without the matching tools.
 */
export function priorConversation(messages: BaseMessage[]): BaseMessage[] {
  return plainTurns(messages.slice(0, Math.max(turnStartIndex(messages), 0)));
}

/**
 * Human questions and AI answers as plain text messages, without tool traffic. A question's images
 * and PDFs are named, not sent again ("[image: q2.png]"): the earlier turns keep the fact that
 * something was shown without its bytes in every later prompt.
 */
function plainTurns(messages: BaseMessage[]): BaseMessage[] {
  const out: BaseMessage[] = [];
  for (const m of messages) {
    const text = isHuman(m)
      ? [messageText(m), ...attachmentNotes(m)].filter(Boolean).join(" ")
      : messageText(m);
    if (!text) continue;
    if (isHuman(m)) out.push(new HumanMessage(text));
    else if (isAi(m) && !m.tool_calls?.length) out.push(new AIMessage(text));
  }
  return out;
}

/** The question as the model reads it: its text, with its images and PDFs (for the current turn). */
export function questionWithAttachments(m: BaseMessage): BaseMessage {
  const parts = Array.isArray(m.content) ? m.content.filter(isAttachment) : [];
  if (!parts.length) return new HumanMessage(messageText(m));
  const text = messageText(m);
  return new HumanMessage({ content: [...(text ? [{ type: "text", text }] : []), ...parts] });
}

/** "[image: q2.png]", "[PDF: report.pdf]": what a question carried, by name. */
function attachmentNotes(m: BaseMessage): string[] {
  if (!Array.isArray(m.content)) return [];
  return m.content.filter(isAttachment).map((p) => {
    const name = p.metadata?.name ?? p.metadata?.filename;
    const kind = p.type === "image" ? "image" : "PDF";
    return `[${kind}${typeof name === "string" && name ? `: ${name}` : ""}]`;
  });
}

/**
 * The clarifying question asked in the current turn (an `ask_user` call) and the user's answer
 * (its tool message), if one was asked and answered.
 */
export function turnClarification(messages: BaseMessage[]): { question: string; answer: string } | null {
  const turn = currentTurn(messages);
  for (const m of turn) {
    if (!isAi(m)) continue;
    const call = m.tool_calls?.find((c) => c.name === "ask_user");
    if (!call) continue;
    const reply = turn.find(
      (t) => t.getType() === "tool" && (t as unknown as { tool_call_id?: string }).tool_call_id === call.id,
    );
    if (!reply) return null;
    const question = typeof call.args?.question === "string" ? call.args.question : "";
    return { question, answer: messageText(reply) };
  }
  return null;
}

/** Tool calls of the last AI message that have no tool message answering them yet. */
export function pendingToolCalls(messages: BaseMessage[]): ToolCall[] {
  const lastMsg = messages[messages.length - 1];
  if (!lastMsg || !isAi(lastMsg)) return [];
  return lastMsg.tool_calls ?? [];
}

/**
 * Rough token estimate (4 characters per token): budgets need a bound, not an exact count. A
 * question's images and PDFs count by their data, so a turn that carried one is soon folded into
 * the summary (which names it) instead of staying in the state — and in every `values` a client is
 * sent — for the rest of the conversation.
 */
export function estimateTokens(messages: BaseMessage[], summary = ""): number {
  let chars = summary.length;
  for (const m of messages) {
    chars += messageText(m).length;
    if (isAi(m) && m.tool_calls?.length) chars += JSON.stringify(m.tool_calls).length;
    if (Array.isArray(m.content)) {
      for (const p of m.content.filter(isAttachment)) {
        chars += typeof p.data === "string" ? p.data.length : 0;
      }
    }
  }
  return Math.ceil(chars / 4);
}

/**
 * Splits the history for summarization: everything before the latest turn may be folded into the
 * summary; the latest turn stays verbatim. Returns no `older` messages when within budget.
 */
export function splitForSummary(
  messages: BaseMessage[],
  summary: string,
  budgetTokens: number,
): { older: BaseMessage[]; keep: BaseMessage[] } {
  if (estimateTokens(messages, summary) <= budgetTokens) return { older: [], keep: messages };
  const start = Math.max(turnStartIndex(messages), 0);
  return { older: messages.slice(0, start), keep: messages.slice(start) };
}

/** Older turns as a transcript for the summarizer prompt. */
export function transcript(messages: BaseMessage[]): string {
  return plainTurns(messages)
    .map((m) => `${isHuman(m) ? "User" : "Quarry"}: ${messageText(m)}`)
    .join("\n");
}

/**
 * State as v2 sends it (`values` events, `state.get`): the thread's output channels with each
 * message lean — its type, content, id and the fields a client reads (name, tool calls, a tool
 * message's call id, status and artifact, non-empty response metadata); provider kwargs, usage
 * and chunk details stay on the server. Within a run's stream, a message already carried whole goes
 * as a reference (`referencing`), and the turn's end is whole (`endsTurn`).
 */
const MESSAGE_TYPES = new Set(["human", "ai", "system", "tool", "remove"]);
const KEPT = [
  "id",
  "name",
  "tool_calls",
  "invalid_tool_calls",
  "tool_call_id",
  "status",
  "artifact",
] as const;

function leanMessage(m: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { type: m.type, content: m.content ?? "" };
  for (const k of KEPT) {
    const v = m[k];
    if (v !== undefined && v !== null && !(Array.isArray(v) && v.length === 0)) out[k] = v;
  }
  const meta = m.response_metadata;
  if (meta && typeof meta === "object" && Object.keys(meta).length) out.response_metadata = meta;
  return out;
}

const isMessage = (v: unknown): v is Record<string, unknown> =>
  !!v && typeof v === "object" && MESSAGE_TYPES.has(String((v as { type?: unknown }).type));

/** A state's values with its messages lean (and no `__interrupt__`: it travels as `input.requested`). */
export function leanState(values: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(values ?? {})) {
    if (k === "__interrupt__") continue;
    out[k] = k === "messages" && Array.isArray(v) ? v.map((m) => (isMessage(m) ? leanMessage(m) : m)) : v;
  }
  return out;
}

export function roleOf(type: unknown): "ai" | "human" | "system" | "tool" {
  // "AIMessageChunk", "ai", "human", "tool" …
  const t = String(type ?? "ai")
    .replace(/Chunk$/, "")
    .toLowerCase();
  if (t.startsWith("human")) return "human";
  if (t.startsWith("system")) return "system";
  if (t.startsWith("tool")) return "tool";
  return "ai";
}

function blocksOf(content: unknown): Record<string, unknown>[] {
  if (typeof content === "string") return content ? [{ type: "text", text: content }] : [];
  if (!Array.isArray(content)) return [];
  return content.map((b) =>
    typeof b === "string" ? { type: "text", text: b } : (b as Record<string, unknown>),
  );
}

export function textOfBlocks(content: unknown): string {
  return blocksOf(content)
    .map((b) => (b.type === "text" && typeof b.text === "string" ? b.text : ""))
    .join("");
}

type Message = Record<string, unknown>;

export function messagesOf(state: Record<string, unknown>): Message[] {
  return Array.isArray(state.messages) ? (state.messages as Message[]) : [];
}

/**
 * Whether a state ends a turn: its last message is an AI message that calls no tool (the written
 * answer, a refusal). The graph's steps after it (the summarizer) change no message a client shows
 * but the ones it removes.
 */
export function endsTurn(state: Record<string, unknown>): boolean {
  const last = messagesOf(state).at(-1);
  return !!last && last.type === "ai" && !(Array.isArray(last.tool_calls) && last.tool_calls.length);
}

/**
 * The state with each message an earlier values event of the run carried whole as a reference:
 * its type, id (and a tool message's call id) with empty content. Every message keeps its place,
 * so a client still sees which messages the state holds (@langchain/react's `useStream` drops one
 * missing from the latest values); a client keeps the copy it has of a message it already holds
 * (the hook keeps its own unless values add tool calls or metadata, which a reference does not).
 */
export function referencing(state: Record<string, unknown>, carried: Set<string>): Record<string, unknown> {
  const messages = messagesOf(state);
  if (!messages.some((m) => typeof m.id === "string" && carried.has(m.id))) return state;
  return {
    ...state,
    messages: messages.map((m) =>
      typeof m.id === "string" && carried.has(m.id)
        ? {
            type: m.type,
            content: "",
            id: m.id,
            ...(m.type === "tool" ? { tool_call_id: m.tool_call_id } : {}),
          }
        : m,
    ),
  };
}

/** A node's update with its messages lean, as in values. */
export function leanUpdate(update: unknown): unknown {
  if (!update || typeof update !== "object" || Array.isArray(update)) return update;
  return leanState(update as Record<string, unknown>);
}

/**
 * State as v2 sends it (`values` events, `state.get`): the thread's output channels with each
 * message lean — its type, content, id and the fields a client reads (name, tool calls, a tool
 * message's call id, status and artifact, non-empty response metadata); provider kwargs, usage
 * and chunk details stay on the server.
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

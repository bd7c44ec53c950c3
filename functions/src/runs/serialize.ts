/**
 * LangChain objects → the plain JSON the Agent Server sends (never constructor objects), so the
 * SDK's `useStream` and any other client can read them.
 */
import type { BaseMessage } from "@langchain/core/messages";
import type { StateSnapshot } from "@langchain/langgraph";

interface Dictable {
  toDict(): { type: string; data: Record<string, unknown> };
}

function isMessage(v: unknown): v is BaseMessage & Dictable {
  return (
    typeof v === "object" &&
    v !== null &&
    typeof (v as Dictable).toDict === "function" &&
    typeof (v as { content?: unknown }).content !== "undefined"
  );
}

/** A message as `{ type, content, id, ... }` (the SDK's `toMessageDict` shape), lean ({@link leanMessage}). */
function messageToDict(m: BaseMessage, streamed: boolean): Record<string, unknown> {
  const { type, data } = (m as unknown as Dictable).toDict();
  return leanMessage({ ...data, type }, streamed);
}

const isEmpty = (v: unknown) =>
  v === null ||
  v === undefined ||
  (Array.isArray(v) && v.length === 0) ||
  (typeof v === "object" && !Array.isArray(v) && Object.keys(v as object).length === 0);

/**
 * A message dict without what no client reads and every client rebuilds: empty fields, the
 * provider-format copy of the tool calls in `additional_kwargs` (the message's own `tool_calls` hold
 * them), empty thought signatures, the library versions LangChain stamps on tool messages, and —
 * outside the `messages` stream, where a client concatenates chunks — the tool-call chunks a
 * message's `tool_calls` were parsed from. A client's message classes (LangChain's, the SDK's)
 * fill the missing fields with their defaults.
 */
function leanMessage(d: Record<string, unknown>, streamed: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(d)) {
    // A chunk made by the other build of @langchain/core (ESM provider, CommonJS function) hands
    // out its constructor fields too: LangChain's serialisation, not part of a message dict.
    if (k.startsWith("lc_")) continue;
    if (k === "content" || k === "type" || k === "id") out[k] = v;
    else if (k === "additional_kwargs") {
      const { tool_calls: _copy, signatures, ...rest } = (v ?? {}) as Record<string, unknown>;
      const signed = Array.isArray(signatures) && signatures.some((s) => s !== "");
      const kept = signed ? { ...rest, signatures } : rest;
      if (!isEmpty(kept)) out[k] = kept;
    } else if (k === "tool_call_chunks" && !streamed && Array.isArray(d.tool_calls) && d.tool_calls.length) {
      continue;
    } else if (k === "metadata" && v && typeof v === "object") {
      const { versions: _v, ...rest } = (v ?? {}) as Record<string, unknown>;
      if (!isEmpty(rest)) out[k] = rest;
    } else if (k === "usage_metadata" && v && typeof v === "object") {
      out[k] = Object.fromEntries(Object.entries(v).filter(([, x]) => !isEmpty(x)));
    } else if (!isEmpty(v)) out[k] = v;
  }
  return out;
}

/**
 * Deeply converts messages (and anything with toJSON) into plain JSON values. `streamed`: for the
 * `messages` stream (chunks a client concatenates).
 */
export function toPlain(value: unknown, streamed = false, depth = 0): unknown {
  if (depth > 50) return null;
  if (value === null || value === undefined) return value ?? null;
  if (isMessage(value)) return toPlain(messageToDict(value, streamed), streamed, depth + 1);
  if (Array.isArray(value)) return value.map((v) => toPlain(v, streamed, depth + 1));
  if (value instanceof Date) return value.toISOString();
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (typeof v === "function" || v === undefined) continue;
      out[k] = toPlain(v, streamed, depth + 1);
    }
    return out;
  }
  return value;
}

/** A StateSnapshot as the Agent Server's ThreadState. */
export function toThreadState(snap: StateSnapshot, threadId: string) {
  const cfg = snap.config?.configurable ?? {};
  const parent = snap.parentConfig?.configurable;
  return {
    values: toPlain(snap.values ?? {}),
    next: snap.next ?? [],
    tasks: (snap.tasks ?? []).map((t) => ({
      id: t.id,
      name: t.name,
      error: t.error ? String((t.error as Error).message ?? t.error) : null,
      interrupts: toPlain(t.interrupts ?? []),
      checkpoint: null,
      state: null,
    })),
    checkpoint: {
      thread_id: threadId,
      checkpoint_ns: (cfg.checkpoint_ns as string) ?? "",
      checkpoint_id: (cfg.checkpoint_id as string) ?? null,
      checkpoint_map: null,
    },
    metadata: toPlain(snap.metadata ?? {}),
    created_at: snap.createdAt ?? null,
    parent_checkpoint: parent
      ? {
          thread_id: threadId,
          checkpoint_ns: (parent.checkpoint_ns as string) ?? "",
          checkpoint_id: (parent.checkpoint_id as string) ?? null,
          checkpoint_map: null,
        }
      : null,
    // The questions the thread waits on (the Agent Server lists the tasks' interrupts here too).
    interrupts: toPlain((snap.tasks ?? []).flatMap((t) => t.interrupts ?? [])),
  };
}

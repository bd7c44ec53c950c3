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

/** A message as `{ type, content, id, ... }` (the SDK's `toMessageDict` shape). */
function messageToDict(m: BaseMessage): Record<string, unknown> {
  const { type, data } = (m as unknown as Dictable).toDict();
  return { ...data, type };
}

/** Deeply converts messages (and anything with toJSON) into plain JSON values. */
export function toPlain(value: unknown, depth = 0): unknown {
  if (depth > 50) return null;
  if (value === null || value === undefined) return value ?? null;
  if (isMessage(value)) return toPlain(messageToDict(value), depth + 1);
  if (Array.isArray(value)) return value.map((v) => toPlain(v, depth + 1));
  if (value instanceof Date) return value.toISOString();
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (typeof v === "function" || v === undefined) continue;
      out[k] = toPlain(v, depth + 1);
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

/**
 * Where the checkpointer's documents live and what they hold.
 *
 * ```
 * {root}/{thread}                        (no document; a parent for the two subcollections)
 * {root}/{thread}/checkpoints/{ns}!{id}  one per checkpoint: the checkpoint without its values,
 *                                        metadata, a reference per channel, and the pending writes
 * {root}/{thread}/blobs/{sha256/128}     content-addressed bytes (≤ 1 MB each) that references name
 * ```
 * Document ids are derived from the ids LangGraph gives, so a retried write lands on the same
 * document instead of creating a duplicate.
 */
import { createHash } from "node:crypto";
/** A channel version as LangGraph gives it. */
type ChannelVersion = number | string;

/** Subcollection of checkpoint documents under each thread. */
export const CHECKPOINTS = "checkpoints";
/** Subcollection of content-addressed blobs under each thread. */
export const BLOBS = "blobs";

/** One channel's entry in a checkpoint document: its version and the reference to its value. */
export interface ChannelEntry {
  v: ChannelVersion;
  r: Buffer;
}

/** One pending write in a checkpoint document. */
export interface WriteEntry {
  /** task id */
  t: string;
  /** task path (sort key, "" when unknown) */
  p: string;
  /** index of the write within its task; negative for special writes */
  i: number;
  /** channel */
  c: string;
  /** reference to the value */
  r: Buffer;
}

/** A checkpoint document as stored. Field names are short: they are stored in every document. */
export interface CheckpointDoc {
  /** rootCollection, so a collection-group query can list every thread of this root */
  root: string;
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
  parent_checkpoint_id: string | null;
  /** checkpoint format version (v < 4 needs the pending-sends migration on read) */
  v: number;
  /** serializer type and bytes of the checkpoint without `channel_values` */
  ct: string;
  c: Buffer;
  /** serializer type and bytes of the metadata */
  mt: string;
  m: Buffer;
  /** channel name → entry */
  ch: Record<string, ChannelEntry>;
  /** write key → pending write; written by putWrites, left alone by put */
  w?: Record<string, WriteEntry>;
}

/** The fields `put` owns; `w` (pending writes) is left to putWrites, which may run first. */
export const PUT_FIELDS = [
  "root",
  "thread_id",
  "checkpoint_ns",
  "checkpoint_id",
  "parent_checkpoint_id",
  "v",
  "ct",
  "c",
  "mt",
  "m",
  "ch",
] as const;

const PLAIN = /^[A-Za-z0-9_.-]{1,200}$/;

/**
 * A Firestore-safe, injective document id for an arbitrary string: plain ids stay readable, others
 * (slashes, `|` and `:` of subgraph namespaces, the empty namespace) become `~` + base64url, and very
 * long ones `~~` + SHA-256.
 */
export function keyOf(value: string): string {
  if (PLAIN.test(value) && !value.startsWith("__") && value !== "." && value !== "..") return value;
  const b64 = Buffer.from(value, "utf8").toString("base64url");
  if (b64.length <= 200) return `~${b64}`;
  return `~~${createHash("sha256").update(value, "utf8").digest("base64url")}`;
}

/** Document id of a checkpoint within its thread (`!` appears in neither half). */
export function checkpointDocId(ns: string, checkpointId: string): string {
  return `${keyOf(ns)}!${keyOf(checkpointId)}`;
}

/** Map key of a pending write in its checkpoint document (a field name that needs no escaping). */
export function writeKey(taskId: string, idx: number): string {
  return createHash("sha256").update(`${taskId}\u0000${idx}`, "utf8").digest("base64url").slice(0, 22);
}

/**
 * Field name of a channel in a document's `ch` map. Firestore reserves names like `__start__`
 * (LangGraph's own channels), so every name gets a `@` prefix.
 */
export function channelField(name: string): string {
  return `@${name}`;
}

/** `ch` as stored → channel name → entry. */
export function channelsFromStore(
  stored: Record<string, ChannelEntry> | undefined,
): Record<string, ChannelEntry> {
  const out: Record<string, ChannelEntry> = {};
  for (const [k, v] of Object.entries(stored ?? {})) out[k.slice(1)] = v;
  return out;
}

/** channel name → entry, as stored in `ch`. */
export function channelsToStore(channels: Record<string, ChannelEntry>): Record<string, ChannelEntry> {
  const out: Record<string, ChannelEntry> = {};
  for (const [k, v] of Object.entries(channels)) out[channelField(k)] = v;
  return out;
}

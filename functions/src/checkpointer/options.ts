/** The options of {@link FirestoreCheckpointer}, and their validation. */
import type { Firestore } from "@google-cloud/firestore";
import type { SerializerProtocol } from "@langchain/langgraph-checkpoint";
import { FirestoreCheckpointerError } from "./errors";

/** Options of {@link FirestoreCheckpointer}. */
export interface FirestoreCheckpointerOptions {
  /** A `Firestore` from `@google-cloud/firestore` or `firebase-admin/firestore`. */
  firestore: Firestore;
  /** Collection path under which every document of the checkpointer lives. Default `"checkpoints"`. */
  rootCollection?: string;
  /**
   * Sets a timestamp field on every document, `days` after it is written, for a Firestore TTL
   * policy on that field (collection groups `checkpoints` and `blobs`). Blobs still referenced
   * by newer checkpoints get their expiry pushed forward.
   */
  ttl?: { days: number; field?: string };
  /**
   * Largest commit request in bytes. A put or putWrites whose new blobs exceed it commits the
   * blobs first, in several batches, and the checkpoint last. Default 3,500,000: Firestore accepts
   * 10 MiB per request, but the Java emulator stalls above 4 MiB.
   */
  maxCommitBytes?: number;
  /** Serializer; defaults to LangGraph's JsonPlusSerializer. */
  serde?: SerializerProtocol;
}

/** The options, checked: a bad one throws a `checkpointer:bad_config` error that says what to pass. */
export function checkedOptions(options: FirestoreCheckpointerOptions): {
  root: string;
  ttl?: { days: number; field: string };
  maxCommitBytes: number;
} {
  const bad = (message: string) =>
    new FirestoreCheckpointerError("checkpointer:bad_config", { operation: "constructor" }, message);
  if (!options?.firestore) {
    throw bad(
      "the `firestore` option is required (a Firestore from firebase-admin or @google-cloud/firestore)",
    );
  }
  const root = options.rootCollection ?? "checkpoints";
  if (!root || root.split("/").some((s) => !s) || root.split("/").length % 2 !== 1) {
    throw bad(`rootCollection "${root}" is not a collection path (use "name" or "docs/id/name")`);
  }
  if (options.ttl && !(options.ttl.days > 0)) throw bad("ttl.days must be a positive number of days");
  return {
    root,
    maxCommitBytes: options.maxCommitBytes ?? 3_500_000,
    ...(options.ttl ? { ttl: { days: options.ttl.days, field: options.ttl.field ?? "expireAt" } } : {}),
  };
}

/** Names derived from a thread id for the places its uploads are kept (a folder, a BigQuery table prefix). */
import { createHash } from "node:crypto";

/** A short, stable, identifier-safe key of a thread id (16 hex digits of its SHA-256). */
export function threadKey(threadId: string): string {
  return createHash("sha256").update(threadId).digest("hex").slice(0, 16);
}

/**
 * Storage failures, classified in one place: the Firestore (gRPC) codes the HTTP layer acts on,
 * bounds on Firestore calls (the client retries an unavailable call for minutes), and how a
 * storage failure is worded for the person who asked.
 */
import * as logger from "firebase-functions/logger";
import { FirestoreCheckpointerError } from "./checkpointer/errors";
import { QuarryError } from "./errors";
import { withTimeout } from "./timeout";

/** A Firestore call (or a wait on one) that took longer than its bound. */
export class StorageTimeout extends Error {}

/** Resolves with the value, or rejects with a StorageTimeout after ms. */
export function within<T>(ms: number, p: Promise<T>, what: string): Promise<T> {
  return withTimeout(p, ms, () => {
    throw new StorageTimeout(`${what} took longer than ${ms} ms`);
  });
}

/** gRPC status codes Firestore fails with that the API handles. */
const GRPC = { NOT_FOUND: 5, ALREADY_EXISTS: 6, FAILED_PRECONDITION: 9 } as const;

/** The gRPC code of a Firestore failure, looking through wrapped causes. */
function grpcCode(err: unknown): number | undefined {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined; e; e = e.cause as typeof e) {
    if (typeof e.code === "number") return e.code;
  }
  return undefined;
}

/** A commit refused because a document changed (or vanished) since it was read. */
export function isStale(err: unknown): boolean {
  const code = grpcCode(err);
  return code === GRPC.FAILED_PRECONDITION || code === GRPC.NOT_FOUND;
}

/** A `create` of a document that exists. */
export function isAlreadyExists(err: unknown): boolean {
  return grpcCode(err) === GRPC.ALREADY_EXISTS;
}

/** Whether an error came from storage: a Firestore call, a bound on one, or the checkpointer. */
function fromStorage(err: unknown): boolean {
  if (err instanceof QuarryError) return false; // already worded
  return (
    err instanceof StorageTimeout || err instanceof FirestoreCheckpointerError || grpcCode(err) !== undefined
  );
}

/**
 * A storage failure as `unavailable:storage`; anything else as is. `midRun`: the run had its
 * lease, so the user's message is stored (and the error is one whatever its cause).
 */
export function storageError(err: unknown, midRun = false): unknown {
  if (!midRun && !fromStorage(err)) return err;
  logger.warn("storage failure", { err: String((err as Error)?.stack ?? err) });
  return new QuarryError(
    "unavailable:storage",
    midRun
      ? "Quarry lost contact with its database during this answer, so it stopped. Your question is saved; " +
          "ask again in a few seconds."
      : "Quarry could not reach its database, so the question was not taken: send it again in a few seconds.",
  );
}

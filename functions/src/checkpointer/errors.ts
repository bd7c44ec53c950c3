/**
 * Errors of the FirestoreCheckpointer. A failure always names the operation, thread, namespace and
 * checkpoint it concerns, keeps the original error as `cause`, and says what to do when the cause
 * is a usual one (missing index, emulator not reachable, permissions).
 */

/** Stable codes, in the project's `area:reason` style. */
export type CheckpointerErrorCode =
  "checkpointer:bad_config" | "checkpointer:corrupt" | "checkpointer:conflict" | "checkpointer:firestore";

/** What an error concerns. */
export interface CheckpointerErrorContext {
  operation: string;
  threadId?: string;
  checkpointNs?: string;
  checkpointId?: string;
}

/** Any failure of a FirestoreCheckpointer method. */
export class FirestoreCheckpointerError extends Error {
  readonly code: CheckpointerErrorCode;
  readonly operation: string;
  readonly threadId?: string;
  readonly checkpointNs?: string;
  readonly checkpointId?: string;

  constructor(code: CheckpointerErrorCode, ctx: CheckpointerErrorContext, message: string, cause?: unknown) {
    super(`FirestoreCheckpointer.${ctx.operation} ${describe(ctx)}: ${message}`, { cause });
    this.name = "FirestoreCheckpointerError";
    this.code = code;
    this.operation = ctx.operation;
    this.threadId = ctx.threadId;
    this.checkpointNs = ctx.checkpointNs;
    this.checkpointId = ctx.checkpointId;
  }
}

function describe(ctx: CheckpointerErrorContext): string {
  const parts: string[] = [];
  if (ctx.threadId !== undefined) parts.push(`thread "${ctx.threadId}"`);
  if (ctx.checkpointNs) parts.push(`namespace "${ctx.checkpointNs}"`);
  if (ctx.checkpointId) parts.push(`checkpoint "${ctx.checkpointId}"`);
  return parts.length ? `(${parts.join(", ")})` : "(all threads)";
}

/** gRPC status codes Firestore reports (only those a hint exists for). */
const FAILED_PRECONDITION = 9;
const PERMISSION_DENIED = 7;
const UNAVAILABLE = 14;
const DEADLINE_EXCEEDED = 4;

function hint(err: { code?: unknown; message?: string }): string {
  const msg = err.message ?? "";
  if (err.code === FAILED_PRECONDITION && /index/i.test(msg)) {
    return " Deploy the composite indexes in firestore.indexes.json (`firebase deploy --only firestore:indexes`).";
  }
  if (err.code === PERMISSION_DENIED) {
    return " The service account needs the Cloud Datastore User role (roles/datastore.user).";
  }
  if (err.code === UNAVAILABLE || err.code === DEADLINE_EXCEEDED) {
    return " Firestore is unreachable: check the network, or FIRESTORE_EMULATOR_HOST when using the emulator.";
  }
  return "";
}

/** Wraps anything thrown by Firestore (or by decoding) with the context it concerns. */
export function wrapError(ctx: CheckpointerErrorContext, err: unknown): FirestoreCheckpointerError {
  if (err instanceof FirestoreCheckpointerError) return err;
  const e = (err ?? {}) as { code?: unknown; message?: string };
  const message = e.message ?? String(err);
  const text = `${message.replace(/\.$/, "")}.${hint(e)}`;
  return new FirestoreCheckpointerError("checkpointer:firestore", ctx, text, err);
}

/** Runs `fn`, wrapping any failure with `ctx`. */
export async function withContext<T>(ctx: CheckpointerErrorContext, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw wrapError(ctx, err);
  }
}

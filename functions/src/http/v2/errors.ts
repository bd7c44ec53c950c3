/**
 * The protocol's error responses (`{ type: "error", id, error, message }`), with the protocol's
 * error codes. Quarry's own code for the same error (quota, access, storage…) goes beside it as
 * `quarry_error`, so a client can tell a quota refusal from a bad command.
 */
import * as logger from "firebase-functions/logger";
import { QuarryError, toErrorBody } from "../../errors";

export type ProtocolErrorCode =
  | "invalid_argument"
  | "unknown_command"
  | "unknown_error"
  | "no_such_run"
  | "no_such_interrupt"
  | "no_such_checkpoint"
  | "permission_denied"
  | "not_supported";

/** A request the protocol refuses, with what to fix. */
export class ProtocolError extends Error {
  constructor(
    readonly code: ProtocolErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "ProtocolError";
  }
}

export interface ErrorResponse {
  type: "error";
  id: number | null;
  error: ProtocolErrorCode;
  message: string;
  quarry_error?: string;
  meta?: { thread_id: string };
}

/** Quarry's error areas as protocol codes (a thread that is not the caller's reads as missing). */
const CODE_OF_AREA: Record<string, ProtocolErrorCode> = {
  bad_request: "invalid_argument",
  not_found: "invalid_argument",
  conflict: "invalid_argument",
  forbidden: "permission_denied",
  unauthorized: "permission_denied",
};

/** Any error thrown while handling a protocol request, as the protocol's error response and an HTTP status. */
export function toErrorResponse(err: unknown, id: number | null): { status: number; body: ErrorResponse } {
  if (err instanceof ProtocolError) {
    return { status: 400, body: { type: "error", id, error: err.code, message: err.message } };
  }
  const { status, body, expected } = toErrorBody(err);
  if (!expected) logger.error("v2 request failed", { err: String((err as Error)?.stack ?? err) });
  const area = err instanceof QuarryError ? err.area : "internal";
  return {
    status,
    body: {
      type: "error",
      id,
      error: CODE_OF_AREA[area] ?? "unknown_error",
      message: body.message,
      quarry_error: body.error,
    },
  };
}

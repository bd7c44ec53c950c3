/**
 * Typed errors with a stable code (`area:reason`), mapped once to an HTTP status or an SSE `error`
 * event. Anything that is not a QuarryError is logged and shown as a generic internal error.
 */
import { STATUS_OF_AREA, areaOf, type ErrorArea, type ErrorBody, type ErrorCode } from "./contract/errors";

export type { ErrorBody, ErrorCode } from "./contract/errors";

export class QuarryError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "QuarryError";
    this.code = code;
  }

  /** HTTP status for this error's code. */
  get status(): number {
    return STATUS_OF_AREA[areaOf(this.code) as ErrorArea] ?? 500;
  }
}

/** Maps any thrown value to a status and a body safe to show to the user. */
export function toErrorBody(err: unknown): { status: number; body: ErrorBody; expected: boolean } {
  if (err instanceof QuarryError) {
    return { status: err.status, body: { error: err.code, message: err.message }, expected: true };
  }
  return {
    status: 500,
    body: { error: "internal", message: "Something went wrong on our side. Please try again." },
    expected: false,
  };
}

/**
 * Typed errors with a stable code (`area:reason`), mapped once to an HTTP status or an SSE `error`
 * event. Anything that is not a QuarryError is logged and shown as a generic internal error.
 */
import {
  STATUS_OF_AREA,
  areaOf,
  isErrorCode,
  type ErrorArea,
  type ErrorBody,
  type ErrorCode,
} from "./contract/errors";

export type { ErrorBody, ErrorCode } from "./contract/errors";

export class QuarryError extends Error {
  readonly code: ErrorCode;
  /** Response headers that go with it (a 429's Retry-After). */
  readonly headers: Record<string, string>;
  constructor(
    code: ErrorCode,
    message: string,
    options?: { cause?: unknown; headers?: Record<string, string> },
  ) {
    super(message, options);
    this.name = "QuarryError";
    this.code = code;
    this.headers = options?.headers ?? {};
  }

  /**
   * A Quarry error as it crossed a boundary (a child process's reply, a stored error body): its code
   * checked against the contract's — one that is not a code becomes `internal`, its words kept.
   */
  static fromWire(body: { code?: unknown; error?: unknown; message?: unknown }): QuarryError {
    const code = body.code ?? body.error;
    const message = typeof body.message === "string" && body.message ? body.message : "Something went wrong.";
    return new QuarryError(isErrorCode(code) ? code : "internal", message);
  }

  /** The area of this error's code (`quota:bytes` → `quota`). */
  get area(): ErrorArea {
    return areaOf(this.code) as ErrorArea;
  }

  /** HTTP status for this error's code. */
  get status(): number {
    return STATUS_OF_AREA[areaOf(this.code) as ErrorArea] ?? 500;
  }
}

/** Maps any thrown value to a status and a body safe to show to the user. */
export function toErrorBody(err: unknown): {
  status: number;
  body: ErrorBody;
  expected: boolean;
  headers?: Record<string, string>;
} {
  if (err instanceof QuarryError) {
    const body = { error: err.code, message: err.message };
    return { status: err.status, body, expected: true, headers: err.headers };
  }
  return {
    status: 500,
    body: { error: "internal", message: "Something went wrong on our side. Please try again." },
    expected: false,
  };
}

/**
 * Typed errors with a stable code (`area:reason`), mapped once to an HTTP status or an SSE `error`
 * event. Anything that is not a QuarryError is logged and shown as a generic internal error.
 */
export type ErrorCode =
  | "bad_request:body"
  | "bad_request:query"
  | "bad_request:params"
  | "unauthorized:token"
  | "forbidden:thread"
  | "not_found:thread"
  | "not_found:route"
  | "not_found:assistant"
  | "not_found:run"
  | "not_found:message"
  | "conflict:run"
  | "conflict:thread"
  | "conflict:no_interrupt"
  | "payload_too_large:body"
  | "unavailable:config"
  | "unavailable:storage"
  | "model:not_configured"
  | "model:auth"
  | "model:quota"
  | "model:not_found"
  | "model:safety"
  | "model:network"
  | "model:unavailable"
  | "model:bad_request"
  | "model:empty"
  | "internal";

const STATUS: Record<string, number> = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  unavailable: 503,
  // Model failures normally reach the user as in-band `error` events (the question is stored by
  // then); answered before a stream, 422 is in the SDK's no-retry list, so it is shown, not retried.
  model: 422,
  internal: 500,
};

export class QuarryError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "QuarryError";
    this.code = code;
  }

  /** HTTP status for this error's code. */
  get status(): number {
    return STATUS[this.code.split(":")[0]] ?? 500;
  }
}

/** The JSON body every error response and `error` event carries. */
export interface ErrorBody {
  error: string;
  message: string;
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

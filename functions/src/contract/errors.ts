/**
 * Error codes (`area:reason`) the API answers with, in an HTTP error body or an in-band `error`
 * event; the page words them by their area (`model:*` messages are shown as written).
 */
export const ERROR_CODES = [
  "bad_request:body",
  "bad_request:query",
  "bad_request:params",
  "bad_request:attachment",
  "bad_request:upload",
  "bad_request:schedule",
  "bad_request:import",
  "bad_request:chat_link",
  "unauthorized:token",
  "unauthorized:chat_signature",
  "forbidden:not_member",
  "forbidden:admin_only",
  "forbidden:no_scope",
  "access:not_configured",
  "auth:bigquery_consent",
  "auth:bigquery_not_configured",
  "quota:questions",
  "quota:bytes",
  "quota:tokens",
  "not_found:thread",
  "not_found:route",
  "not_found:assistant",
  "not_found:run",
  "not_found:message",
  "not_found:member",
  "not_found:group",
  "not_found:proposal",
  "not_found:token",
  "not_found:oauth_client",
  "not_found:upload",
  "not_found:schedule",
  "not_found:import",
  "not_found:investigation",
  "conflict:run",
  "conflict:thread",
  "conflict:no_interrupt",
  "conflict:proposal",
  "conflict:group",
  "conflict:token",
  "conflict:upload",
  "conflict:schedule",
  "conflict:import",
  "payload_too_large:body",
  "payload_too_large:attachment",
  "payload_too_large:upload",
  "unavailable:storage",
  "unavailable:run",
  "unavailable:oauth",
  "unavailable:uploads",
  "unavailable:chat",
  "model:not_configured",
  "model:auth",
  "model:quota",
  "model:not_found",
  "model:safety",
  "model:network",
  "model:connection_lost",
  "model:interrupted",
  "model:unavailable",
  "model:bad_request",
  "model:unsupported_input",
  "model:empty",
  "internal",
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];
/** The part of a code before the colon: what kind of failure it is. */
type AreaOf<C> = C extends `${infer A}:${string}` ? A : C;
export type ErrorArea = AreaOf<ErrorCode>;

/** The JSON body of every error response and `error` event. */
export interface ErrorBody {
  error: ErrorCode;
  message: string;
}

/** HTTP status for each area. */
export const STATUS_OF_AREA: Record<ErrorArea, number> = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  // Over a person's quota: 429 with Retry-After (the SDK does not retry it).
  quota: 429,
  // No access policy configured: nobody can use this deployment until an admin sets one.
  access: 503,
  // BigQuery as the signed-in person (QUARRY_BQ_IDENTITY=user): their consent is missing, expired or
  // revoked (the page offers "Connect BigQuery"), or the deployment lacks the OAuth client. 403: the
  // person is signed in; what is missing is a grant, not a sign-in.
  auth: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  unavailable: 503,
  // Model failures normally reach the user as in-band `error` events (the question is stored by
  // then); answered before a stream, 422 is in the SDK's no-retry list, so it is shown, not retried.
  model: 422,
  internal: 500,
};

const KNOWN_CODES: ReadonlySet<string> = new Set(ERROR_CODES);

/** Whether a string received from elsewhere (a child process, a stored body) is one of the codes. */
export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === "string" && KNOWN_CODES.has(code);
}

/** The area of a code (`model:quota` → `model`), for a code received as a string. */
export function areaOf(code: string | undefined): string | undefined {
  return code?.split(":")[0];
}

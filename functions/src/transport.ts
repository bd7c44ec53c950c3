/**
 * Failures of a connection rather than of a service — closed, reset or refused under a request —
 * read from the errors the HTTP clients throw (undici's fetch, node-fetch, the OpenAI and Gemini
 * SDKs), and the bounded, jittered retry both the model calls and the BigQuery calls use for
 * them. Whether a retry is safe is the caller's decision (nothing reached the user; the call has
 * no side effect, or an id that makes it idempotent).
 */

/** Codes of a connection that went away under a request: retried while nothing reached the user. */
const DROPPED = new Set([
  "ECONNRESET",
  "EPIPE",
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
  "ERR_STREAM_PREMATURE_CLOSE",
  "ERR_HTTP2_STREAM_ERROR",
  "ERR_HTTP2_STREAM_CANCEL",
  "ERR_HTTP2_SESSION_ERROR",
  "ERR_HTTP2_GOAWAY_SESSION",
  "ERR_HTTP2_INVALID_SESSION",
]);

/** Codes where nothing answered at all. The first four may pass (a server restarting): retried. */
const UNANSWERED = new Set([
  "ECONNREFUSED",
  "EAI_AGAIN",
  "UND_ERR_CONNECT_TIMEOUT",
  "ETIMEDOUT",
  "ENOTFOUND",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "CERT_HAS_EXPIRED",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
]);
const UNANSWERED_RETRYABLE = new Set(["ECONNREFUSED", "EAI_AGAIN", "UND_ERR_CONNECT_TIMEOUT", "ETIMEDOUT"]);

/**
 * Words of a dropped connection when the library kept no code: undici's "fetch failed" (before
 * the response) and "terminated" (during its body), the OpenAI SDK's "Connection error.", and
 * @google/generative-ai's "Error fetching from …" / "Error reading from the stream", which
 * replace the cause with a message.
 */
const DROPPED_WORDS =
  /fetch failed|^terminated$|Connection error\.?$|socket hang up|other side closed|Error reading from the stream|premature close/i;

/** A transport failure: what happened, and whether trying again can help. */
export interface TransportFailure {
  /** `unanswered`: nothing answered (refused, no such host); `dropped`: closed or reset under the request. */
  kind: "unanswered" | "dropped";
  /** The system or undici code, when the library kept it. */
  code?: string;
  retryable: boolean;
}

/** Reads a transport failure from an error and its causes (up to 5 deep), or undefined. */
export function transportFailure(err: unknown): TransportFailure | undefined {
  let words = false;
  for (let c: unknown = err, depth = 0; c && depth < 5; depth++) {
    const e = c as { code?: unknown; message?: unknown; name?: unknown; cause?: unknown };
    if (e.name === "AbortError") return undefined;
    if (typeof e.code === "string" && DROPPED.has(e.code))
      return { kind: "dropped", code: e.code, retryable: true };
    if (typeof e.code === "string" && UNANSWERED.has(e.code)) {
      return { kind: "unanswered", code: e.code, retryable: UNANSWERED_RETRYABLE.has(e.code) };
    }
    if (typeof e.message === "string" && DROPPED_WORDS.test(e.message)) words = true;
    c = e.cause;
  }
  // An HTTP answer is the service's decision, never the transport's.
  const e = err as { status?: unknown; response?: { status?: unknown } };
  const answered = typeof e?.status === "number" || typeof e?.response?.status === "number";
  if (words && !answered) return { kind: "dropped", retryable: true };
  return undefined;
}

/** How a request that failed at the transport is retried. */
export interface TransportRetryPolicy {
  /** Attempts in all, the first included. */
  attempts: number;
  /** No new attempt starts after this long since the first one started. */
  budgetMs: number;
  /** Backoff before retry n is a uniformly random wait in [0, min(maxDelayMs, baseDelayMs·2^(n-1))). */
  baseDelayMs: number;
  maxDelayMs: number;
}

/** "Full jitter" backoff: concurrent requests cut by one reset do not come back in step. */
export function backoffMs(policy: TransportRetryPolicy, retry: number, random = Math.random): number {
  return Math.floor(random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1)));
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

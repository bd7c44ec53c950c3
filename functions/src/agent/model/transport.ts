/**
 * The model clients' connections: the retry of requests that failed at the transport
 * (`../../transport.ts` says which those are), and how long an idle pooled connection is kept.
 *
 * Why: servers close idle keep-alive connections on their own schedule (Node and uvicorn after
 * 5 s, load balancers after theirs), and a client that picks such a connection from its pool in
 * the same instant — or after its event loop was starved, as under load — writes its request on a
 * socket the server has already closed: undici reports `other side closed` (UND_ERR_SOCKET) or
 * ECONNRESET. `@langchain/google-common` never retries an error without an HTTP status, so before
 * this module every such race failed a Vertex AI answer.
 */
import { transportFailure, type TransportRetryPolicy } from "../../transport";

export const MODEL_TRANSPORT_RETRY: TransportRetryPolicy = Object.freeze({
  attempts: 3,
  budgetMs: 20_000,
  baseDelayMs: 300,
  maxDelayMs: 2_000,
});

/**
 * The client library's own retry decision (LangChain's AsyncCaller `onFailedAttempt`, given to
 * every provider): transport failures are not retried there — `callModel` retries them, knowing
 * whether any token reached the user — nor are answers a retry cannot change (4xx but 408/429)
 * or failures that are not HTTP answers at all. 408, 429 and 5xx retry within MODEL_MAX_RETRIES.
 */
export function libraryFailedAttempt(err: unknown): void {
  const e = err as { name?: unknown; message?: unknown; status?: unknown; response?: { status?: unknown } };
  if (e?.name === "AbortError" || /^(Cancel|AbortError)/.test(String(e?.message ?? ""))) throw err;
  if (transportFailure(err)) throw err;
  const status = [e?.status, e?.response?.status].find((s) => typeof s === "number") as number | undefined;
  if (status === undefined) throw err;
  if (status >= 400 && status < 500 && status !== 408 && status !== 429) throw err;
}

/**
 * Idle pooled connections of the model clients (global fetch: every provider's library uses it)
 * are closed after 2 s, below the shortest idle timeout servers commonly use (5 s: Node, uvicorn,
 * llama.cpp's server); a server that announces its timeout (`Keep-Alive: timeout=N`) is left 2 s
 * before it, and no connection idles longer than 10 s. The race above then needs a stall of
 * seconds; the retry covers what is left.
 */
const MODEL_KEEP_ALIVE = Object.freeze({
  keepAliveTimeout: 2_000,
  keepAliveTimeoutThreshold: 2_000,
  keepAliveMaxTimeout: 10_000,
});

let installed: Promise<void> | undefined;

/** Installs the keep-alive settings for this process's fetch (once; undici is loaded lazily). */
export function useModelKeepAlive(): Promise<void> {
  installed ??= import("undici").then(({ Agent, setGlobalDispatcher }) =>
    setGlobalDispatcher(new Agent(MODEL_KEEP_ALIVE)),
  );
  return installed;
}

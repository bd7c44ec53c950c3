/**
 * The official LangGraph SDK Client, pointed at the function URL, with a fresh Firebase ID token on
 * every request. `onRequest` runs before each fetch (including stream requests and reconnects), and
 * `getIdToken()` returns the cached token or refreshes it when it is within five minutes of expiry.
 */
import { Client } from "@langchain/langgraph-sdk";
import type { Auth } from "firebase/auth";

class SignedOutError extends Error {
  constructor() {
    super("You are signed out. Sign in again to continue.");
    this.name = "SignedOutError";
  }
}

/** A Client whose requests carry `Authorization: Bearer <fresh ID token>`. */
export function createApiClient(apiUrl: string, auth: Auth): Client {
  return new Client({
    apiUrl,
    // Never pick up LANGSMITH/LANGGRAPH keys: this server authenticates with Firebase.
    apiKey: null,
    // The SDK retries 5xx and network failures; a couple of tries is enough for a person waiting.
    callerOptions: { maxRetries: 2 },
    onRequest: async (_url, init) => {
      const user = auth.currentUser;
      if (!user) throw new SignedOutError();
      const headers = new Headers(init.headers);
      headers.set("Authorization", `Bearer ${await user.getIdToken()}`);
      return { ...init, headers };
    },
  });
}

/** What the API answers for a vote: a proposal (up-vote on an answer with SQL) or a plain record. */
export interface FeedbackResult {
  feedback_id: string;
  status: "proposed" | "recorded";
}

/**
 * A JSON request to the API outside the SDK (`/me`, `/admin/*`, feedback) with a fresh ID token.
 * Throws an error carrying `status` and the API's `{error, message}` body as its message ("HTTP 403:
 * {...}"), as the SDK's errors do, so `parseApiError` and `errorInWords` read both alike. Resolves
 * with `undefined` for an empty answer (204).
 */
export async function apiRequest<T>(
  apiUrl: string,
  auth: Auth,
  path: string,
  init: { method?: string; body?: unknown } = {},
): Promise<T> {
  const user = auth.currentUser;
  if (!user) throw new SignedOutError();
  const res = await fetch(`${apiUrl}${path}`, {
    method: init.method ?? "GET",
    headers: {
      ...(init.body !== undefined ? { "content-type": "application/json" } : {}),
      authorization: `Bearer ${await user.getIdToken()}`,
    },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  const text = await res.text();
  if (!res.ok) throw Object.assign(new Error(`HTTP ${res.status}: ${text}`), { status: res.status });
  return (text ? JSON.parse(text) : undefined) as T;
}

/**
 * Votes on the answer to the question `questionId` (`POST /threads/:id/feedback`, not part of the
 * SDK). Throws an error with the API's `{error, message}` body, as the SDK does.
 */
export function sendFeedback(
  apiUrl: string,
  auth: Auth,
  threadId: string,
  vote: { questionId: string; score: 1 | -1; note?: string },
): Promise<FeedbackResult> {
  return apiRequest<FeedbackResult>(apiUrl, auth, `/threads/${threadId}/feedback`, {
    method: "POST",
    body: {
      question_id: vote.questionId,
      score: vote.score,
      ...(vote.note ? { note: vote.note } : {}),
    },
  });
}

/** "Ask the data team to verify": files the answer to `questionId` as a proposal for the admin page's review. */
export function requestVerification(
  apiUrl: string,
  auth: Auth,
  threadId: string,
  questionId: string,
): Promise<{ proposal_id: string; status: string }> {
  return apiRequest(apiUrl, auth, `/threads/${threadId}/verify`, {
    method: "POST",
    body: { question_id: questionId },
  });
}

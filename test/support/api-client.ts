/**
 * Helpers for API tests: the official @langchain/langgraph-sdk Client authenticated with an
 * Auth-emulator ID token, and raw fetch with a token.
 */
import { Client } from "@langchain/langgraph-sdk";
import type { TestUser } from "./auth-emulator";

export function sdkClient(apiUrl: string, user: TestUser): Client {
  return new Client({
    apiUrl,
    defaultHeaders: { authorization: `Bearer ${user.idToken}` },
    callerOptions: { maxRetries: 0 },
  });
}

export async function call(
  apiUrl: string,
  path: string,
  init: {
    method?: string;
    token?: string;
    body?: unknown;
    rawBody?: string | Uint8Array;
    headers?: Record<string, string>;
  } = {},
) {
  const headers: Record<string, string> = { ...init.headers };
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  let body: string | Uint8Array | undefined = init.rawBody;
  if (init.body !== undefined) {
    body = JSON.stringify(init.body);
    headers["content-type"] = "application/json";
  } else if (init.rawBody !== undefined) headers["content-type"] ??= "application/json";
  const res = await fetch(`${apiUrl}${path}`, {
    method: init.method ?? "GET",
    headers,
    body: body as BodyInit,
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json: json as Record<string, unknown> };
}

/** An unsigned emulator-style ID token (the Admin SDK accepts alg "none" only against the Auth emulator). */
export function craftToken(claims: Record<string, unknown>): string {
  const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");
  return `${enc({ alg: "none", typ: "JWT" })}.${enc(claims)}.`;
}

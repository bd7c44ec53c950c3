import { describe, it, expect, beforeAll } from "vitest";
import { randomUUID } from "node:crypto";
import { signUp, type TestUser } from "../../support/auth-emulator";
import { call } from "../../support/api-client";
import { stackEnv } from "../../support/stack-env";

let api: string;
let user: TestUser;
let threadId: string;

beforeAll(async () => {
  const stack = stackEnv();
  api = stack.urls.api!;
  user = await signUp(stack.urls.auth!);
  const created = await call(api, "/threads", { method: "POST", token: user.idToken, body: {} });
  threadId = created.json.thread_id as string;
});

const human = (content: unknown) => ({ messages: [{ type: "human", content }] });

/** Each case: a request that must be refused with a 4xx and a message that says what is wrong. */
const cases: Array<{
  name: string;
  method: string;
  path: () => string;
  body?: unknown;
  raw?: string;
  status: number;
  says: RegExp;
}> = [
  {
    name: "JSON array body",
    method: "POST",
    path: () => "/threads",
    raw: "[1,2]",
    status: 400,
    says: /Invalid body/,
  },
  {
    name: "unknown field on create",
    method: "POST",
    path: () => "/threads",
    body: { colour: "red" },
    status: 400,
    says: /unknown field.*"colour"/,
  },
  {
    name: "thread_id not a UUID",
    method: "POST",
    path: () => "/threads",
    body: { thread_id: "abc" },
    status: 400,
    says: /thread_id: must be a UUID/,
  },
  {
    name: "metadata not an object",
    method: "POST",
    path: () => "/threads",
    body: { metadata: "x" },
    status: 400,
    says: /metadata/,
  },
  {
    name: "bad if_exists",
    method: "POST",
    path: () => "/threads",
    body: { if_exists: "maybe" },
    status: 400,
    says: /if_exists/,
  },
  {
    name: "oversized metadata",
    method: "POST",
    path: () => "/threads",
    body: { metadata: { a: "x".repeat(20_000) } },
    status: 400,
    says: /16 KB/,
  },
  {
    name: "oversized body",
    method: "POST",
    path: () => "/threads",
    body: { metadata: { a: "x".repeat(300_000) } },
    status: 413,
    says: /larger than/,
  },
  {
    name: "search limit wrong type",
    method: "POST",
    path: () => "/threads/search",
    body: { limit: "ten" },
    status: 400,
    says: /limit/,
  },
  {
    name: "search limit too large",
    method: "POST",
    path: () => "/threads/search",
    body: { limit: 5000 },
    status: 400,
    says: /limit/,
  },
  {
    name: "search unknown field",
    method: "POST",
    path: () => "/threads/search",
    body: { owner: "x" },
    status: 400,
    says: /unknown field/,
  },
  {
    name: "search bad sort_by",
    method: "POST",
    path: () => "/threads/search",
    body: { sort_by: "title" },
    status: 400,
    says: /sort_by/,
  },
  {
    name: "get bad thread id",
    method: "GET",
    path: () => "/threads/not-a-uuid",
    status: 400,
    says: /must be a UUID/,
  },
  {
    name: "get unknown thread",
    method: "GET",
    path: () => `/threads/${randomUUID()}`,
    status: 404,
    says: /not found/,
  },
  {
    name: "patch without metadata",
    method: "PATCH",
    path: () => `/threads/${threadId}`,
    body: {},
    status: 400,
    says: /metadata/,
  },
  {
    name: "patch unknown field",
    method: "PATCH",
    path: () => `/threads/${threadId}`,
    body: { metadata: {}, x: 1 },
    status: 400,
    says: /unknown field/,
  },
  { name: "delete bad id", method: "DELETE", path: () => "/threads/123", status: 400, says: /UUID/ },
  {
    name: "history limit wrong type",
    method: "POST",
    path: () => `/threads/${threadId}/history`,
    body: { limit: "all" },
    status: 400,
    says: /limit/,
  },
  {
    name: "history unknown field",
    method: "POST",
    path: () => `/threads/${threadId}/history`,
    body: { page: 2 },
    status: 400,
    says: /unknown field/,
  },
  {
    name: "state of unknown thread",
    method: "GET",
    path: () => `/threads/${randomUUID()}/state`,
    status: 404,
    says: /not found/,
  },
  {
    name: "run without assistant_id",
    method: "POST",
    path: () => `/threads/${threadId}/runs/stream`,
    body: { input: human("hi") },
    status: 400,
    says: /assistant_id/,
  },
  {
    name: "run unknown assistant",
    method: "POST",
    path: () => `/threads/${threadId}/runs/stream`,
    body: { assistant_id: "other", input: human("hi") },
    status: 404,
    says: /Assistant "other" not found/,
  },
  {
    name: "run without input",
    method: "POST",
    path: () => `/threads/${threadId}/runs/stream`,
    body: { assistant_id: "quarry" },
    status: 400,
    says: /input is required/,
  },
  {
    name: "run with empty messages",
    method: "POST",
    path: () => `/threads/${threadId}/runs/stream`,
    body: { assistant_id: "quarry", input: { messages: [] } },
    status: 400,
    says: /needs the user's message/,
  },
  {
    name: "run with empty question",
    method: "POST",
    path: () => `/threads/${threadId}/runs/stream`,
    body: { assistant_id: "quarry", input: human("   ") },
    status: 400,
    says: /empty/,
  },
  {
    name: "run with content of wrong type",
    method: "POST",
    path: () => `/threads/${threadId}/runs/stream`,
    body: { assistant_id: "quarry", input: human(42) },
    status: 400,
    says: /content/,
  },
  {
    name: "run with an over-long question",
    method: "POST",
    path: () => `/threads/${threadId}/runs/stream`,
    body: { assistant_id: "quarry", input: human("x".repeat(9000)) },
    status: 400,
    says: /limit is 8000/,
  },
  {
    name: "run with unknown stream mode",
    method: "POST",
    path: () => `/threads/${threadId}/runs/stream`,
    body: { assistant_id: "quarry", input: human("hi"), stream_mode: ["debug"] },
    status: 400,
    says: /stream_mode/,
  },
  {
    name: "run with legacy messages mode",
    method: "POST",
    path: () => `/threads/${threadId}/runs/stream`,
    body: { assistant_id: "quarry", input: human("hi"), stream_mode: "messages" },
    status: 400,
    says: /messages-tuple/,
  },
  {
    name: "run with a webhook",
    method: "POST",
    path: () => `/threads/${threadId}/runs/stream`,
    body: { assistant_id: "quarry", input: human("hi"), webhook: "http://x" },
    status: 400,
    says: /webhooks are not supported/,
  },
  {
    name: "run with unknown field",
    method: "POST",
    path: () => `/threads/${threadId}/runs/stream`,
    body: { assistant_id: "quarry", input: human("hi"), temperature: 2 },
    status: 400,
    says: /unknown field.*temperature/,
  },
  {
    name: "run with enqueue strategy",
    method: "POST",
    path: () => `/threads/${threadId}/runs/stream`,
    body: { assistant_id: "quarry", input: human("hi"), multitask_strategy: "enqueue" },
    status: 400,
    says: /reject/,
  },
  {
    name: "run on unknown thread",
    method: "POST",
    path: () => `/threads/${randomUUID()}/runs/stream`,
    body: { assistant_id: "quarry", input: human("hi") },
    status: 404,
    says: /not found/,
  },
  {
    name: "cancel a run that is not running",
    method: "POST",
    path: () => `/threads/${threadId}/runs/${randomUUID()}/cancel`,
    status: 404,
    says: /not running/,
  },
  {
    name: "cancel with a bad run id",
    method: "POST",
    path: () => `/threads/${threadId}/runs/xyz/cancel`,
    status: 400,
    says: /UUID/,
  },
  { name: "unknown route", method: "GET", path: () => "/nope", status: 404, says: /No route GET \/nope/ },
  {
    name: "unknown method on a route",
    method: "PUT",
    path: () => "/threads",
    status: 404,
    says: /No route PUT/,
  },
  {
    name: "unknown assistant lookup",
    method: "GET",
    path: () => "/assistants/agent",
    status: 404,
    says: /not found/,
  },
];

describe("bad requests get a 4xx that says what to fix", () => {
  // Cloud Functions parses JSON bodies before the app runs, so malformed JSON is refused by the
  // platform (400 with the parser's message), not by our error handler.
  it("malformed JSON", async () => {
    const res = await call(api, "/threads", { method: "POST", token: user.idToken, rawBody: "{not json" });
    expect(res.status).toBe(400);
    expect(res.text).toMatch(/JSON/);
  });

  it.each(cases.map((c) => [c.name, c] as const))("%s", async (_name, c) => {
    const res = await call(api, c.path(), {
      method: c.method,
      token: user.idToken,
      body: c.body,
      rawBody: c.raw,
    });
    expect(res.status, res.text).toBe(c.status);
    expect(res.json?.error, res.text).toEqual(expect.any(String));
    expect(res.json?.message, res.text).toMatch(c.says);
  });

  it("left the thread intact after all of them", async () => {
    const res = await call(api, `/threads/${threadId}`, { token: user.idToken });
    expect(res.status).toBe(200);
    expect(res.json.status).toBe("idle");
  });
});

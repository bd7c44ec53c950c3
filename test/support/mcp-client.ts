/**
 * The official MCP client (`Client` + `StreamableHTTPClientTransport`) on Quarry's `/mcp` with a
 * bearer token, and a personal access token made through the API, for tests.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { call } from "./api-client";

export type ToolResult = {
  isError?: boolean;
  content: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
};

/** A connected client (initialized) for `url` (the API's `/mcp`) sending `Authorization: Bearer`. */
export async function connectMcp(url: string, bearer: string): Promise<Client> {
  const client = new Client({ name: "quarry-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { authorization: `Bearer ${bearer}` } },
  });
  await client.connect(transport);
  return client;
}

/** `POST /me/tokens` with an ID token; throws unless it answers 201. */
export async function makeToken(api: string, idToken: string, name = "test", days = 30) {
  const r = await call(api, "/me/tokens", {
    method: "POST",
    token: idToken,
    body: { name, expires_in_days: days },
  });
  if (r.status !== 201) throw new Error(`POST /me/tokens answered ${r.status}: ${r.text}`);
  return r.json as { id: string; token: string; name: string; expires_at: string };
}

/** An MCP initialize request sent by hand to `<api>/mcp`, to read the HTTP answer itself (status, headers). */
export function mcpInitialize(api: string, bearer: string): Promise<Response> {
  return fetch(`${api}/mcp`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${bearer}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    }),
  });
}

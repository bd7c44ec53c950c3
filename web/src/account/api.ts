/**
 * Personal access tokens for MCP clients (`/me/tokens`, docs/mcp.md#tokens) and the clients allowed
 * through OAuth (`/me/oauth-clients`) as the account page
 * uses them, with the page's API client (a fresh ID token per request; a token cannot make tokens).
 * The shapes are the shared contract's.
 */
import type { Auth } from "firebase/auth";
import type { ConnectedClientsAnswer, NewToken, TokensAnswer } from "@quarry/functions/contract";
import { apiRequest } from "../api/client";

export function tokensApi(apiUrl: string, auth: Auth) {
  return {
    list: () => apiRequest<TokensAnswer>(apiUrl, auth, "/me/tokens"),
    create: (name: string, days: number) =>
      apiRequest<NewToken>(apiUrl, auth, "/me/tokens", {
        method: "POST",
        body: { name, expires_in_days: days },
      }),
    revoke: (id: string) =>
      apiRequest<void>(apiUrl, auth, `/me/tokens/${encodeURIComponent(id)}`, { method: "DELETE" }),
    /** MCP clients allowed through OAuth (`/me/oauth-clients`), and disconnecting one. */
    clients: () => apiRequest<ConnectedClientsAnswer>(apiUrl, auth, "/me/oauth-clients"),
    disconnect: (id: string) =>
      apiRequest<void>(apiUrl, auth, `/me/oauth-clients/${encodeURIComponent(id)}`, { method: "DELETE" }),
  };
}

export type TokensApi = ReturnType<typeof tokensApi>;

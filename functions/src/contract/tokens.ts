/** Personal access tokens as the API answers about them (`/me/tokens`, docs/mcp.md#tokens). */

/** The longest a token may live, days. */
export const MAX_TOKEN_DAYS = 90;
/** The longest a token's name may be, characters. */
export const MAX_TOKEN_NAME_CHARS = 100;

/** A token as its person sees it in a list (`GET /me/tokens` → `tokens`); never its secret. */
export interface TokenInfo {
  id: string;
  name: string;
  created_at: string;
  expires_at: string;
  last_used_at: string | null;
}

/** `POST /me/tokens`'s answer: the token itself, shown this once. */
export type NewToken = TokenInfo & { token: string };

/** `GET /me/tokens`'s answer. */
export interface TokensAnswer {
  tokens: TokenInfo[];
}

/** An MCP client the person allowed through OAuth (`GET /me/oauth-clients`). */
export interface ConnectedClient {
  /** The grant's id: what `DELETE /me/oauth-clients/:id` revokes. */
  id: string;
  /** The client's id: the URL of its metadata document (or a registered id). */
  clientId: string;
  /** Who the client is, as its id says: its metadata document's host. */
  clientHost: string;
  /** The name the client gives itself (not verified: show it beside the host). */
  clientName: string | null;
  allowedAt: string | null;
  expiresAt: string | null;
}

export interface ConnectedClientsAnswer {
  clients: ConnectedClient[];
}

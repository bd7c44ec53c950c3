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

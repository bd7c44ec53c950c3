/**
 * OAuth 2.1 for hosted MCP clients (`functions/src/mcp/oauth/`): an authorization server whose
 * login is Firebase sign-in, issuing access tokens for Quarry's `/mcp` only. Off unless
 * `QUARRY_MCP_OAUTH=true`; deployed, it needs its signing keys (`QUARRY_MCP_OAUTH_JWKS`, a Secret
 * Manager secret) and the project's Web API key, and refuses to serve without them (fail closed).
 */
import { docsOf, flag, int, text, textOr, type Env } from "./define";

export interface OAuthConfig {
  /** Whether `/mcp` advertises OAuth and the authorization server is served (QUARRY_MCP_OAUTH). */
  enabled: boolean;
  /** The authorization server's issuer URL (QUARRY_MCP_OAUTH_ISSUER): the API URL + `/oauth` by default. */
  issuer: string;
  /** The protected resource, the only audience its tokens carry: the API URL + `/mcp`. */
  resource: string;
  /** The private signing keys, a JWKS as JSON (QUARRY_MCP_OAUTH_JWKS); unset locally (generated, kept in Firestore). */
  jwks?: string;
  /** Hosts a client's redirect URIs may point at (QUARRY_MCP_OAUTH_REDIRECT_HOSTS), lower case. */
  redirectHosts: string[];
  /** Whether clients may register themselves (RFC 7591) besides client ID metadata documents. */
  registration: boolean;
  /** Access token lifetime, seconds. */
  accessTokenSeconds: number;
  /** Refresh token (and grant) lifetime, seconds. */
  refreshTokenSeconds: number;
  /** The Firebase Web API key the login page signs in with (QUARRY_FIREBASE_API_KEY). */
  webApiKey?: string;
  /** Why the server cannot run (a missing setting), in words that name what to set. */
  problem?: string;
}

const concern = "oauth";

const OAUTH_SETTINGS = {
  enabled: flag("QUARRY_MCP_OAUTH", {
    concern,
    default: false,
    description:
      "Serve OAuth 2.1 for hosted MCP clients ([MCP](mcp.md#oauth-for-hosted-assistants)): protected-resource metadata, the authorization server, and its tokens on `/mcp`. Deploy-time too: mounts the `QUARRY_MCP_OAUTH_JWKS` secret.",
  }),
  issuer: text("QUARRY_MCP_OAUTH_ISSUER", {
    concern,
    defaultText: "`QUARRY_API_URL` + `/oauth`",
    description: "The authorization server's issuer URL (where its metadata and endpoints are).",
  }),
  jwks: text("QUARRY_MCP_OAUTH_JWKS", {
    concern,
    defaultText: "generated locally",
    description:
      'The private keys that sign access tokens, a JWKS (`{"keys":[…]}`, ES256 or RS256, each with a `kid`); a Secret Manager secret. Required when deployed; in the emulator one key is generated and kept in Firestore.',
  }),
  redirectHosts: textOr("QUARRY_MCP_OAUTH_REDIRECT_HOSTS", {
    concern,
    default: "claude.ai,claude.com,chatgpt.com,127.0.0.1,localhost",
    description:
      "Hosts an OAuth client's redirect URIs may point at (comma-separated); a client with any other is refused.",
  }),
  registration: flag("QUARRY_MCP_OAUTH_REGISTRATION", {
    concern,
    default: false,
    description:
      "Let clients that cannot use a client ID metadata document register themselves (RFC 7591 dynamic registration). Off by default: anyone could register, and registered clients are kept.",
  }),
  accessTokenSeconds: int("QUARRY_MCP_OAUTH_TOKEN_SECONDS", {
    concern,
    default: 3600,
    min: 300,
    max: 86_400,
    description: "How long an access token for `/mcp` lives, seconds.",
  }),
  refreshTokenDays: int("QUARRY_MCP_OAUTH_REFRESH_DAYS", {
    concern,
    default: 30,
    min: 1,
    max: 90,
    description: "How long a refresh token (and the person's consent) lives, days.",
  }),
  webApiKey: text("QUARRY_FIREBASE_API_KEY", {
    concern,
    defaultText: "`demo-api-key` in the emulator",
    description:
      "The project's Firebase Web API key, which the OAuth login page signs in with (Firebase console → Project settings). Required when OAuth is on and deployed.",
  }),
} as const;

/** The OAuth settings; `apiUrl` is the API's public base URL (issuer and resource hang off it). */
export function readOAuthConfig(env: Env, apiUrl: string, inEmulator: boolean): OAuthConfig {
  const s = OAUTH_SETTINGS;
  const base = apiUrl.replace(/\/+$/, "");
  const jwks = s.jwks.read(env);
  const webApiKey = s.webApiKey.read(env) ?? (inEmulator ? "demo-api-key" : undefined);
  const missing = [
    ...(!jwks && !inEmulator ? ["QUARRY_MCP_OAUTH_JWKS (the signing keys, a Secret Manager secret)"] : []),
    ...(!webApiKey ? ["QUARRY_FIREBASE_API_KEY (the project's Web API key)"] : []),
  ];
  return {
    enabled: s.enabled.read(env),
    issuer: (s.issuer.read(env) ?? `${base}/oauth`).replace(/\/+$/, ""),
    resource: `${base}/mcp`,
    jwks,
    redirectHosts: s.redirectHosts
      .read(env)
      .split(",")
      .map((h) => h.trim().toLowerCase())
      .filter(Boolean),
    registration: s.registration.read(env),
    accessTokenSeconds: s.accessTokenSeconds.read(env),
    refreshTokenSeconds: s.refreshTokenDays.read(env) * 86_400,
    webApiKey,
    ...(missing.length
      ? {
          problem: `OAuth for MCP is on but not set up: set ${missing.join(" and ")}, or QUARRY_MCP_OAUTH=false.`,
        }
      : {}),
  };
}

export const OAUTH_DOCS = docsOf(OAUTH_SETTINGS);

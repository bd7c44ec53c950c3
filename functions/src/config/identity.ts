/**
 * Whose credentials BigQuery calls use (`QUARRY_BQ_IDENTITY`): the function's service account, or
 * the signed-in person's own (`user`), obtained with Google's OAuth authorization-code flow
 * (`functions/src/identity/`). The OAuth client and the key that encrypts stored refresh tokens
 * are secrets; Google's endpoints are settings so tests can point them at a loopback stand-in.
 */
import { docsOf, int, oneOf, text, textOr, type Env } from "./define";

export interface IdentityConfig {
  /** `service` (default): the service account runs everything; `user`: the signed-in person's credentials. */
  mode: "service" | "user";
  oauth: {
    /** OAuth 2.0 web client id (QUARRY_OAUTH_CLIENT_ID). */
    clientId?: string;
    /** Its secret (QUARRY_OAUTH_CLIENT_SECRET, a Secret Manager secret when deployed). */
    clientSecret?: string;
    /** Google's authorization endpoint (the page's browser goes there). */
    authorizationUrl: string;
    /** Google's token endpoint (code exchange, refresh grants). */
    tokenUrl: string;
    /** Google's revocation endpoint (disconnect). */
    revokeUrl: string;
    /** Where Google sends the browser back: the function's `/auth/bigquery/callback`. */
    redirectUri: string;
  };
  /** 32 bytes, base64: encrypts refresh tokens at rest and signs the flow's state (QUARRY_TOKEN_KEY). */
  tokenKey?: string;
  /** How long the tables a person's credentials can read are cached per person, ms. */
  readableCacheMs: number;
  /** Why user mode cannot work (a missing setting), in words that name what to set. */
  problem?: string;
}

const concern = "identity";

const IDENTITY_SETTINGS = {
  mode: oneOf("QUARRY_BQ_IDENTITY", {
    concern,
    allowed: ["service", "user"],
    default: "service",
    description:
      "Whose credentials BigQuery calls use: the function's service account, or (`user`) the signed-in person's own, after they connect BigQuery ([access](access.md#bigquery-identity)).",
  }),
  clientId: text("QUARRY_OAUTH_CLIENT_ID", {
    concern,
    description:
      "OAuth 2.0 web client id for `QUARRY_BQ_IDENTITY=user` (Google Cloud console → Credentials).",
  }),
  clientSecret: text("QUARRY_OAUTH_CLIENT_SECRET", {
    concern,
    description:
      "That client's secret; deployed as a Secret Manager secret (`firebase functions:secrets:set QUARRY_OAUTH_CLIENT_SECRET`).",
  }),
  tokenKey: text("QUARRY_TOKEN_KEY", {
    concern,
    description:
      "32 random bytes, base64, that encrypt stored refresh tokens (AES-256-GCM) and sign the connect flow's state; a Secret Manager secret.",
  }),
  authorizationUrl: textOr("QUARRY_OAUTH_AUTHORIZATION_URL", {
    concern,
    default: "https://accounts.google.com/o/oauth2/v2/auth",
    description: "Google's OAuth authorization endpoint (tests point it at a stand-in).",
  }),
  tokenUrl: textOr("QUARRY_OAUTH_TOKEN_URL", {
    concern,
    default: "https://oauth2.googleapis.com/token",
    description: "Google's OAuth token endpoint.",
  }),
  revokeUrl: textOr("QUARRY_OAUTH_REVOKE_URL", {
    concern,
    default: "https://oauth2.googleapis.com/revoke",
    description: "Google's OAuth revocation endpoint.",
  }),
  redirectUri: text("QUARRY_OAUTH_REDIRECT_URI", {
    concern,
    defaultText: "`QUARRY_API_URL` + `/auth/bigquery/callback`",
    description: "The redirect URI registered on the OAuth client: the API's `/auth/bigquery/callback`.",
  }),
  readableCacheSeconds: int("QUARRY_READABLE_CACHE_SECONDS", {
    concern,
    default: 300,
    max: 3600,
    description:
      "User mode: how long the tables a person's credentials can read are cached per person (the catalog and scope filter).",
  }),
} as const;

/** The identity settings; user mode with a missing client or key is refused (`problem`), never served. */
export function readIdentityConfig(env: Env, apiUrl: string): IdentityConfig {
  const s = IDENTITY_SETTINGS;
  const mode = s.mode.read(env) ?? "service";
  const clientId = s.clientId.read(env);
  const clientSecret = s.clientSecret.read(env);
  const tokenKey = s.tokenKey.read(env);
  const missing = [
    clientId ? "" : "QUARRY_OAUTH_CLIENT_ID",
    clientSecret ? "" : "QUARRY_OAUTH_CLIENT_SECRET",
    tokenKey && Buffer.from(tokenKey, "base64").length === 32 ? "" : "QUARRY_TOKEN_KEY (32 bytes, base64)",
  ].filter(Boolean);
  return {
    mode,
    oauth: {
      clientId,
      clientSecret,
      authorizationUrl: s.authorizationUrl.read(env),
      tokenUrl: s.tokenUrl.read(env),
      revokeUrl: s.revokeUrl.read(env),
      redirectUri: s.redirectUri.read(env) ?? `${apiUrl.replace(/\/+$/, "")}/auth/bigquery/callback`,
    },
    tokenKey,
    readableCacheMs: s.readableCacheSeconds.read(env) * 1000,
    ...(mode === "user" && missing.length
      ? {
          problem:
            `QUARRY_BQ_IDENTITY=user runs BigQuery with each person's own credentials, which needs ${missing.join(", ")}. ` +
            "Set them (see docs/access.md#bigquery-identity), or unset QUARRY_BQ_IDENTITY to use the service account.",
        }
      : {}),
  };
}

export const IDENTITY_DOCS = docsOf(IDENTITY_SETTINGS);

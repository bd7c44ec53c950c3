/**
 * The authorization server: panva's oidc-provider (OpenID-certified, OAuth 2.1 with PKCE, RFC 8707
 * resource indicators, client ID metadata documents), configured for one resource — Quarry's
 * `/mcp` — and one scope, `mcp`. Its login and consent are Quarry's own pages (interaction.ts),
 * where the person signs in with Firebase. oidc-provider is ESM-only; the function compiles to
 * CommonJS with `module: Node16`, which keeps this `import()` a real dynamic import, so the library
 * loads on the first OAuth request and never on a cold start.
 */
import type { default as ProviderClass, Configuration } from "oidc-provider" with {
  "resolution-mode": "import",
};
import * as logger from "firebase-functions/logger";
import { config } from "../../config";
import { FirestoreAdapter } from "./adapter";
import { clientProblem, isLoopbackClientId } from "./clients";
import { oauthKeys, notSetUp } from "./keys";
import { MCP_SCOPE } from "./metadata";
import { adminAuth } from "../../services";

/**
 * Whether the Firebase account `uid` may still be given tokens: it exists, is not disabled, and its
 * sessions were not revoked after `authTime` (seconds, the grant's sign-in).
 */
async function accountUsable(uid: string, authTime: number | undefined): Promise<boolean> {
  const user = await (await adminAuth()).getUser(uid).catch((err: unknown) => {
    if ((err as { code?: string }).code === "auth/user-not-found") return undefined;
    throw err;
  });
  if (!user || user.disabled) return false;
  const validSince = user.tokensValidAfterTime ? Date.parse(user.tokensValidAfterTime) : undefined;
  return authTime === undefined || validSince === undefined || authTime * 1000 >= validSince;
}

export type Provider = ProviderClass;

/** Seconds an authorization code, a login interaction and a sign-in session live. */
const CODE_SECONDS = 60;
const INTERACTION_SECONDS = 15 * 60;
const SESSION_SECONDS = 24 * 3600;

let provider: Promise<Provider> | undefined;

/** The instance's authorization server, made on first use; refused (503) while it is not set up. */
export function oauthProvider(): Promise<Provider> {
  provider ??= makeProvider();
  provider.catch(() => (provider = undefined));
  return provider;
}

/** The path the issuer is served under (oidc-provider's mount path), e.g. `/api/oauth`. */
export function issuerPath(): string {
  return new URL(config().oauth.issuer).pathname.replace(/\/+$/, "");
}

async function makeProvider(): Promise<Provider> {
  const cfg = config();
  if (cfg.oauth.problem) throw notSetUp();
  const [{ default: Provider }, keys] = await Promise.all([import("oidc-provider"), oauthKeys()]);
  const p = new Provider(cfg.oauth.issuer, {
    ...settings(keys.jwks.keys[0].alg),
    jwks: keys.jwks,
    cookies: cookies(keys.cookieKeys),
  });
  // Behind Google's front end: the scheme and host come from X-Forwarded-*.
  p.proxy = true;
  return p;
}

function cookies(keys: string[]): Configuration["cookies"] {
  return { keys, long: { signed: true }, short: { signed: true } };
}

/** Everything but the keys (pure but for the configuration it reads); `alg` is the first key's. */
function settings(alg: string): Configuration {
  const { oauth, inEmulator } = config();
  return {
    adapter: FirestoreAdapter,
    clients: [],
    scopes: [MCP_SCOPE, "offline_access"],
    claims: { openid: ["sub"] },
    // Asked at every code and refresh-token exchange: a disabled or deleted account, or one whose
    // sessions were revoked after this grant's sign-in ("sign out everywhere"), gets nothing more.
    findAccount: async (_ctx, sub, token) =>
      (await accountUsable(sub, (token as { authTime?: number } | undefined)?.authTime))
        ? { accountId: sub, claims: () => ({ sub }) }
        : undefined,
    extraTokenClaims: grantClaim,
    pkce: { required: () => true },
    responseTypes: ["code"],
    clientDefaults: {
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
      id_token_signed_response_alg: alg as "ES256",
    },
    interactions: { url: (_ctx, interaction) => `${issuerPath()}/interaction/${interaction.uid}` },
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed("refresh_token"),
    ttl: {
      AccessToken: oauth.accessTokenSeconds,
      AuthorizationCode: CODE_SECONDS,
      Interaction: INTERACTION_SECONDS,
      Session: SESSION_SECONDS,
      Grant: oauth.refreshTokenSeconds,
      RefreshToken: oauth.refreshTokenSeconds,
    },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: oauth.registration, issueRegistrationAccessToken: false },
      // No logout endpoint: Quarry's sessions here exist only for the consent, and a client's
      // post-logout redirect would be an open redirect from Quarry's origin.
      rpInitiatedLogout: { enabled: false },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => oauth.resource,
        useGrantedResource: () => true,
        getResourceServerInfo: async (_ctx, indicator) => {
          if (indicator !== oauth.resource) {
            const { errors } = await import("oidc-provider");
            throw new errors.InvalidTarget(`tokens are issued for ${oauth.resource} only`);
          }
          return {
            scope: MCP_SCOPE,
            audience: oauth.resource,
            accessTokenTTL: oauth.accessTokenSeconds,
            accessTokenFormat: "jwt",
            jwt: { sign: { alg: alg as "ES256" } },
          };
        },
      },
      clientIdMetadataDocument: {
        enabled: true,
        allowClient: (_ctx, client) => allowed(client.metadata()),
      },
    },
    // No sector identifier documents (pairwise subjects are not offered): never fetched.
    sectorIdentifierUriValidate: () => false,
    fetchResponseBodyLimits: {
      "client_id metadata document": 5 * 1024,
      jwks_uri: 64 * 1024,
      sector_identifier_uri: 0,
    },
    // oidc-provider refuses to fetch from loopback addresses (SSRF); a client beside the local
    // stack serves its document there, so the emulator lets those through.
    fetch: (url, options) => {
      if (inEmulator && isLoopbackClientId(String(url)))
        delete (options as { dispatcher?: unknown }).dispatcher;
      return globalThis.fetch(url, options);
    },
  };
}

/**
 * The consent an access token rests on, as its `grant_id` claim, so /mcp can check it still stands
 * (a person may disconnect the client: access/oauth-grants.ts).
 */
const grantClaim: NonNullable<Configuration["extraTokenClaims"]> = (_ctx, token) => {
  const grantId = (token as { grantId?: string }).grantId;
  return token.kind === "AccessToken" && grantId ? { grant_id: grantId } : undefined;
};

function allowed(metadata: Record<string, unknown>): boolean {
  const problem = clientProblem(metadata, config().oauth.redirectHosts);
  if (problem) logger.warn(`OAuth: client ${String(metadata.client_id)} refused: ${problem}`);
  return !problem;
}

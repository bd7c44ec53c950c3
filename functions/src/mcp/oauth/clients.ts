/**
 * Which OAuth clients the authorization server accepts (pure). A client is known by a client ID
 * metadata document (its `client_id` is the https URL of its JSON metadata, which the server
 * fetches) or, optionally, by dynamic registration; either way its redirect URIs must point at an
 * allowed host, it authenticates with nothing but PKCE (a public client: no shared secret), and it
 * asks for the authorization-code flow only. oidc-provider checks the document's shape itself;
 * these are Quarry's own rules on top.
 */

/** A client's metadata as a document or a registration request carries it (the fields checked here). */
export interface ClientMetadata {
  client_id?: unknown;
  client_name?: unknown;
  redirect_uris?: unknown;
  grant_types?: unknown;
  response_types?: unknown;
  token_endpoint_auth_method?: unknown;
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);
const GRANTS = new Set(["authorization_code", "refresh_token"]);

/** Why a client is refused, in words for its developer; undefined when it is accepted. */
export function clientProblem(meta: ClientMetadata, allowedHosts: readonly string[]): string | undefined {
  const uris = meta.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0 || !uris.every((u) => typeof u === "string")) {
    return "redirect_uris must be a non-empty list of URLs.";
  }
  for (const uri of uris as string[]) {
    const problem = redirectProblem(uri, allowedHosts);
    if (problem) return problem;
  }
  const auth = meta.token_endpoint_auth_method ?? "none";
  if (auth !== "none") {
    return `token_endpoint_auth_method must be "none" (a public client with PKCE), got "${String(auth)}".`;
  }
  const grants = meta.grant_types ?? ["authorization_code"];
  if (!Array.isArray(grants) || !grants.every((g) => GRANTS.has(String(g)))) {
    return "grant_types may hold authorization_code and refresh_token only.";
  }
  const responses = meta.response_types ?? ["code"];
  if (!Array.isArray(responses) || responses.some((r) => r !== "code")) {
    return 'response_types must be ["code"].';
  }
  return undefined;
}

/** A redirect URI's problem: https to an allowed host, or http to a loopback address (RFC 8252 §7.3). */
export function redirectProblem(uri: string, allowedHosts: readonly string[]): string | undefined {
  const url = URL.parse(uri);
  if (!url) return `redirect URI "${uri}" is not a URL.`;
  if (url.hash) return `redirect URI "${uri}" must not have a fragment.`;
  const host = url.hostname.toLowerCase();
  const loopback = LOOPBACK.has(host);
  if (url.protocol !== "https:" && !(url.protocol === "http:" && loopback)) {
    return `redirect URI "${uri}" must use https (http only to a loopback address).`;
  }
  if (!allowedHosts.includes(host) && !allowedHosts.includes(host.replace(/^\[|\]$/g, ""))) {
    return `redirect URI "${uri}" points at ${host}, which is not an allowed host (QUARRY_MCP_OAUTH_REDIRECT_HOSTS).`;
  }
  return undefined;
}

/**
 * Whether a client ID URL may be fetched from here: https anywhere (oidc-provider refuses private
 * and loopback addresses itself), and in the emulator also a loopback URL over http or https, so a
 * client running beside the local stack can serve its document.
 */
export function isLoopbackClientId(clientId: string): boolean {
  const url = URL.parse(clientId);
  return !!url && (url.protocol === "http:" || url.protocol === "https:") && LOOPBACK.has(url.hostname);
}

/**
 * What `/mcp` tells a client about its authorization (pure): the protected-resource metadata
 * (RFC 9728) and the `WWW-Authenticate` challenge that points at it, so a hosted assistant finds
 * the authorization server from a 401 alone (MCP authorization, "discovery").
 */

/** The one scope Quarry's tokens carry: use `/mcp` as the person. */
export const MCP_SCOPE = "mcp";

/** Where the metadata lives under the API's base URL: the bare form and the form suffixed with `/mcp`. */
export const PRM_PATH = "/.well-known/oauth-protected-resource";

export interface ResourceSetup {
  /** The protected resource: the API URL + `/mcp`. */
  resource: string;
  /** The authorization server's issuer URL. */
  issuer: string;
}

/** RFC 9728 §2: the protected resource's metadata document. */
export function protectedResourceMetadata({ resource, issuer }: ResourceSetup) {
  return {
    resource,
    authorization_servers: [issuer],
    scopes_supported: [MCP_SCOPE],
    bearer_methods_supported: ["header"],
    resource_name: "Quarry",
  };
}

/**
 * The URL of the metadata for `resource` (RFC 9728 §3.1: the well-known path between the host and
 * the resource's path). Served by the API too, so it is the API URL + the well-known path + `/mcp`
 * when the function is not at the host's root (the challenge names it, which clients follow first).
 */
export function metadataUrl(apiUrl: string): string {
  return `${apiUrl.replace(/\/+$/, "")}${PRM_PATH}/mcp`;
}

/** The `WWW-Authenticate` value of a 401 from `/mcp`; `error` when a token was sent and refused (RFC 6750 §3.1). */
export function bearerChallenge(opts: { metadata?: string; error?: "invalid_token" }): string {
  const params = [
    `realm="quarry"`,
    ...(opts.error ? [`error="${opts.error}"`] : []),
    ...(opts.metadata ? [`resource_metadata="${opts.metadata}"`, `scope="${MCP_SCOPE}"`] : []),
  ];
  return `Bearer ${params.join(", ")}`;
}

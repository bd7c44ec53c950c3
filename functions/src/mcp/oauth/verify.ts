/**
 * Access tokens of Quarry's authorization server on `/mcp`: JWTs (RFC 9068, `typ: at+jwt`) signed
 * with its keys, checked with jose — the issuer, the audience (this `/mcp` and nothing else, so a
 * token minted for another resource is refused: RFC 8707), the expiry and the `mcp` scope. The
 * token says who (`sub`, the Firebase uid) and through which client; the person then goes through
 * the access gate like any other caller.
 */
import { config } from "../../config";
import { tokenRefused } from "../../access/tokens";
import { oauthKeys } from "./keys";
import { MCP_SCOPE } from "./metadata";

/** Whether a bearer credential claims to come from this authorization server (not yet verified). */
export function isOAuthToken(bearer: string): boolean {
  const { oauth } = config();
  if (!oauth.enabled) return false;
  const payload = bearer.split(".")[1];
  if (!payload) return false;
  try {
    return (
      (JSON.parse(Buffer.from(payload, "base64url").toString()) as { iss?: unknown }).iss === oauth.issuer
    );
  } catch {
    return false;
  }
}

/** The person and client of a valid access token for `/mcp`; a 401 with words otherwise. */
export async function verifyAccessToken(
  bearer: string,
): Promise<{ uid: string; clientId: string; issuedAt: number; grantId: string }> {
  const { oauth } = config();
  const [{ jwtVerify, createLocalJWKSet, errors }, keys] = await Promise.all([import("jose"), oauthKeys()]);
  const verified = await jwtVerify(bearer, createLocalJWKSet(keys.publicJwks), {
    issuer: oauth.issuer,
    audience: oauth.resource,
    typ: "at+jwt",
    algorithms: ["ES256", "RS256", "PS256", "EdDSA"],
  }).catch((err: unknown) => {
    if (err instanceof errors.JWTExpired)
      throw tokenRefused("The OAuth access token has expired: refresh it.");
    if (err instanceof errors.JWTClaimValidationFailed && err.claim === "aud") {
      throw tokenRefused(
        `The OAuth access token is not for this server: its audience must be ${oauth.resource}.`,
      );
    }
    if (err instanceof errors.JOSEError)
      throw tokenRefused("The OAuth access token is not valid: authorize again.");
    throw err;
  });
  const {
    sub,
    client_id: clientId,
    scope,
    iat,
    grant_id: grantId,
  } = verified.payload as {
    sub?: string;
    client_id?: string;
    scope?: string;
    iat?: number;
    grant_id?: string;
  };
  if (!sub || !clientId) throw tokenRefused("The OAuth access token names no person or client.");
  if (
    !String(scope ?? "")
      .split(" ")
      .includes(MCP_SCOPE)
  ) {
    throw tokenRefused(`The OAuth access token lacks the "${MCP_SCOPE}" scope: authorize again.`);
  }
  // Which consent it rests on (provider.ts's extraTokenClaims): checked against the stored grants
  // on each request, so a client the person disconnected stops. A token that names none is refused.
  if (!grantId) throw tokenRefused("The OAuth access token names no grant: authorize again.");
  return { uid: sub, clientId, issuedAt: (iat ?? 0) * 1000, grantId };
}

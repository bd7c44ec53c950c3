/**
 * OAuth 2.1 for hosted MCP clients (docs/mcp.md#oauth-for-hosted-assistants), on the API's own
 * function when `QUARRY_MCP_OAUTH=true`: the protected-resource metadata of `/mcp` (RFC 9728, at
 * the well-known path and its `/mcp`-suffixed form) and, under `/oauth`, the authorization server —
 * oidc-provider behind Quarry's Firebase sign-in and consent pages. No route here is behind the
 * access gate: these are how a person gets a token; the gate judges them on `/mcp`. The library
 * loads on the first request that needs it.
 */
import { Router, type NextFunction, type Request, type RequestHandler, type Response } from "express";
import { config } from "../../config";
import { clientProblem } from "./clients";
import { PRM_PATH, protectedResourceMetadata } from "./metadata";

/** Where the authorization server is mounted under the API (the issuer must end with it). */
const OAUTH_MOUNT = "/oauth";

export function oauthRoutes(): Router {
  const r = Router();
  const enabled: RequestHandler = (_req, _res, next) => next(config().oauth.enabled ? undefined : "router");
  r.use(enabled);
  r.get([PRM_PATH, `${PRM_PATH}/mcp`], (_req, res) => {
    const { oauth } = config();
    res.set("Cache-Control", "public, max-age=3600").json(protectedResourceMetadata(oauth));
  });
  // RFC 8414's form for an issuer with a path, served when the function is at the host's root.
  r.get(`/.well-known/oauth-authorization-server${OAUTH_MOUNT}`, (req, res, next) => {
    req.url = "/.well-known/openid-configuration";
    provider(req, res, next);
  });
  r.use(OAUTH_MOUNT, lazyInteractions());
  r.post(`${OAUTH_MOUNT}/reg`, checkRegistration);
  r.use(OAUTH_MOUNT, provider);
  return r;
}

/** oidc-provider's own routes (metadata, authorize, token, registration, JWKS, revocation). */
function provider(req: Request, res: Response, next: NextFunction): void {
  import("./provider.js")
    .then(async ({ oauthProvider, issuerPath }) => {
      const p = await oauthProvider();
      // oidc-provider takes its mount path from the URL the platform left (the function's own
      // prefix is gone by then): give it the issuer's, so the URLs it writes are the public ones.
      req.originalUrl = `${issuerPath()}${req.url}`;
      handler ??= p.callback();
      return handler(req, res);
    })
    .catch(next);
}
let handler: ((req: Request, res: Response) => Promise<void> | void) | undefined;

function lazyInteractions(): RequestHandler {
  let routes: Promise<RequestHandler> | undefined;
  return (req, res, next) => {
    routes ??= import("./interaction.js").then((m) => m.interactionRoutes());
    routes.then((h) => h(req, res, next), next);
  };
}

/** Dynamic registration (RFC 7591) under Quarry's rules: public clients, allowed redirect hosts. */
function checkRegistration(req: Request, res: Response, next: NextFunction): void {
  if (!config().oauth.registration) {
    next();
    return;
  }
  const problem = clientProblem((req.body ?? {}) as Record<string, unknown>, config().oauth.redirectHosts);
  if (!problem) {
    next();
    return;
  }
  const error = problem.startsWith("redirect") ? "invalid_redirect_uri" : "invalid_client_metadata";
  res.status(400).json({ error, error_description: problem });
}

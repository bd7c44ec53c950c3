/**
 * Personal access tokens for MCP clients (`docs/mcp.md#tokens`): `POST /me/tokens` makes one and
 * shows it once, `GET /me/tokens` lists the caller's (never their secrets), `DELETE /me/tokens/:id`
 * revokes one; `GET /me/oauth-clients` lists the MCP clients the caller allowed through OAuth and
 * `DELETE /me/oauth-clients/:id` disconnects one. Only a signed-in person (a Firebase ID token) manages tokens: a token cannot make
 * more tokens, so a leaked one cannot outlive its own expiry.
 */
import { Router, type Request, type Response } from "express";
import { accessStores } from "../access/gate";
import { QuarryError } from "../errors";
import { callerOf } from "../access/caller";
import { CreateTokenBody, GrantIdParam, TokenIdParam } from "./schemas";
import type { ConnectedClientsAnswer } from "../contract/tokens";
import { parse } from "../runs/schemas";

export function tokenRoutes(): Router {
  const r = Router();
  r.post("/me/tokens", createToken);
  r.get("/me/tokens", listTokens);
  r.delete("/me/tokens/:id", revokeToken);
  r.get("/me/oauth-clients", listClients);
  r.delete("/me/oauth-clients/:id", disconnectClient);
  return r;
}

async function createToken(req: Request, res: Response): Promise<void> {
  const { uid } = callerOf(req);
  const body = parse(CreateTokenBody, req.body ?? {}, "body");
  const { tokens } = await accessStores();
  const made = await tokens.create(uid, body.name, body.expires_in_days);
  res.status(201).json(made);
}

async function listTokens(req: Request, res: Response): Promise<void> {
  const { uid } = callerOf(req);
  const { tokens } = await accessStores();
  res.json({ tokens: await tokens.list(uid) });
}

async function revokeToken(req: Request, res: Response): Promise<void> {
  const { uid } = callerOf(req);
  const id = parse(TokenIdParam, req.params.id, "path");
  const { tokens } = await accessStores();
  if (!(await tokens.revoke(uid, id))) {
    throw new QuarryError("not_found:token", `You hold no token ${id}: GET /me/tokens lists yours.`);
  }
  res.status(204).end();
}

/** The MCP clients the caller allowed through OAuth (`docs/mcp.md#oauth-for-hosted-assistants`). */
async function listClients(req: Request, res: Response): Promise<void> {
  const { uid } = callerOf(req);
  const { oauthGrants } = await accessStores();
  res.json({ clients: await oauthGrants.list(uid) } satisfies ConnectedClientsAnswer);
}

/** Disconnects one: its grant and what was issued under it deleted; its access tokens stop. */
async function disconnectClient(req: Request, res: Response): Promise<void> {
  const { uid } = callerOf(req);
  const id = parse(GrantIdParam, req.params.id, "path");
  const { oauthGrants } = await accessStores();
  if (!(await oauthGrants.revoke(uid, id))) {
    throw new QuarryError(
      "not_found:oauth_client",
      `No connected client ${id}: GET /me/oauth-clients lists yours.`,
    );
  }
  res.status(204).end();
}

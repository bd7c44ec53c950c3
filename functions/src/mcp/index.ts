/**
 * `/mcp`: Quarry as an MCP server on the API's own function (docs/mcp.md). Streamable HTTP served
 * stateless: every POST is answered by a new server and transport, so any instance answers any
 * request and nothing is kept between them. Behind its own authentication (a personal access
 * token or a Firebase ID token; a 401 says how, with `WWW-Authenticate`) and the same access gate
 * as every API route (members, roles, scope, fail closed). The MCP SDK loads on the first request.
 */
import { Router, type NextFunction, type Request, type Response } from "express";
import * as logger from "firebase-functions/logger";
import { requireAccess } from "../access/gate";
import { toErrorBody } from "../errors";
import { mcpChallenge, requireMcpUser } from "./auth";

/** JSON-RPC's "invalid request", and the implementation-defined server error Quarry's refusals use. */
const INVALID_REQUEST = -32600;
const SERVER_ERROR = -32000;

export function mcpRoutes(): Router {
  const r = Router();
  let server: Promise<typeof import("./server.js")> | undefined;
  r.post("/", requireMcpUser, requireAccess, async (req, res) => {
    const { cancelledIds, callKey, cancelCall } = await import("./cancel.js");
    const caller = req.caller!;
    // Stateless: a cancellation arrives on its own request, maybe on another instance.
    await Promise.all(
      cancelledIds(req.body).map((id) => cancelCall(caller.uid, callKey(caller.uid, caller.via, id))),
    );
    server ??= import("./server.js");
    await (await server).serveMcp(req, res);
  });
  // No session, so no stream of server-initiated messages (GET) and nothing to end (DELETE).
  r.all("/", (_req, res) => {
    res
      .status(405)
      .set("Allow", "POST")
      .json(rpcError(SERVER_ERROR, "This MCP server is stateless: send JSON-RPC messages with POST."));
  });
  r.use(mcpErrors);
  return r;
}

function rpcError(code: number, message: string, data?: unknown) {
  return { jsonrpc: "2.0", id: null, error: { code, message, ...(data ? { data } : {}) } };
}

/** Refusals before the MCP server runs (401, 403, 429…) as JSON-RPC errors with Quarry's code and words. */
function mcpErrors(err: unknown, req: Request, res: Response, _next: NextFunction): void {
  const { status, body, expected, headers: given } = toErrorBody(err);
  // Every 401 names how to authenticate (and, with OAuth on, where); a sent token was refused.
  const refused = /invalid_token/.test(String(given?.["WWW-Authenticate"] ?? ""));
  const headers =
    status === 401
      ? { ...given, "WWW-Authenticate": mcpChallenge(refused ? "invalid_token" : undefined) }
      : given;
  if (!expected)
    logger.error("MCP request failed", { path: req.path, err: String((err as Error)?.stack ?? err) });
  if (res.headersSent) {
    res.end();
    return;
  }
  res
    .status(status)
    .set(headers ?? {})
    .json(
      rpcError(status === 400 ? INVALID_REQUEST : SERVER_ERROR, body.message, { error: body.error, status }),
    );
}

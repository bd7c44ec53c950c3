import type { NextFunction, Request, Response } from "express";
import { QuarryError } from "../errors";
import { adminAuth } from "../services";
import type { Via } from "../tools/person";
import { isPersonalToken } from "./tokens";

/** The signed-in caller, set by `requireUser`. */
export interface Caller {
  uid: string;
  email?: string;
  /** Whether the token says the email is verified (an unverified address proves nothing). */
  emailVerified: boolean;
  /** Set by the access gate: the person's role and quota limits. */
  access?: import("./gate").Access;
  /** Came through MCP (with a personal access token, or an ID token). */
  via?: Via;
}

declare module "express-serve-static-core" {
  interface Request {
    caller?: Caller;
  }
}

const BEARER = /^Bearer\s+([A-Za-z0-9._-]+)$/;

/**
 * Verifies the Firebase ID token in `Authorization: Bearer <token>` (revocation checked) and sets
 * `req.caller`. Every route but `/ok` goes through it.
 */
export async function requireUser(req: Request, _res: Response, next: NextFunction): Promise<void> {
  const header = req.get("authorization");
  if (!header) {
    throw new QuarryError(
      "unauthorized:token",
      "Missing Authorization header: send `Authorization: Bearer <Firebase ID token>`.",
    );
  }
  const match = BEARER.exec(header.trim());
  if (!match) {
    throw new QuarryError(
      "unauthorized:token",
      "Malformed Authorization header: expected `Bearer <Firebase ID token>`.",
    );
  }
  if (isPersonalToken(match[1])) {
    // Tokens are for MCP clients (docs/mcp.md); the API and the page sign in with Firebase.
    throw new QuarryError(
      "unauthorized:token",
      "A personal access token works on /mcp only: send a Firebase ID token to the API.",
    );
  }
  req.caller = await verifyIdToken(match[1]);
  next();
}

/** The person a Firebase ID token says (revocation checked), or the 401 that says what to do. */
export async function verifyIdToken(token: string): Promise<Caller> {
  const auth = await adminAuth();
  try {
    const decoded = await auth.verifyIdToken(token, true);
    return { uid: decoded.uid, email: decoded.email, emailVerified: decoded.email_verified === true };
  } catch (err) {
    const code = (err as { code?: string }).code ?? "";
    const why = code.includes("expired")
      ? "The ID token has expired: refresh it (getIdToken(true)) and retry."
      : code.includes("revoked")
        ? "The ID token was revoked: sign in again."
        : "The ID token is not valid: sign in again and send a fresh Firebase ID token.";
    throw new QuarryError("unauthorized:token", why, { cause: err });
  }
}

/** The caller set by `requireUser`; throws if a route forgot the middleware. */
export function callerOf(req: Request): Caller {
  if (!req.caller) throw new QuarryError("unauthorized:token", "Sign in first.");
  return req.caller;
}

/** The caller as a run needs it: who, and what the access gate found; throws if the gate did not run. */
export function runCallerOf(req: Request): {
  uid: string;
  email: string | null;
  access: NonNullable<Caller["access"]>;
  via?: Via;
} {
  const caller = callerOf(req);
  if (!caller.access) throw new QuarryError("unauthorized:token", "Sign in first.");
  return {
    uid: caller.uid,
    email: caller.email ?? null,
    access: caller.access,
    ...(caller.via ? { via: caller.via } : {}),
  };
}

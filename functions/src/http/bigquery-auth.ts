/**
 * Connecting BigQuery in user identity mode (QUARRY_BQ_IDENTITY=user): Google's authorization-code
 * flow for web-server apps, with offline access and PKCE.
 *
 * 1. `POST /auth/bigquery/start` (signed in, behind the access gate) answers `{url}`: Google's
 *    consent page for BigQuery + openid email, with a signed `state` bound to the person (uid,
 *    email, the page to return to, 10 minutes) and a PKCE challenge derived from it.
 * 2. Google sends the browser to `GET /auth/bigquery/callback` (no Firebase token there: the signed
 *    state says who asked). The code is exchanged with the PKCE verifier; the id_token's audience,
 *    issuer and email must be this client's, Google's and the signed-in person's verified email;
 *    the BigQuery scope must have been granted. The refresh token is stored encrypted; the browser
 *    goes back to the page with `?bigquery=connected` (or `?bigquery=error&reason=…`).
 * 3. `DELETE /auth/bigquery` revokes the grant at Google and deletes it here.
 */
import { Router, type Request, type Response } from "express";
import * as logger from "firebase-functions/logger";
import { z } from "zod";
import { CORS_ORIGINS, config } from "../config";
import { QuarryError } from "../errors";
import { forgetReadable, identity, userMode } from "../identity";
import { authorizationUrl, exchangeCode, GrantRefused, revoke } from "../identity/google-oauth";
import { callerOf } from "../access/caller";
import { parse } from "../runs/schemas";

/** A connect flow lives this long between its start and Google's callback. */
const FLOW_MS = 10 * 60_000;
const GOOGLE_ISSUERS = ["https://accounts.google.com", "accounts.google.com"];

const StartBody = z.strictObject({ returnTo: z.string().url().max(2000) });

export function bigQueryAuthRoutes(): Router {
  const r = Router();
  r.post("/auth/bigquery/start", start);
  r.delete("/auth/bigquery", disconnect);
  return r;
}

function requireUserMode(): void {
  if (!userMode()) {
    throw new QuarryError(
      "not_found:route",
      "BigQuery runs with Quarry's service account here (QUARRY_BQ_IDENTITY is not `user`): there is nothing to connect.",
    );
  }
}

function allowedReturn(returnTo: string): boolean {
  const origin = new URL(returnTo).origin;
  const origins = CORS_ORIGINS.value()
    .split(",")
    .map((s) => s.trim());
  return origins.includes(origin);
}

async function start(req: Request, res: Response): Promise<void> {
  requireUserMode();
  const { returnTo } = parse(StartBody, req.body ?? {}, "body");
  if (!allowedReturn(returnTo))
    throw new QuarryError(
      "bad_request:body",
      "returnTo must be a page of this deployment (QUARRY_CORS_ORIGINS).",
    );
  const caller = callerOf(req);
  if (!caller.email || !caller.emailVerified)
    throw new QuarryError(
      "bad_request:body",
      "Connecting BigQuery needs a verified email on your Quarry account.",
    );
  const { crypto } = await identity();
  const state = crypto.signState({
    uid: caller.uid,
    email: caller.email,
    returnTo,
    exp: Date.now() + FLOW_MS,
  });
  const { challenge } = crypto.pkce(state);
  res.json({ url: authorizationUrl(config().identity.oauth, { state, challenge, loginHint: caller.email }) });
}

async function disconnect(req: Request, res: Response): Promise<void> {
  requireUserMode();
  const { uid } = callerOf(req);
  const { store, broker } = await identity();
  const refreshToken = await store.refreshToken(uid);
  if (refreshToken) {
    await revoke(config().identity.oauth, refreshToken).catch((err: unknown) =>
      logger.warn("BigQuery grant not revoked at Google; deleted here", { uid, err: String(err) }),
    );
  }
  await store.delete(uid);
  broker.forget(uid);
  forgetReadable(uid);
  res.json({ connected: false });
}

/** Back to the page, saying how the flow ended. */
function back(res: Response, returnTo: string, outcome: { connected: true } | { error: string }): void {
  const url = new URL(returnTo);
  if ("error" in outcome) {
    url.searchParams.set("bigquery", "error");
    url.searchParams.set("reason", outcome.error);
  } else url.searchParams.set("bigquery", "connected");
  res.redirect(303, url.toString());
}

/** `GET /auth/bigquery/callback`: where Google sends the browser (mounted before sign-in is required). */
export async function bigQueryCallback(req: Request, res: Response): Promise<void> {
  requireUserMode();
  const q = req.query as Record<string, string | undefined>;
  const { crypto, store, broker } = await identity();
  const flow = typeof q.state === "string" ? crypto.verifyState(q.state) : undefined;
  if (!flow) {
    res
      .status(400)
      .type("text/plain")
      .send("This Connect BigQuery link is not valid or has expired: start again from Quarry.");
    return;
  }
  if (q.error || typeof q.code !== "string") return back(res, flow.returnTo, { error: "denied" });
  const oauth = config().identity.oauth;
  let got;
  try {
    got = await exchangeCode(oauth, q.code, crypto.pkce(q.state!).verifier);
  } catch (err) {
    logger.warn("BigQuery consent: code exchange failed", {
      uid: flow.uid,
      err: err instanceof GrantRefused ? err.reason : String(err),
    });
    return back(res, flow.returnTo, { error: "exchange" });
  }
  const c = got.claims;
  const sameAccount =
    c.aud === oauth.clientId &&
    GOOGLE_ISSUERS.includes(String(c.iss)) &&
    (c.email_verified === true || c.email_verified === "true") &&
    String(c.email).toLowerCase() === flow.email.toLowerCase();
  const problem = !sameAccount
    ? "wrong_account"
    : !got.bigqueryGranted
      ? "scope"
      : !got.refreshToken
        ? "offline"
        : undefined;
  if (problem) {
    // Nothing is kept: the grant just made is given back.
    await revoke(oauth, got.refreshToken ?? got.token).catch(() => undefined);
    return back(res, flow.returnTo, { error: problem });
  }
  await store.put(flow.uid, flow.email, got.refreshToken!);
  broker.forget(flow.uid);
  forgetReadable(flow.uid);
  back(res, flow.returnTo, { connected: true });
}

/**
 * The authorization server's interactions (login, then consent), as express routes under the
 * issuer's `/interaction/:uid`. oidc-provider sends the browser here with a signed, path-scoped
 * cookie; the person signs in with Firebase (pages.ts), the ID token is verified with revocation
 * checked, and its uid becomes the account; then they allow the client its `mcp` scope on
 * Quarry's `/mcp`, and oidc-provider redirects to the client with the code.
 */
import { Router, type Request, type Response } from "express";
import { config } from "../../config";
import { QuarryError } from "../../errors";
import { adminAuth } from "../../services";
import { verifyIdToken } from "../../access/caller";
import { consentPage, errorPage, loginPage } from "./pages";
import { oauthProvider, issuerPath, type Provider } from "./provider";

type Details = Awaited<ReturnType<Provider["interactionDetails"]>>;

export function interactionRoutes(): Router {
  const r = Router();
  r.get("/interaction/:uid", (req, res) => step(req, res, showPage));
  r.post("/interaction/:uid/login", (req, res) => step(req, res, login));
  r.post("/interaction/:uid/confirm", (req, res) => step(req, res, confirm));
  r.post("/interaction/:uid/abort", (req, res) =>
    step(req, res, (p) =>
      p.interactionFinished(req, res, { error: "access_denied", error_description: "The person said no." }),
    ),
  );
  return r;
}

/** Runs one step; a lost or expired interaction (or any refusal) is a page that says so. */
async function step(
  req: Request,
  res: Response,
  run: (p: Provider, d: Details, req: Request, res: Response) => Promise<unknown>,
): Promise<void> {
  try {
    const provider = await oauthProvider();
    const details = await provider.interactionDetails(req, res);
    if (details.uid !== req.params.uid) throw new Error("interaction mismatch");
    await run(provider, details, req, res);
  } catch (err) {
    if (res.headersSent) return;
    const status = err instanceof QuarryError ? 503 : 400;
    const why =
      err instanceof QuarryError
        ? err.message
        : "This sign-in has expired or is not this browser's: start again from your assistant.";
    res.status(status).type("html").send(errorPage(why));
  }
}

async function showPage(p: Provider, d: Details, req: Request, res: Response, error?: string): Promise<void> {
  const base = `${issuerPath()}/interaction/${d.uid}`;
  const clientId = String(d.params.client_id);
  const client = await p.Client.find(clientId);
  const clientName = client?.clientName ?? clientId;
  // Never framed by another site (the consent must be the person's own click).
  res.set({
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "frame-ancestors 'none'",
  });
  if (d.prompt.name === "login") {
    const { emulators, inEmulator, oauth } = config();
    const identityToolkit =
      inEmulator && emulators.auth
        ? `http://${emulators.auth}/identitytoolkit.googleapis.com/v1`
        : "https://identitytoolkit.googleapis.com/v1";
    res
      .status(error ? 401 : 200)
      .type("html")
      .send(
        loginPage({
          action: `${base}/login`,
          identityToolkit,
          apiKey: oauth.webApiKey!,
          clientName,
          clientId,
          error,
        }),
      );
    return;
  }
  const email = d.session?.accountId
    ? await adminAuth().then((a) =>
        a.getUser(d.session!.accountId).then(
          (u) => u.email,
          () => undefined,
        ),
      )
    : undefined;
  res
    .type("html")
    .send(
      consentPage({ action: `${base}/confirm`, abortAction: `${base}/abort`, clientName, clientId, email }),
    );
}

/** The ID token from the page: verified (revocation too), its uid the account. */
async function login(p: Provider, d: Details, req: Request, res: Response): Promise<void> {
  if (d.prompt.name !== "login") throw new Error("not a login step");
  const idToken = formField(req, "id_token");
  const caller = idToken ? await verifyIdToken(idToken).catch(() => undefined) : undefined;
  if (!caller) {
    await showPage(p, d, req, res, "That sign-in did not work: sign in again.");
    return;
  }
  await p.interactionFinished(
    req,
    res,
    { login: { accountId: caller.uid } },
    { mergeWithLastSubmission: false },
  );
}

/** Allow: a grant of the scopes and resource the client asked for (only `mcp` on `/mcp` exist). */
async function confirm(p: Provider, d: Details, req: Request, res: Response): Promise<void> {
  if (d.prompt.name !== "consent" || !d.session) throw new Error("not a consent step");
  const grant = d.grantId
    ? await p.Grant.find(d.grantId)
    : new p.Grant({ accountId: d.session.accountId, clientId: String(d.params.client_id) });
  if (!grant) throw new Error("grant gone");
  const missing = d.prompt.details as {
    missingOIDCScope?: string[];
    missingResourceScopes?: Record<string, string[]>;
  };
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(" "));
  for (const [resource, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
    grant.addResourceScope(resource, scopes.join(" "));
  }
  const grantId = await grant.save();
  await p.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
}

/** A field of the posted form, whether the platform parsed the body already or not. */
function formField(req: Request, name: string): string | undefined {
  const body = req.body as Record<string, unknown> | undefined;
  if (body && typeof body === "object" && typeof body[name] === "string") return body[name] as string;
  const raw = (req as Request & { rawBody?: Buffer }).rawBody;
  return raw ? (new URLSearchParams(raw.toString()).get(name) ?? undefined) : undefined;
}

/**
 * A loopback stand-in for Google's OAuth 2.0 endpoints for web-server apps: the authorization
 * endpoint (the browser arrives with client_id, redirect_uri, scope, state, a PKCE S256 challenge,
 * access_type=offline; it is sent back to redirect_uri with a code, or `error=access_denied`), the
 * token endpoint (form posts: `authorization_code` with the PKCE verifier and the client's
 * secret; `refresh_token`; `invalid_grant` for a used, unknown or revoked grant) and the
 * revocation endpoint. It knows nothing about Quarry's code. Tests steer it like a person would
 * (the Google account the browser is signed in as, refusing consent, unticking BigQuery) and like
 * Google would (expiring access tokens early, a revoked grant); `principalOf` tells the BigQuery
 * stand-in whose an access token is.
 */
import { createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

const BIGQUERY_SCOPE = "https://www.googleapis.com/auth/bigquery";

interface Grant {
  email: string;
  scopes: string[];
  revoked: boolean;
}
interface PendingCode {
  grant: Grant;
  challenge: string;
  redirectUri: string;
  offline: boolean;
  used: boolean;
}

const token = (prefix: string) => `${prefix}.${randomBytes(24).toString("base64url")}`;

export class GoogleOAuthStandin {
  url = "";
  private server?: Server;
  private readonly codes = new Map<string, PendingCode>();
  private readonly refreshTokens = new Map<string, Grant>();
  private readonly accessTokens = new Map<string, { grant: Grant; expiresAt: number; expired: boolean }>();
  /** Every token this stand-in issued (access and refresh), to scan stored data and logs for leaks. */
  readonly issued: string[] = [];
  /** Revocation calls: whose grant each revoked (undefined: an unknown token). */
  readonly revocations: (string | undefined)[] = [];
  /** Token endpoint calls by grant type, in order (their bodies are not kept: they hold secrets). */
  readonly grants: { type: string; ok: boolean }[] = [];
  /** The Google account the browser is signed in as; default: the request's login_hint. */
  browserAccount?: string;
  /** The person refuses consent on the next visit. */
  refuseNext = false;
  /** The person unticks the BigQuery scope on the next visit (granular consent). */
  withoutBigQueryNext = false;
  /** Lifetime of issued access tokens, seconds. */
  accessTtlSeconds = 3599;

  constructor(
    readonly clientId: string,
    readonly clientSecret: string,
  ) {}

  get authorizationUrl(): string {
    return `${this.url}/o/oauth2/v2/auth`;
  }
  get tokenUrl(): string {
    return `${this.url}/token`;
  }
  get revokeUrl(): string {
    return `${this.url}/revoke`;
  }

  /** The Google account an access token belongs to, if it is valid now (unexpired, grant not revoked). */
  principalOf(accessToken: string): string | undefined {
    const t = this.accessTokens.get(accessToken);
    if (!t || t.expired || t.expiresAt <= Date.now() || t.grant.revoked) return undefined;
    return t.grant.email;
  }
  /** Google stops accepting `email`'s access tokens now (as if their hour were over). */
  expireAccessTokens(email: string): void {
    for (const t of this.accessTokens.values()) if (t.grant.email === email) t.expired = true;
  }
  /** The person removes Quarry's access in their Google account: every grant of theirs is revoked. */
  revokeGrantsOf(email: string): void {
    for (const g of this.refreshTokens.values()) if (g.email === email) g.revoked = true;
  }
  /** Whether `email` has a grant that still works. */
  hasGrant(email: string): boolean {
    return [...this.refreshTokens.values()].some((g) => g.email === email && !g.revoked);
  }

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      void this.handle(req, res).catch((e: unknown) =>
        json(res, 500, { error: "server_error", error_description: String(e) }),
      );
    });
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
    return this.url;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", this.url);
    if (req.method === "GET" && url.pathname === "/o/oauth2/v2/auth")
      return this.authorize(url.searchParams, res);
    let raw = "";
    for await (const chunk of req) raw += chunk;
    const form = new URLSearchParams(raw);
    if (req.method === "POST" && url.pathname === "/token") return this.tokenEndpoint(form, res);
    if (req.method === "POST" && url.pathname === "/revoke") return this.revoke(form, res);
    json(res, 404, { error: "not_found" });
  }

  private authorize(q: URLSearchParams, res: ServerResponse): void {
    if (q.get("client_id") !== this.clientId) {
      res.writeHead(400, { "content-type": "text/plain" }).end("Error 401: invalid_client");
      return;
    }
    const redirect = new URL(q.get("redirect_uri") ?? "");
    const state = q.get("state");
    if (state) redirect.searchParams.set("state", state);
    if (
      q.get("response_type") !== "code" ||
      q.get("code_challenge_method") !== "S256" ||
      !q.get("code_challenge")
    ) {
      res.writeHead(400, { "content-type": "text/plain" }).end("Error 400: invalid_request");
      return;
    }
    if (this.refuseNext) {
      this.refuseNext = false;
      redirect.searchParams.set("error", "access_denied");
    } else {
      let scopes = (q.get("scope") ?? "").split(/\s+/).filter(Boolean);
      if (this.withoutBigQueryNext) {
        this.withoutBigQueryNext = false;
        scopes = scopes.filter((s) => s !== BIGQUERY_SCOPE);
      }
      const email = (this.browserAccount ?? q.get("login_hint") ?? "").toLowerCase();
      const code = token("code");
      this.codes.set(code, {
        grant: { email, scopes, revoked: false },
        challenge: q.get("code_challenge")!,
        redirectUri: q.get("redirect_uri")!,
        offline: q.get("access_type") === "offline",
        used: false,
      });
      redirect.searchParams.set("code", code);
      redirect.searchParams.set("scope", scopes.join(" "));
    }
    res.writeHead(302, { location: redirect.toString() }).end();
  }

  private tokenEndpoint(form: URLSearchParams, res: ServerResponse): void {
    const type = form.get("grant_type") ?? "";
    const fail = (status: number, error: string, description: string) => {
      this.grants.push({ type, ok: false });
      json(res, status, { error, error_description: description });
    };
    if (form.get("client_id") !== this.clientId || form.get("client_secret") !== this.clientSecret)
      return fail(401, "invalid_client", "The OAuth client was not found.");
    if (type === "authorization_code") {
      const pending = this.codes.get(form.get("code") ?? "");
      if (!pending || pending.used) return fail(400, "invalid_grant", "Malformed auth code.");
      pending.used = true;
      if (form.get("redirect_uri") !== pending.redirectUri)
        return fail(400, "redirect_uri_mismatch", "Bad Request");
      const verifier = form.get("code_verifier") ?? "";
      if (createHash("sha256").update(verifier).digest("base64url") !== pending.challenge)
        return fail(400, "invalid_grant", "Invalid code verifier.");
      const refresh = pending.offline ? token("1//refresh") : undefined;
      if (refresh) {
        this.refreshTokens.set(refresh, pending.grant);
        this.issued.push(refresh);
      }
      this.grants.push({ type, ok: true });
      return json(res, 200, {
        ...this.access(pending.grant),
        ...(refresh ? { refresh_token: refresh } : {}),
        id_token: this.idToken(pending.grant.email),
      });
    }
    if (type === "refresh_token") {
      const grant = this.refreshTokens.get(form.get("refresh_token") ?? "");
      if (!grant || grant.revoked) return fail(400, "invalid_grant", "Token has been expired or revoked.");
      this.grants.push({ type, ok: true });
      return json(res, 200, this.access(grant));
    }
    fail(400, "unsupported_grant_type", "Invalid grant_type.");
  }

  private access(grant: Grant) {
    const t = token("ya29.access");
    this.accessTokens.set(t, { grant, expiresAt: Date.now() + this.accessTtlSeconds * 1000, expired: false });
    this.issued.push(t);
    return {
      access_token: t,
      expires_in: this.accessTtlSeconds,
      scope: grant.scopes.join(" "),
      token_type: "Bearer",
    };
  }

  /** An id_token as Google shapes it (its signature is a placeholder: clients read it from the token endpoint over TLS). */
  private idToken(email: string): string {
    const part = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
    const now = Math.floor(Date.now() / 1000);
    return [
      part({ alg: "RS256", kid: "standin", typ: "JWT" }),
      part({
        iss: "https://accounts.google.com",
        aud: this.clientId,
        azp: this.clientId,
        sub: createHash("sha256").update(email).digest("hex").slice(0, 21),
        email,
        email_verified: true,
        iat: now,
        exp: now + 3600,
      }),
      randomBytes(32).toString("base64url"),
    ].join(".");
  }

  private revoke(form: URLSearchParams, res: ServerResponse): void {
    const t = form.get("token") ?? "";
    const grant = this.refreshTokens.get(t) ?? this.accessTokens.get(t)?.grant;
    this.revocations.push(grant?.email);
    if (!grant) return json(res, 400, { error: "invalid_token", error_description: "Bad Request" });
    grant.revoked = true;
    json(res, 200, {});
  }
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8" }).end(JSON.stringify(body));
}

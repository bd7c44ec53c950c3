/**
 * An MCP client's side of OAuth for the tests: an `OAuthClientProvider` (the MCP SDK's interface)
 * whose client is known by a client ID metadata document served over HTTPS on loopback (with the
 * stack's throwaway certificate, which the functions emulator trusts), and a browser's steps on
 * the authorization server's pages done over HTTP with a cookie jar: follow the redirects, sign in
 * with Firebase Auth as the page's script does (the Auth emulator's REST API), post the ID token,
 * allow, and catch the redirect back with the code.
 */
import { readFileSync } from "node:fs";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import path from "node:path";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";

/** Where the client says the browser comes back; never served — the test reads the redirect. */
export const REDIRECT_URI = "http://127.0.0.1:1/callback";

export interface MetadataServer {
  url: string;
  close(): Promise<void>;
}

/** Serves `metadata(url)` as the client ID metadata document at an https loopback URL. */
export async function serveClientMetadata(
  certFile: string,
  metadata: (url: string) => Record<string, unknown>,
): Promise<MetadataServer> {
  const key = readFileSync(path.join(path.dirname(certFile), "key.pem"));
  const server = createServer({ key, cert: readFileSync(certFile) }, (req, res) => {
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}${req.url}`;
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(metadata(url)));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `https://127.0.0.1:${port}/oauth/client.json`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** What a client ID metadata document says about a public MCP client. */
export function clientDocument(
  clientId: string,
  name = "Quarry OAuth test",
): OAuthClientMetadata & { client_id: string } {
  return {
    client_id: clientId,
    client_name: name,
    redirect_uris: [REDIRECT_URI],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
  };
}

/** The SDK's provider interface, kept in memory; `authorizationUrl` is where it sent the "browser". */
export class TestOAuthProvider implements OAuthClientProvider {
  authorizationUrl?: URL;
  private info?: OAuthClientInformationMixed;
  private saved?: OAuthTokens;
  private verifier = "";
  constructor(readonly clientMetadataUrl: string) {}
  get redirectUrl() {
    return REDIRECT_URI;
  }
  get clientMetadata() {
    return clientDocument(this.clientMetadataUrl);
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/** A browser's cookies and redirects, over fetch. */
export class Browser {
  private cookies = new Map<string, string>();

  /** Follows redirects from `url` until a page, or the client's redirect URI (returned, not fetched). */
  async go(url: string, init: RequestInit = {}): Promise<{ url: string; status: number; html: string }> {
    let at = url;
    let req = init;
    for (let hops = 0; hops < 20; hops++) {
      if (at.startsWith(REDIRECT_URI)) return { url: at, status: 302, html: "" };
      const res = await fetch(at, {
        ...req,
        redirect: "manual",
        headers: { ...req.headers, cookie: this.cookie() },
      });
      for (const c of res.headers.getSetCookie()) {
        const [pair] = c.split(";");
        const eq = pair.indexOf("=");
        this.cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1));
      }
      const location = res.headers.get("location");
      if (res.status >= 300 && res.status < 400 && location) {
        at = new URL(location, at).toString();
        req = {};
        continue;
      }
      return { url: at, status: res.status, html: await res.text() };
    }
    throw new Error(`too many redirects from ${url}`);
  }

  /** Posts a form (urlencoded) to `action` (relative to `page`) and follows. */
  post(page: string, action: string, fields: Record<string, string>) {
    return this.go(new URL(action, page).toString(), {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields).toString(),
    });
  }

  private cookie(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }
}

/** An attribute of the first element matching `marker` in a page (HTML entities undone). */
export function attr(html: string, marker: string, name: string): string {
  const at = html.indexOf(marker);
  if (at < 0) throw new Error(`no ${marker} in the page: ${html.slice(0, 500)}`);
  const m = new RegExp(`${name}="([^"]*)"`).exec(html.slice(at));
  if (!m) throw new Error(`no ${name} after ${marker}`);
  return m[1].replace(/&#(\d+);/g, (_, n: string) => String.fromCharCode(Number(n)));
}

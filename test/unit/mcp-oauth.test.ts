/**
 * The pure parts of OAuth for MCP: the protected-resource metadata and the challenge that points
 * at it, Quarry's rules for OAuth clients (redirect hosts, public clients, code flow only), the
 * settings (fail closed when deployed without keys), and the JWKS secret's checks.
 */
import { describe, expect, it } from "vitest";
import { readConfig } from "../../functions/src/config";
import { clientProblem, isLoopbackClientId, redirectProblem } from "../../functions/src/mcp/oauth/clients";
import {
  bearerChallenge,
  metadataUrl,
  protectedResourceMetadata,
} from "../../functions/src/mcp/oauth/metadata";
import { consentPage, escapeHtml, loginPage } from "../../functions/src/mcp/oauth/pages";

const API = "https://us-central1-p.cloudfunctions.net/api";
const HOSTS = ["claude.ai", "127.0.0.1", "localhost"];
const good = {
  client_id: "https://client.example/oauth/client.json",
  client_name: "A client",
  redirect_uris: ["https://claude.ai/api/mcp/auth_callback"],
  grant_types: ["authorization_code", "refresh_token"],
  response_types: ["code"],
  token_endpoint_auth_method: "none",
};

describe("protected-resource metadata (RFC 9728)", () => {
  it("names the resource, its one authorization server and the mcp scope", () => {
    expect(protectedResourceMetadata({ resource: `${API}/mcp`, issuer: `${API}/oauth` })).toMatchObject({
      resource: `${API}/mcp`,
      authorization_servers: [`${API}/oauth`],
      scopes_supported: ["mcp"],
      bearer_methods_supported: ["header"],
    });
    expect(metadataUrl(`${API}/`)).toBe(`${API}/.well-known/oauth-protected-resource/mcp`);
  });

  it("the challenge points at it, with error only when a token was refused", () => {
    const url = metadataUrl(API);
    expect(bearerChallenge({})).toBe('Bearer realm="quarry"');
    expect(bearerChallenge({ metadata: url })).toBe(
      `Bearer realm="quarry", resource_metadata="${url}", scope="mcp"`,
    );
    expect(bearerChallenge({ metadata: url, error: "invalid_token" })).toMatch(
      /^Bearer realm="quarry", error="invalid_token", resource_metadata=/,
    );
  });
});

describe("OAuth clients", () => {
  it("accepts a public code-flow client redirecting to an allowed host", () => {
    expect(clientProblem(good, HOSTS)).toBeUndefined();
    expect(clientProblem({ ...good, redirect_uris: ["http://127.0.0.1:8765/cb"] }, HOSTS)).toBeUndefined();
    expect(clientProblem({ redirect_uris: good.redirect_uris }, HOSTS)).toBeUndefined();
  });

  it("refuses other hosts, http off loopback, fragments, secrets, other grants and response types", () => {
    expect(clientProblem({ ...good, redirect_uris: ["https://evil.example/cb"] }, HOSTS)).toMatch(
      /evil\.example, which is not an allowed host/,
    );
    expect(redirectProblem("http://claude.ai/cb", HOSTS)).toMatch(/must use https/);
    expect(redirectProblem("https://claude.ai/cb#x", HOSTS)).toMatch(/fragment/);
    expect(redirectProblem("not a url", HOSTS)).toMatch(/not a URL/);
    expect(clientProblem({ ...good, redirect_uris: [] }, HOSTS)).toMatch(/non-empty/);
    expect(clientProblem({ ...good, token_endpoint_auth_method: "client_secret_basic" }, HOSTS)).toMatch(
      /must be "none"/,
    );
    expect(clientProblem({ ...good, grant_types: ["client_credentials"] }, HOSTS)).toMatch(/grant_types/);
    expect(clientProblem({ ...good, response_types: ["token"] }, HOSTS)).toMatch(/response_types/);
  });

  it("knows a loopback client id (fetched only in the emulator)", () => {
    expect(isLoopbackClientId("https://127.0.0.1:4000/client.json")).toBe(true);
    expect(isLoopbackClientId("http://localhost/client.json")).toBe(true);
    expect(isLoopbackClientId("https://client.example/client.json")).toBe(false);
  });
});

describe("OAuth settings", () => {
  const base = { GCLOUD_PROJECT: "p", QUARRY_API_URL: API };
  it("hang issuer and resource off the API URL; off by default", () => {
    const { oauth } = readConfig(base);
    expect(oauth).toMatchObject({ enabled: false, issuer: `${API}/oauth`, resource: `${API}/mcp` });
    expect(oauth.redirectHosts).toContain("claude.ai");
  });

  it("fail closed deployed without keys or Web API key, saying what to set", () => {
    const { oauth } = readConfig({ ...base, QUARRY_MCP_OAUTH: "true" });
    expect(oauth.problem).toMatch(/QUARRY_MCP_OAUTH_JWKS.*QUARRY_FIREBASE_API_KEY/);
    const set = readConfig({
      ...base,
      QUARRY_MCP_OAUTH: "true",
      QUARRY_MCP_OAUTH_JWKS: "{}",
      QUARRY_FIREBASE_API_KEY: "k",
    });
    expect(set.oauth.problem).toBeUndefined();
  });
});

describe("the sign-in page", () => {
  it("escapes what it shows and posts only an ID token", () => {
    const html = loginPage({
      action: "/api/oauth/interaction/u1/login",
      identityToolkit: "https://identitytoolkit.googleapis.com/v1",
      apiKey: "k",
      clientName: '<script>alert("x")</script>',
      clientId: "https://claude.ai/oauth/mcp-client.json",
    });
    expect(html).not.toContain('<script>alert("x")</script>');
    expect(html).toContain(escapeHtml('<script>alert("x")</script>'));
    expect(html).toMatch(
      /<form id="done" method="post" action="\/api\/oauth\/interaction\/u1\/login"><input type="hidden" name="id_token">/,
    );
  });

  it("shows who the client is (its metadata URL's host) beside the name it chose, on both pages", () => {
    // A client may call itself anything; its host is what the person can check.
    const posing = { clientName: "Claude", clientId: "https://evil.example/claude.json" };
    const login = loginPage({ action: "/a", identityToolkit: "https://i", apiKey: "k", ...posing });
    const consent = consentPage({ action: "/a", abortAction: "/b", ...posing });
    for (const html of [login, consent]) {
      expect(html).toContain('<strong>Claude</strong> (<span class="client-host">evil.example</span>)');
    }
  });
});

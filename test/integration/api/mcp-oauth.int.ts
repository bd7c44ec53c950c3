/**
 * OAuth for hosted MCP clients, end to end through the functions emulator with the MCP SDK's own
 * OAuth support (`StreamableHTTPClientTransport` with an `authProvider`): a 401 from `/mcp` names
 * the protected-resource metadata, which names the authorization server; the client is known by
 * its client ID metadata document (served here over HTTPS on loopback); PKCE; the person signs in
 * with Firebase on the server's page (the Auth emulator) and allows the client; the code becomes
 * an access token for `/mcp` alone, with which the client lists the tools and asks. A token for
 * another audience is refused (by the server that would mint it, and by `/mcp` when signed
 * anyway); a non-member's token gets 403; audit entries name the OAuth client.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Firestore } from "@google-cloud/firestore";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { importJWK, SignJWT, decodeJwt } from "jose";
import { signUp, type TestUser } from "../../support/auth-emulator";
import {
  attr,
  Browser,
  clientDocument,
  REDIRECT_URI,
  serveClientMetadata,
  TestOAuthProvider,
  type MetadataServer,
} from "../../support/oauth-client";
import { stackEnv } from "../../support/stack-env";
import { accessSeenEverywhere } from "../../support/seed-access";
import { mcpInitialize } from "../../support/mcp-client";
import { call } from "../../support/api-client";

let api: string;
let authUrl: string;
let db: Firestore;
let cimd: MetadataServer;
const open: Client[] = [];

beforeAll(async () => {
  const stack = stackEnv();
  api = stack.urls.api!;
  authUrl = stack.urls.auth!;
  db = new Firestore({
    projectId: stack.env.GCLOUD_PROJECT,
    host: stack.env.FIRESTORE_EMULATOR_HOST,
    ssl: false,
  });
  cimd = await serveClientMetadata(stack.env.QUARRY_TEST_VERTEX_CERT, (url) => clientDocument(url));
});

afterAll(async () => {
  await Promise.all(open.map((c) => c.close().catch(() => {})));
  await cimd?.close();
  await db?.terminate();
});

function transport(provider: TestOAuthProvider) {
  return new StreamableHTTPClientTransport(new URL(`${api}/mcp`), { authProvider: provider });
}

/**
 * The person's part in a browser: from the authorization URL to the code. `idToken` signs in as
 * the page's script would for `person` (email and password to the Auth REST API the page names).
 */
async function authorize(url: URL, person: TestUser, idToken?: string): Promise<string> {
  const browser = new Browser();
  const login = await browser.go(url.toString());
  expect(login.status, `${login.url} ${/<pre>.*<\/pre>/.exec(login.html)?.[0] ?? login.html}`).toBe(200);
  expect(login.html).toContain("Quarry OAuth test");
  let token = idToken;
  if (!token) {
    // What the page's script does: Firebase Auth's signInWithPassword, at the URL the page names.
    const signIn = attr(login.html, 'id="signin"', "data-sign-in");
    expect(
      signIn.startsWith(`${authUrl}/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword`),
    ).toBe(true);
    const r = await fetch(signIn, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: person.email, password: "password123", returnSecureToken: true }),
    });
    token = ((await r.json()) as { idToken: string }).idToken;
  }
  const consent = await browser.post(login.url, attr(login.html, 'id="done"', "action"), {
    id_token: token!,
  });
  expect(consent.status, consent.html).toBe(200);
  expect(consent.html).toContain(person.email);
  const back = await browser.post(consent.url, attr(consent.html, "<form", "action"), { allow: "yes" });
  expect(back.url.startsWith(REDIRECT_URI), back.html).toBe(true);
  const code = new URL(back.url).searchParams.get("code");
  expect(code).toBeTruthy();
  return code!;
}

/** The whole dance with the SDK: the 401, discovery, the login, the code for tokens, connected. */
async function connectThroughOAuth(person: TestUser, idToken?: string) {
  const provider = new TestOAuthProvider(cimd.url);
  const first = new Client({ name: "oauth-test", version: "1.0.0" });
  const t1 = transport(provider);
  await expect(first.connect(t1)).rejects.toBeInstanceOf(UnauthorizedError);
  const authUrlSeen = provider.authorizationUrl!;
  const code = await authorize(authUrlSeen, person, idToken);
  await t1.finishAuth(code);
  const client = new Client({ name: "oauth-test", version: "1.0.0" });
  await client.connect(transport(provider));
  open.push(client);
  return { client, provider, authUrlSeen };
}

/** The refresh token gets nothing more from the authorization server: `invalid_grant`. */
async function expectRefreshRefused(refreshToken: string): Promise<void> {
  const refreshed = await fetch(`${api}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "refresh_token",
      refresh_token: refreshToken,
      client_id: cimd.url,
      resource: `${api}/mcp`,
    }),
  });
  expect(refreshed.status).toBe(400);
  expect(((await refreshed.json()) as { error: string }).error).toBe("invalid_grant");
}

describe("OAuth for hosted MCP clients", () => {
  it("a 401 names the protected-resource metadata, which names the authorization server", async () => {
    const none = await fetch(`${api}/mcp`, {
      method: "POST",
      body: "{}",
      headers: { "content-type": "application/json" },
    });
    expect(none.status).toBe(401);
    const challenge = none.headers.get("www-authenticate")!;
    const metadataUrl = /resource_metadata="([^"]+)"/.exec(challenge)?.[1];
    expect(metadataUrl).toBe(`${api}/.well-known/oauth-protected-resource/mcp`);
    const prm = (await (await fetch(metadataUrl!)).json()) as Record<string, unknown>;
    expect(prm).toMatchObject({
      resource: `${api}/mcp`,
      authorization_servers: [`${api}/oauth`],
      scopes_supported: ["mcp"],
    });
    const as = (await (await fetch(`${api}/oauth/.well-known/openid-configuration`)).json()) as Record<
      string,
      unknown
    >;
    expect(as).toMatchObject({
      issuer: `${api}/oauth`,
      code_challenge_methods_supported: ["S256"],
      client_id_metadata_document_supported: true,
    });
  });

  it("the SDK authorizes with a client ID metadata document, PKCE and Firebase sign-in, then lists tools and asks", async () => {
    const alice = await signUp(authUrl);
    const { client, provider, authUrlSeen } = await connectThroughOAuth(alice);
    // The authorization request the SDK made: the metadata document's URL as client id, S256, our resource.
    expect(authUrlSeen.searchParams.get("client_id")).toBe(cimd.url);
    expect(authUrlSeen.searchParams.get("code_challenge_method")).toBe("S256");
    expect(authUrlSeen.searchParams.get("resource")).toBe(`${api}/mcp`);
    const access = decodeJwt(provider.tokens()!.access_token);
    expect(access).toMatchObject({
      sub: alice.uid,
      aud: `${api}/mcp`,
      iss: `${api}/oauth`,
      client_id: cimd.url,
    });

    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain("ask");
    const res = (await client.callTool({
      name: "ask",
      arguments: { question: "How many orders were placed?" },
    })) as {
      isError?: boolean;
      structuredContent?: { status: string; sql: string[] };
    };
    expect(res.isError).toBeFalsy();
    expect(res.structuredContent?.status).toBe("answered");
    expect(res.structuredContent?.sql.at(-1)).toContain("FROM shop.orders");

    // Audited as an MCP query made through this OAuth client.
    await expect
      .poll(async () => {
        const snap = await db.collection("audit").where("uid", "==", alice.uid).get();
        return snap.docs.map((d) => d.data().via as { channel?: string; clientId?: string } | undefined);
      })
      .toContainEqual({ channel: "mcp", clientId: cimd.url });
  });

  it("a token for another audience is refused: not minted, and 401 on /mcp when signed anyway", async () => {
    const bob = await signUp(authUrl);
    const { provider } = await connectThroughOAuth(bob);
    // The authorization server issues tokens for /mcp only (RFC 8707 invalid_target).
    const elsewhere = "https://elsewhere.example/mcp";
    const url = new URL(`${api}/oauth/auth`);
    for (const [k, v] of Object.entries({
      client_id: cimd.url,
      response_type: "code",
      redirect_uri: REDIRECT_URI,
      scope: "mcp",
      code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
      code_challenge_method: "S256",
      resource: elsewhere,
    }))
      url.searchParams.set(k, v);
    const refused = await new Browser().go(url.toString());
    expect(new URL(refused.url).searchParams.get("error")).toBe("invalid_target");

    // A token signed with the server's own key but for another audience: /mcp refuses it.
    const keys = (await db.collection("oauth").doc("signing-keys").get()).data()!.keys as Record<
      string,
      string
    >[];
    const claims = decodeJwt(provider.tokens()!.access_token);
    const forged = await new SignJWT({ ...claims, aud: elsewhere })
      .setProtectedHeader({ alg: "ES256", typ: "at+jwt", kid: keys[0].kid })
      .sign(await importJWK(keys[0], "ES256"));
    const answer = await mcpInitialize(api, forged);
    expect(answer.status).toBe(401);
    expect(answer.headers.get("www-authenticate")).toMatch(/error="invalid_token".*resource_metadata=/);
    expect(((await answer.json()) as { error: { message: string } }).error.message).toMatch(
      /audience must be/,
    );
    // The same claims for /mcp pass: only the audience differed.
    expect((await mcpInitialize(api, provider.tokens()!.access_token)).status).toBe(200);
  });

  it("revoking the account's sessions ends its access token on /mcp and refuses the refresh", async () => {
    const bea = await signUp(authUrl);
    const { provider } = await connectThroughOAuth(bea);
    const tokens = provider.tokens()!;
    expect((await mcpInitialize(api, tokens.access_token)).status).toBe(200);
    expect(tokens.refresh_token).toBeTruthy();
    // Revocation is recorded to the second: it must fall in a later second than the token's issue
    // (and the sign-in's). Wait for exactly that on the clock, not a fixed time.
    const { iat } = decodeJwt(tokens.access_token) as { iat: number };
    while (Date.now() < (iat + 1) * 1000)
      await new Promise((r) => setTimeout(r, (iat + 1) * 1000 - Date.now()));
    const { initializeApp, deleteApp } = await import("firebase-admin/app");
    const { getAuth } = await import("firebase-admin/auth");
    const app = initializeApp({ projectId: stackEnv().env.GCLOUD_PROJECT }, `oauth-revoke-${Date.now()}`);
    try {
      await getAuth(app).revokeRefreshTokens(bea.uid);
    } finally {
      await deleteApp(app);
    }
    await expect
      .poll(async () => (await mcpInitialize(api, tokens.access_token)).status, { timeout: 20_000 })
      .toBe(401);
    // Refused by one instance; every other's account cache has let go of the old account after this.
    await accessSeenEverywhere();
    const refused = await mcpInitialize(api, tokens.access_token);
    expect(JSON.stringify(await refused.json())).toMatch(/sessions were revoked/);
    // The refresh token gets nothing more from the authorization server.
    await expectRefreshRefused(tokens.refresh_token!);
  });

  it("a person lists the clients they allowed and disconnects one: its token stops on /mcp, its refresh is refused", async () => {
    const cleo = await signUp(authUrl);
    const { provider } = await connectThroughOAuth(cleo);
    const tokens = provider.tokens()!;
    expect((await mcpInitialize(api, tokens.access_token)).status).toBe(200);
    // The access token names the consent it rests on.
    const { grant_id: grantId } = decodeJwt(tokens.access_token) as { grant_id?: string };
    expect(grantId).toBeTruthy();
    const listed = await call(api, "/me/oauth-clients", { token: cleo.idToken });
    expect(listed.status).toBe(200);
    const clients = listed.json.clients as { id: string; clientId: string; clientHost: string }[];
    expect(clients).toHaveLength(1);
    expect(clients[0]).toMatchObject({ id: grantId, clientId: cimd.url, clientHost: new URL(cimd.url).host });
    // Someone else can neither see nor disconnect it; an unknown id is the same not-found.
    const other = await signUp(authUrl);
    expect((await call(api, "/me/oauth-clients", { token: other.idToken })).json.clients).toEqual([]);
    for (const [who, id] of [
      [other, grantId!],
      [cleo, "no-such-grant-0000"],
    ] as const) {
      const refused = await call(api, `/me/oauth-clients/${id}`, { method: "DELETE", token: who.idToken });
      expect(refused.status).toBe(404);
      expect(refused.json.error).toBe("not_found:oauth_client");
    }
    expect((await mcpInitialize(api, tokens.access_token)).status).toBe(200);
    // Disconnected: gone from the list, the access token refused within the access cache's window.
    expect(
      (await call(api, `/me/oauth-clients/${grantId}`, { method: "DELETE", token: cleo.idToken })).status,
    ).toBe(204);
    expect((await call(api, "/me/oauth-clients", { token: cleo.idToken })).json.clients).toEqual([]);
    await expect
      .poll(async () => (await mcpInitialize(api, tokens.access_token)).status, { timeout: 20_000 })
      .toBe(401);
    // Refused by one instance; every other's grant cache has let go of the grant after this.
    await accessSeenEverywhere();
    const refused = await mcpInitialize(api, tokens.access_token);
    expect(JSON.stringify(await refused.json())).toMatch(/disconnected/);
    await expectRefreshRefused(tokens.refresh_token!);
  });

  it("a non-member's token is refused with 403 by the access gate", async () => {
    const outsider = await signUp(authUrl, `oauth-outsider-${Date.now()}@outsider.test`);
    const provider = new TestOAuthProvider(cimd.url);
    const t = transport(provider);
    await expect(new Client({ name: "oauth-test", version: "1.0.0" }).connect(t)).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
    // The door's blocking function refuses their password sign-in, so the page gets the ID token of
    // a sign-in the door let through (as any other Firebase sign-in method would give it).
    await t.finishAuth(await authorize(provider.authorizationUrl!, outsider, outsider.idToken));
    const answer = await mcpInitialize(api, provider.tokens()!.access_token);
    expect(answer.status).toBe(403);
    expect(((await answer.json()) as { error: { data: { error: string } } }).error.data.error).toBe(
      "forbidden:not_member",
    );
  });
});

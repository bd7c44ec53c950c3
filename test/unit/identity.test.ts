/**
 * User identity mode's parts, each against the wire (loopback stand-ins, no emulators): the key's
 * uses (sealed refresh tokens bound to their uid, a signed and expiring flow state, PKCE), the
 * credential broker over Google's token endpoint (a token reused until near its expiry, a fresh one
 * on demand, consent gone → auth:bigquery_consent and the grant deleted, a refused client →
 * auth:bigquery_not_configured), and the BigQuery warehouse with a person's credentials (their
 * token on every call, a 401 answered once with a fresh token, the deployment's callerless reads
 * taking no rows). The whole flow runs in test/integration/api/identity.int.ts.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readConfig } from "../../functions/src/config";
import { QuarryError } from "../../functions/src/errors";
import { TokenCrypto } from "../../functions/src/identity/crypto";
import { CredentialBroker } from "../../functions/src/identity/broker";
import type { CredentialStore } from "../../functions/src/identity/store";
import { BigQueryWarehouse } from "../../functions/src/tools/bigquery/warehouse";
import { FULL_SCOPE } from "../../functions/src/tools/scope";
import { BigQueryStandin } from "../support/bigquery-standin";
import { GoogleOAuthStandin } from "../support/google-oauth-standin";

const key = randomBytes(32).toString("base64");
const oauth = new GoogleOAuthStandin("client-1", "secret-1");
const bq = new BigQueryStandin();
const P = "prj";
const T = { projectId: P, datasetId: "shop", tableId: "orders" };

/** A refresh token for `email`, obtained as the callback does (authorize, then the code exchange). */
async function grantFor(email: string): Promise<string> {
  const crypto = new TokenCrypto(key);
  const state = crypto.signState({ uid: "u", email, returnTo: "http://page", exp: Date.now() + 60_000 });
  const { verifier, challenge } = crypto.pkce(state);
  const auth = new URL(oauth.authorizationUrl);
  for (const [k, v] of Object.entries({
    client_id: "client-1",
    redirect_uri: "http://cb",
    response_type: "code",
    scope: "openid email https://www.googleapis.com/auth/bigquery",
    access_type: "offline",
    code_challenge: challenge,
    code_challenge_method: "S256",
    login_hint: email,
    state,
  }))
    auth.searchParams.set(k, v);
  const code = new URL((await fetch(auth, { redirect: "manual" })).headers.get("location")!).searchParams.get(
    "code",
  )!;
  const { exchangeCode } = await import("../../functions/src/identity/google-oauth");
  const got = await exchangeCode(oauthConfig(), code, verifier);
  expect(got.claims).toMatchObject({ aud: "client-1", email, email_verified: true });
  expect(got.bigqueryGranted).toBe(true);
  return got.refreshToken!;
}

function oauthConfig(secret = "secret-1") {
  return {
    clientId: "client-1",
    clientSecret: secret,
    authorizationUrl: oauth.authorizationUrl,
    tokenUrl: oauth.tokenUrl,
    revokeUrl: oauth.revokeUrl,
    redirectUri: "http://cb",
  };
}

/** The store's interface over a map (its Firestore side runs in the integration test). */
function memoryStore(tokens: Record<string, string>) {
  const deleted: string[] = [];
  const store = {
    refreshToken: async (uid: string) => tokens[uid],
    put: async (uid: string, _email: string, t: string) => void (tokens[uid] = t),
    delete: async (uid: string) => {
      deleted.push(uid);
      delete tokens[uid];
    },
  } as unknown as CredentialStore;
  return { store, deleted };
}

beforeAll(async () => {
  await oauth.start();
  bq.requireBearer((t) => oauth.principalOf(t), { anonymous: "service-account" });
  bq.addTable({ ...T, fields: [{ name: "region", type: "STRING" }], rows: [["north"]] });
  bq.onQuery({
    match: /orders/,
    referencedTables: [T],
    fields: [{ name: "region", type: "STRING" }],
    rows: [["north"]],
  });
  await bq.start();
});
afterAll(async () => {
  await bq.stop();
  await oauth.stop();
});

describe("the token key", () => {
  const crypto = new TokenCrypto(key);
  it("seals a refresh token for one uid only, and refuses a tampered one", () => {
    const sealed = crypto.seal("1//secret", "alice");
    expect(JSON.stringify(sealed)).not.toContain("secret");
    expect(crypto.open(sealed, "alice")).toBe("1//secret");
    expect(() => crypto.open(sealed, "bob")).toThrow();
    expect(() => new TokenCrypto(randomBytes(32).toString("base64")).open(sealed, "alice")).toThrow();
    const flipped = Buffer.from(sealed.data, "base64");
    flipped[0] ^= 1;
    expect(() => crypto.open({ ...sealed, data: flipped.toString("base64") }, "alice")).toThrow();
  });
  it("signs the flow's state: a forged, altered or expired one is refused", () => {
    const state = crypto.signState({
      uid: "alice",
      email: "a@x.com",
      returnTo: "http://p",
      exp: Date.now() + 1000,
    });
    expect(crypto.verifyState(state)).toMatchObject({ uid: "alice", email: "a@x.com" });
    const [body, mac] = state.split(".");
    const altered = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(body, "base64url").toString()), uid: "bob" }),
    );
    expect(crypto.verifyState(`${altered.toString("base64url")}.${mac}`)).toBeUndefined();
    expect(crypto.verifyState(state, Date.now() + 2000)).toBeUndefined();
    expect(new TokenCrypto(randomBytes(32).toString("base64")).verifyState(state)).toBeUndefined();
    expect(crypto.pkce(state)).toEqual(crypto.pkce(state));
    expect(crypto.pkce(state).verifier).not.toEqual(crypto.pkce(`${state}x`).verifier);
  });
});

describe("the credential broker", () => {
  it("mints a token from the stored grant, reuses it, and mints a fresh one when asked", async () => {
    const { store } = memoryStore({ alice: await grantFor("alice@x.com") });
    const broker = new CredentialBroker(oauthConfig(), store);
    const refreshes = () => oauth.grants.filter((g) => g.type === "refresh_token").length;
    const before = refreshes();
    const t1 = await broker.accessToken("alice");
    expect(await broker.accessToken("alice")).toBe(t1);
    expect(refreshes()).toBe(before + 1);
    const t2 = await broker.accessToken("alice", { fresh: true });
    expect(t2).not.toBe(t1);
    expect(oauth.principalOf(t2)).toBe("alice@x.com");
  });
  it("replaces a token five minutes before it expires", async () => {
    const { store } = memoryStore({ alice: await grantFor("alice@x.com") });
    let now = Date.now();
    const broker = new CredentialBroker(oauthConfig(), store, () => now);
    const t1 = await broker.accessToken("alice");
    now += 3599_000 - 4 * 60_000;
    expect(await broker.accessToken("alice")).not.toBe(t1);
  });
  it("without a grant, or with a revoked one, says Connect BigQuery (and forgets the revoked grant)", async () => {
    const { store, deleted } = memoryStore({ bob: await grantFor("bob@x.com") });
    const broker = new CredentialBroker(oauthConfig(), store);
    await expect(broker.accessToken("nobody")).rejects.toMatchObject({ code: "auth:bigquery_consent" });
    oauth.revokeGrantsOf("bob@x.com");
    const err = await broker.accessToken("bob").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(QuarryError);
    expect(err).toMatchObject({
      code: "auth:bigquery_consent",
      message: expect.stringMatching(/Connect BigQuery/),
    });
    expect(deleted).toEqual(["bob"]);
  });
  it("a client Google refuses is the deployment's problem, not the person's: their grant is kept", async () => {
    const { store, deleted } = memoryStore({ carol: await grantFor("carol@x.com") });
    const broker = new CredentialBroker(oauthConfig("wrong-secret"), store);
    await expect(broker.accessToken("carol")).rejects.toMatchObject({ code: "auth:bigquery_not_configured" });
    expect(deleted).toEqual([]);
  });
});

describe("the BigQuery warehouse with a person's credentials", () => {
  const cfg = () =>
    readConfig({
      GOOGLE_CLOUD_PROJECT: P,
      QUARRY_WAREHOUSE: "bigquery",
      QUARRY_BQ_DATASETS: "shop",
      BIGQUERY_EMULATOR_HOST: bq.url.replace("http://", ""),
    }).warehouse;
  const ctx = { userId: "dana", threadId: "t", runId: "r", bytesBilledSoFar: 0, scope: FULL_SCOPE };

  it("runs every call with their token; a token refused mid-way is replaced once; the deployment's reads take no rows", async () => {
    const { store } = memoryStore({ dana: await grantFor("dana@x.com") });
    const broker = new CredentialBroker(oauthConfig(), store);
    const wh = await BigQueryWarehouse.create(cfg(), {
      credentials: broker,
      retry: { attempts: 2, baseDelayMs: 1 },
    });
    bq.requests.length = 0;
    expect((await wh.query("SELECT region FROM shop.orders", ctx)).rows).toEqual([{ region: "north" }]);
    expect(new Set(bq.requests.map((r) => r.principal))).toEqual(new Set(["dana@x.com"]));
    oauth.expireAccessTokens("dana@x.com");
    expect((await wh.describeTable("shop.orders", { userId: "dana" })).sampleRows).toEqual([
      { region: "north" },
    ]);
    bq.requests.length = 0;
    const schema = await wh.describeTable("shop.orders");
    expect(schema.sampleRows).toEqual([]);
    expect(bq.requests.map((r) => [r.principal, r.path])).toEqual([
      ["service-account", `/projects/${P}/datasets/shop/tables/orders`],
    ]);
  });
  it("a person with no consent gets auth:bigquery_consent, never the service account", async () => {
    const { store } = memoryStore({});
    const wh = await BigQueryWarehouse.create(cfg(), {
      credentials: new CredentialBroker(oauthConfig(), store),
    });
    bq.requests.length = 0;
    await expect(
      wh.query("SELECT region FROM shop.orders", { ...ctx, userId: "erin" }),
    ).rejects.toMatchObject({
      code: "auth:bigquery_consent",
    });
    await expect(wh.listTables({ userId: "erin" })).rejects.toMatchObject({ code: "auth:bigquery_consent" });
    expect(bq.requests).toEqual([]);
  });
});

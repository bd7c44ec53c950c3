/**
 * The keys of the authorization server: the private JWKS that signs access tokens (its public half
 * verifies them on `/mcp`) and the keys that sign its cookies. Deployed, they come from
 * `QUARRY_MCP_OAUTH_JWKS` (a secret) and there is no fallback: without it OAuth refuses to run.
 * In the emulator one P-256 key is generated once and kept in Firestore, so every worker process of
 * the functions emulator signs and verifies with the same key.
 */
import { createHash, generateKeyPairSync, hkdfSync, type JsonWebKey } from "node:crypto";
import { config } from "../../config";
import { QuarryError } from "../../errors";
import { firestore } from "../../services";
import { OAUTH_COLLECTION } from "../../access/oauth-grants";

type Jwk = JsonWebKey & { kid: string; alg: string };

export interface OAuthKeys {
  /** Private keys, for oidc-provider's `jwks`. */
  jwks: { keys: Jwk[] };
  /** The same keys' public halves, for verifying tokens. */
  publicJwks: { keys: Jwk[] };
  /** Keys that sign the authorization server's cookies, derived from the first signing key. */
  cookieKeys: string[];
}

const LOCAL_KEYS_DOC = "signing-keys";
const PRIVATE_PARAMS = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"];

let cached: Promise<OAuthKeys> | undefined;

/** The keys, read (or, in the emulator, made) once per instance. */
export function oauthKeys(): Promise<OAuthKeys> {
  cached ??= loadKeys().then(withDerived);
  cached.catch(() => (cached = undefined));
  return cached;
}

async function loadKeys(): Promise<Jwk[]> {
  const cfg = config();
  if (cfg.oauth.jwks) return parseJwks(cfg.oauth.jwks);
  if (!cfg.inEmulator) throw notSetUp();
  const db = await firestore();
  const ref = db.collection(OAUTH_COLLECTION).doc(LOCAL_KEYS_DOC);
  // First writer wins: every worker then reads the same key.
  await ref.create({ keys: [newLocalKey()] }).catch((err: { code?: number }) => {
    if (err.code !== 6 /* ALREADY_EXISTS */) throw err;
  });
  return ((await ref.get()).data() as { keys: Jwk[] }).keys;
}

/** The private keys of a JWKS secret; each needs a `kid` and an `alg`, and its private part. */
function parseJwks(text: string): Jwk[] {
  let keys: unknown;
  try {
    keys = (JSON.parse(text) as { keys?: unknown }).keys;
  } catch {
    throw notSetUp("QUARRY_MCP_OAUTH_JWKS is not JSON");
  }
  if (!Array.isArray(keys) || keys.length === 0) throw notSetUp("QUARRY_MCP_OAUTH_JWKS holds no keys");
  for (const k of keys as Jwk[]) {
    if (!k.kid || !k.alg || !k.d) throw notSetUp("every key of QUARRY_MCP_OAUTH_JWKS needs kid, alg and d");
  }
  return keys as Jwk[];
}

function newLocalKey(): Jwk {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const jwk = privateKey.export({ format: "jwk" });
  const kid = createHash("sha256").update(String(jwk.x)).digest("base64url").slice(0, 16);
  return { ...jwk, kid, alg: "ES256", use: "sig" } as Jwk;
}

function withDerived(keys: Jwk[]): OAuthKeys {
  const publicKeys = keys.map(
    (k) => Object.fromEntries(Object.entries(k).filter(([name]) => !PRIVATE_PARAMS.includes(name))) as Jwk,
  );
  const secret = Buffer.from(String(keys[0].d), "base64url");
  const cookieKey = Buffer.from(hkdfSync("sha256", secret, "", "quarry-oauth-cookies", 32)).toString(
    "base64url",
  );
  return { jwks: { keys }, publicJwks: { keys: publicKeys }, cookieKeys: [cookieKey] };
}

/** The refusal while OAuth is on but cannot run: 503, naming what to set. */
export function notSetUp(why?: string): QuarryError {
  const problem = config().oauth.problem ?? "OAuth for MCP is not set up.";
  return new QuarryError("unavailable:oauth", why ? `${why}. ${problem}` : problem);
}

/**
 * Google Chat's requests (https://developers.google.com/workspace/chat/verify-requests-from-chat):
 * `Authorization: Bearer <JWT>` signed by Google. With a project-number audience the token is
 * Chat's own, issued by `chat@system.gserviceaccount.com`; with an endpoint-URL audience it is a
 * Google ID token whose verified email is `chat@system.gserviceaccount.com`. Both the audience and
 * the issuer are checked (google-auth-library verifies signature, expiry and audience against the
 * certificates fetched from the configured URL); anything else is a 401.
 */
import type { OAuth2Client } from "google-auth-library";
import { config } from "../../config";
import { QuarryError } from "../../errors";

/** Chat's service account: the issuer (or the ID token's email) of every genuine request. */
const CHAT_ISSUER = "chat@system.gserviceaccount.com";
const GOOGLE_ISSUERS = ["https://accounts.google.com", "accounts.google.com"];
/** Certificates are fetched again after this long (Google rotates them over days). */
const CERTS_TTL_MS = 60 * 60_000;

let client: Promise<OAuth2Client> | undefined;
let certs: { url: string; at: number; pems: Promise<Record<string, string>> } | undefined;

const refuse = (why: string) => new QuarryError("unauthorized:chat_signature", why);

function certificates(url: string): Promise<Record<string, string>> {
  if (!certs || certs.url !== url || Date.now() - certs.at > CERTS_TTL_MS) {
    const pems = fetch(url, { signal: AbortSignal.timeout(10_000) }).then(async (res) => {
      if (!res.ok) throw new Error(`HTTP ${res.status} from ${url}`);
      return (await res.json()) as Record<string, string>;
    });
    certs = { url, at: Date.now(), pems };
    pems.catch(() => (certs = undefined));
  }
  return certs.pems;
}

/** Throws `unauthorized:chat_signature` (401) unless `authorization` carries a token from Google Chat for us. */
export async function verifyChatRequest(authorization: string | undefined): Promise<void> {
  const { audience, certsUrl } = config().chat.google;
  const token = /^Bearer\s+([\w-]+\.[\w-]+\.[\w-]+)$/.exec(authorization?.trim() ?? "")?.[1];
  if (!token) throw refuse("Not a Google Chat request: a bearer token from Google Chat is required.");
  const byUrl = audience!.startsWith("https://");
  client ??= import("google-auth-library").then(({ OAuth2Client }) => new OAuth2Client());
  const payload = await (
    await client
  )
    .verifySignedJwtWithCertsAsync(
      token,
      await certificates(certsUrl),
      audience,
      byUrl ? GOOGLE_ISSUERS : [CHAT_ISSUER],
    )
    .then((ticket) => ticket.getPayload())
    .catch((err: unknown) => {
      throw refuse(`The Google Chat token was refused: ${(err as Error).message.split("\n")[0]}`);
    });
  if (byUrl && !(payload?.email === CHAT_ISSUER && payload.email_verified)) {
    throw refuse(`The Google Chat token is not for ${CHAT_ISSUER}.`);
  }
}

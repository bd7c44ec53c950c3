/**
 * The secrets of user identity mode, all derived from one key (`QUARRY_TOKEN_KEY`, 32 bytes, a
 * Secret Manager secret) with HKDF, one subkey per use: refresh tokens are encrypted at rest with
 * AES-256-GCM (the person's uid as associated data, so a ciphertext copied to another person's
 * document does not decrypt), the connect flow's `state` is signed (HMAC-SHA256), and its PKCE
 * verifier is derived from the state, so no flow needs storage between its two requests.
 */
import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  hkdfSync,
  randomBytes,
  timingSafeEqual,
} from "node:crypto";

export interface Sealed {
  /** base64: AES-256-GCM ciphertext. */
  data: string;
  /** base64: the 12-byte nonce. */
  iv: string;
  /** base64: the 16-byte authentication tag. */
  tag: string;
}

/** What the connect flow's state carries (signed, so the callback can trust it). */
export interface FlowState {
  /** The signed-in person who asked to connect. */
  uid: string;
  /** Their verified email: Google's consent must be given by the same account. */
  email: string;
  /** Where the page is: the browser returns there. */
  returnTo: string;
  /** Expiry, ms since the epoch (a flow lives 10 minutes). */
  exp: number;
  nonce: string;
}

const b64url = (b: Buffer) => b.toString("base64url");

export class TokenCrypto {
  private readonly sealKey: Buffer;
  private readonly stateKey: Buffer;
  private readonly pkceKey: Buffer;

  constructor(keyBase64: string) {
    const key = Buffer.from(keyBase64, "base64");
    if (key.length !== 32) throw new Error("QUARRY_TOKEN_KEY must be 32 bytes, base64.");
    const derive = (info: string) => Buffer.from(hkdfSync("sha256", key, "quarry-identity", info, 32));
    this.sealKey = derive("refresh-token");
    this.stateKey = derive("flow-state");
    this.pkceKey = derive("pkce");
  }

  /** Encrypts `secret` for `uid`. */
  seal(secret: string, uid: string): Sealed {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.sealKey, iv);
    cipher.setAAD(Buffer.from(uid, "utf8"));
    const data = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()]);
    return {
      data: data.toString("base64"),
      iv: iv.toString("base64"),
      tag: cipher.getAuthTag().toString("base64"),
    };
  }

  /** Decrypts what `seal` made for `uid`; throws when it was not (another uid, another key, tampered). */
  open(sealed: Sealed, uid: string): string {
    const decipher = createDecipheriv("aes-256-gcm", this.sealKey, Buffer.from(sealed.iv, "base64"));
    decipher.setAAD(Buffer.from(uid, "utf8"));
    decipher.setAuthTag(Buffer.from(sealed.tag, "base64"));
    return Buffer.concat([decipher.update(Buffer.from(sealed.data, "base64")), decipher.final()]).toString(
      "utf8",
    );
  }

  /** The state parameter for a new flow. */
  signState(s: Omit<FlowState, "nonce">): string {
    const body = b64url(Buffer.from(JSON.stringify({ ...s, nonce: b64url(randomBytes(16)) })));
    return `${body}.${b64url(createHmac("sha256", this.stateKey).update(body).digest())}`;
  }

  /** The flow a state belongs to, or undefined when it is forged, garbled or expired. */
  verifyState(state: string, now = Date.now()): FlowState | undefined {
    const [body, mac] = state.split(".");
    if (!body || !mac) return undefined;
    const want = createHmac("sha256", this.stateKey).update(body).digest();
    const got = Buffer.from(mac, "base64url");
    if (got.length !== want.length || !timingSafeEqual(got, want)) return undefined;
    try {
      const s = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as FlowState;
      return typeof s.uid === "string" && typeof s.exp === "number" && s.exp > now ? s : undefined;
    } catch {
      return undefined;
    }
  }

  /** PKCE: the verifier of a flow (secret: derived from its state with the key) and its S256 challenge. */
  pkce(state: string): { verifier: string; challenge: string } {
    const verifier = b64url(createHmac("sha256", this.pkceKey).update(state).digest());
    return { verifier, challenge: b64url(createHash("sha256").update(verifier).digest()) };
  }
}

/**
 * The "Connect your Quarry account" link: `<page>/connect?token=<payload>.<mac>`, where the payload
 * names the chat user (`slack:<team>:<user>`) and when the link expires, and the MAC is an
 * HMAC-SHA256 of the payload with QUARRY_CHAT_LINK_KEY. Only Quarry can make one; the page sends it
 * back with the signed-in person's ID token (`POST /chat/link`), which links that chat user to them.
 * Pure: the caller passes the key and the clock.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { QuarryError } from "../errors";
import type { ChatUserKey } from "./store";

interface LinkPayload {
  /** The chat user. */
  u: ChatUserKey;
  /** Expiry, ms since the epoch. */
  e: number;
}

const mac = (key: string, payload: string) => createHmac("sha256", key).update(payload).digest("base64url");

/** A token linking `user`, valid until `expiresMs`. */
export function signLinkToken(key: string, user: ChatUserKey, expiresMs: number): string {
  const payload = Buffer.from(JSON.stringify({ u: user, e: expiresMs } satisfies LinkPayload)).toString(
    "base64url",
  );
  return `${payload}.${mac(key, payload)}`;
}

const refuse = (why: string) => new QuarryError("bad_request:chat_link", why);

/** The chat user a token links, or `bad_request:chat_link` saying why it cannot be used. */
export function verifyLinkToken(key: string, token: string, nowMs: number): ChatUserKey {
  const [payload, got, ...rest] = token.split(".");
  if (!payload || !got || rest.length) {
    throw refuse("This is not a Quarry connect link: ask Quarry again in the chat for a new one.");
  }
  const expected = Buffer.from(mac(key, payload));
  const given = Buffer.from(got);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw refuse(
      "This connect link was not made by this Quarry: ask Quarry again in the chat for a new one.",
    );
  }
  const parsed = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as Partial<LinkPayload>;
  if (typeof parsed.u !== "string" || typeof parsed.e !== "number")
    throw refuse("This connect link is malformed.");
  if (parsed.e < nowMs) {
    throw refuse("This connect link has expired: ask Quarry again in the chat for a new one.");
  }
  return parsed.u;
}

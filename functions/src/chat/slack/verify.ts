/**
 * Slack's request signing (https://docs.slack.dev/authentication/verifying-requests-from-slack):
 * `X-Slack-Signature: v0=<hex HMAC-SHA256 of "v0:{timestamp}:{raw body}" with the signing secret>`
 * and `X-Slack-Request-Timestamp`. A request more than five minutes from now is refused (a replay),
 * and the signature is compared in constant time. Pure: the caller passes the clock.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { QuarryError } from "../../errors";

/** How far a request's timestamp may be from now (Slack's own advice: five minutes). */
const SLACK_MAX_AGE_S = 5 * 60;

/** The signature Slack would send for `body` at `timestamp`. */
export function slackSignature(secret: string, timestamp: string, body: string | Buffer): string {
  const mac = createHmac("sha256", secret);
  mac.update(`v0:${timestamp}:`);
  mac.update(body);
  return `v0=${mac.digest("hex")}`;
}

const refuse = (why: string) => new QuarryError("unauthorized:chat_signature", why);

/**
 * Throws `unauthorized:chat_signature` (401) unless the request is Slack's, signed with `secret`,
 * within {@link SLACK_MAX_AGE_S} of `nowMs`.
 */
export function verifySlackRequest(
  secret: string,
  headers: { signature?: string; timestamp?: string },
  rawBody: Buffer | undefined,
  nowMs: number,
): void {
  const { signature, timestamp } = headers;
  if (!signature || !timestamp || !rawBody) {
    throw refuse("Not a signed Slack request: X-Slack-Signature and X-Slack-Request-Timestamp are required.");
  }
  const seconds = Number(timestamp);
  if (!/^\d{1,12}$/.test(timestamp) || Math.abs(nowMs / 1000 - seconds) > SLACK_MAX_AGE_S) {
    throw refuse("The Slack request's timestamp is more than five minutes from now: refused as a replay.");
  }
  const expected = Buffer.from(slackSignature(secret, timestamp, rawBody));
  const got = Buffer.from(signature);
  if (got.length !== expected.length || !timingSafeEqual(got, expected)) {
    throw refuse("The Slack request's signature does not match: check QUARRY_SLACK_SIGNING_SECRET.");
  }
}

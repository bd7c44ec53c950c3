/**
 * Test-side Slack: requests to Quarry's `/slack/*` signed exactly as Slack signs them (`v0` HMAC of
 * `v0:{timestamp}:{raw body}`), event payloads shaped as the Events API sends them, and what the
 * Web API stand-in recorded.
 */
import { createHmac, randomUUID } from "node:crypto";
import { SLACK_TEST, SLACK_URL_ENV, type SlackCall } from "./slack-standin";

/** Posts `raw` to `path` with Slack's signature headers (at `atSeconds`, now by default). */
export async function slackPost(
  api: string,
  path: string,
  raw: string,
  opts: { contentType?: string; atSeconds?: number; secret?: string } = {},
) {
  const timestamp = String(opts.atSeconds ?? Math.floor(Date.now() / 1000));
  const signature = `v0=${createHmac("sha256", opts.secret ?? SLACK_TEST.signingSecret)
    .update(`v0:${timestamp}:${raw}`)
    .digest("hex")}`;
  const res = await fetch(`${api}${path}`, {
    method: "POST",
    headers: {
      "content-type": opts.contentType ?? "application/json",
      "x-slack-request-timestamp": timestamp,
      "x-slack-signature": signature,
    },
    body: raw,
  });
  return { status: res.status, text: await res.text() };
}

/** An Events API `event_callback` for a message from `user`. */
export function messageEvent(
  user: string,
  text: string,
  opts: {
    channel?: string;
    channelType?: string;
    threadTs?: string;
    type?: string;
    extra?: Record<string, unknown>;
  } = {},
) {
  const ts = `${Math.floor(Date.now() / 1000)}.${randomUUID().replace(/\D/g, "").slice(0, 6).padEnd(6, "0")}`;
  return {
    token: "unused",
    team_id: SLACK_TEST.team,
    api_app_id: "A0QUARRY",
    type: "event_callback",
    event_id: `Ev${randomUUID().replace(/-/g, "").slice(0, 12).toUpperCase()}`,
    event_time: Math.floor(Date.now() / 1000),
    authorizations: [{ team_id: SLACK_TEST.team, user_id: SLACK_TEST.botUser, is_bot: true }],
    event: {
      type: opts.type ?? "message",
      channel_type: opts.channelType ?? "im",
      channel: opts.channel ?? `D${user}`,
      user,
      text,
      ts,
      ...(opts.threadTs ? { thread_ts: opts.threadTs } : {}),
      ...opts.extra,
    },
  };
}

/** An interaction (`block_actions` or `view_submission`) as Slack posts it: form-encoded `payload`. */
export function interactionBody(payload: Record<string, unknown>): string {
  return new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
}

/** What the stand-in recorded for `method` (every call when none is given). */
export async function slackCalls(method?: string): Promise<SlackCall[]> {
  const base = process.env[SLACK_URL_ENV];
  if (!base) throw new Error(`${SLACK_URL_ENV} is not set: run through the integration project.`);
  const res = await fetch(`${base}/_test/calls${method ? `?method=${method}` : ""}`);
  return (await res.json()) as SlackCall[];
}

/** The bytes uploaded to the stand-in as file `id`. */
export async function slackUpload(id: string): Promise<Buffer> {
  const res = await fetch(`${process.env[SLACK_URL_ENV]}/_test/uploads/${id}`);
  if (!res.ok) throw new Error(`no upload ${id}: ${res.status}`);
  return Buffer.from(await res.arrayBuffer());
}

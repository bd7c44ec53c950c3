/**
 * A loopback stand-in of Slack's Web API (https://docs.slack.dev/apis/web-api/): `POST
 * /api/<method>` with `Authorization: Bearer <bot token>` and a form-urlencoded (or JSON) body,
 * answered `{ ok: true, … }` or `{ ok: false, error }` as Slack does — what `@slack/web-api` sends
 * and reads. It lives in vitest's global-setup process; the function reaches it by
 * QUARRY_SLACK_API_URL, the tests read what was posted over `GET /_test/calls?method=<m>` and say who is
 * in a channel with `PUT /_test/channels/<id>` (`{ members: [...] }`; a channel never put is one the
 * app is not in: `channel_not_found`).
 */
import { randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";

/** The test workspace's secrets (the function gets them as settings; tests sign with them). */
export const SLACK_TEST = {
  signingSecret: "test-slack-signing-secret-0123456789",
  botToken: "xoxb-test-quarry-bot",
  linkKey: "test-chat-link-key-0123456789abcdef0123456789",
  team: "T0QUARRY",
  botUser: "U0QUARRYBOT",
};

/** The name under which the stand-in's base URL reaches the tests. */
export const SLACK_URL_ENV = "QUARRY_TEST_SLACK_URL";

/** One recorded Web API call: its method and arguments (JSON-valued fields decoded). */
export interface SlackCall {
  method: string;
  args: Record<string, unknown>;
  ts?: string;
}

const JSON_FIELDS = ["blocks", "view", "attachments", "files"];

function parseArgs(raw: string, type: string | undefined): Record<string, unknown> {
  if (type?.includes("application/json")) return JSON.parse(raw || "{}") as Record<string, unknown>;
  const args: Record<string, unknown> = Object.fromEntries(new URLSearchParams(raw));
  for (const f of JSON_FIELDS) if (typeof args[f] === "string") args[f] = JSON.parse(args[f] as string);
  return args;
}

let tsCounter = 0;
const nextTs = () => `${Math.floor(Date.now() / 1000)}.${String(++tsCounter).padStart(6, "0")}`;

/** `conversations.members`: one page of 2 (so a client pages with `cursor`), or the error Slack gives. */
function members(channels: Map<string, string[]>, args: Record<string, unknown>): Record<string, unknown> {
  const all = channels.get(String(args.channel));
  if (!all) return { ok: false, error: "channel_not_found" };
  const from = Number(args.cursor ?? 0);
  const next = from + 2 < all.length ? String(from + 2) : "";
  return { members: all.slice(from, from + 2), response_metadata: { next_cursor: next } };
}

/** What each method answers (beyond `ok`). */
function answer(
  method: string,
  args: Record<string, unknown>,
  base: string,
  channels: Map<string, string[]>,
): Record<string, unknown> {
  switch (method) {
    case "conversations.members":
      return members(channels, args);
    case "files.getUploadURLExternal": {
      const id = `F${randomUUID().replace(/-/g, "").slice(0, 10).toUpperCase()}`;
      return { upload_url: `${base}/upload/${id}`, file_id: id };
    }
    case "files.completeUploadExternal":
      return { files: args.files };
    case "chat.postMessage": {
      const ts = nextTs();
      return { channel: args.channel, ts, message: { ts, text: args.text } };
    }
    case "chat.postEphemeral":
      return { message_ts: nextTs() };
    case "views.open":
      return { view: { id: `V${randomUUID().slice(0, 8)}` } };
    case "auth.test":
      return { team_id: SLACK_TEST.team, user_id: SLACK_TEST.botUser };
    default:
      return {};
  }
}

/**
 * The external upload URL (`POST /upload/<id>`: the file as the multipart field `body`, as
 * `files.uploadV2` sends it; Slack answers `OK - <length>`), and the tests' read of it (`GET
 * /_test/uploads/<id>`).
 */
async function serveUpload(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  raw: Buffer,
  uploads: Map<string, Buffer>,
  id: string,
): Promise<void> {
  if (req.method === "GET") {
    const bytes = uploads.get(id);
    return void (bytes
      ? res.writeHead(200, { "content-type": "image/png" }).end(bytes)
      : res.writeHead(404).end());
  }
  const form = await new Response(new Uint8Array(raw), {
    headers: { "content-type": String(req.headers["content-type"]) },
  }).formData();
  const file = form.get("body");
  if (!(file instanceof Blob)) return void res.writeHead(400).end("no file in the `body` field");
  const bytes = Buffer.from(await file.arrayBuffer());
  uploads.set(id, bytes);
  res.writeHead(200, { "content-type": "text/plain" }).end(`OK - ${bytes.length}`);
}

export interface SlackStandin {
  url: string;
  calls: SlackCall[];
  /** Bytes uploaded to the external upload URLs, by file id. */
  uploads: Map<string, Buffer>;
  close(): Promise<void>;
}

export async function startSlackStandin(): Promise<SlackStandin> {
  const calls: SlackCall[] = [];
  const uploads = new Map<string, Buffer>();
  const channels = new Map<string, string[]>();
  let base = "";
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://x");
      const send = (status: number, body: unknown) =>
        res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
      if (req.method === "GET" && url.pathname === "/_test/calls") {
        const method = url.searchParams.get("method");
        return send(200, method ? calls.filter((c) => c.method === method) : calls);
      }
      const channel = /^\/_test\/channels\/(\w+)$/.exec(url.pathname);
      if (req.method === "PUT" && channel) {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { members: string[] };
        channels.set(channel[1], body.members);
        return send(200, { ok: true });
      }
      const upload = /^\/(_test\/)?upload(s?)\/(\w+)$/.exec(url.pathname);
      if (upload) return void serveUpload(req, res, Buffer.concat(chunks), uploads, upload[3]);
      const method = /^\/api\/([\w.]+)$/.exec(url.pathname)?.[1];
      if (req.method !== "POST" || !method) return send(404, { ok: false, error: "unknown_method" });
      if (req.headers.authorization !== `Bearer ${SLACK_TEST.botToken}`)
        return send(200, { ok: false, error: "invalid_auth" });
      const args = parseArgs(Buffer.concat(chunks).toString("utf8"), req.headers["content-type"]);
      const result = answer(method, args, base, channels);
      calls.push({ method, args, ...(typeof result.ts === "string" ? { ts: result.ts } : {}) });
      send(200, { ok: true, ...result });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  base = `http://127.0.0.1:${port}`;
  return {
    url: base,
    calls,
    uploads,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

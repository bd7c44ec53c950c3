/**
 * A loopback stand-in of Google Chat's side of an HTTP endpoint app: the certificates Chat's
 * bearer tokens are verified with (`GET /certs`: `{key id: PEM}`, as Google publishes them), tokens
 * signed as Chat signs them (`POST /_test/sign`, RS256 with that key — or with a key nobody
 * published, `?key=rogue`; the private keys never leave this process), and the Chat API's
 * `POST /v1/spaces/<space>/messages` that `@googleapis/chat` calls, recorded for the tests
 * (`GET /_test/messages`; a message sent without a thread name starts a thread, named as Chat names
 * it), and `GET /v1/spaces/<space>/members/<user>` (`spaces.members.get`) for the people the tests
 * put in a space (`PUT /_test/spaces/<space>/members` with `{ members: ["users/…"] }`; anyone else
 * is 404). It lives in vitest's global-setup process.
 */
import { createSign, generateKeyPairSync, randomUUID, type KeyObject } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";

/** The name under which the stand-in's base URL reaches the tests. */
export const GOOGLE_CHAT_URL_ENV = "QUARRY_TEST_GOOGLE_CHAT_URL";
/** The project number the test app's tokens are for (QUARRY_GOOGLE_CHAT_AUDIENCE). */
export const GOOGLE_CHAT_AUDIENCE = "123456789012";
const KID = "test-chat-key-1";

export interface ChatApiCall {
  parent: string;
  /** The thread the message went to, as the API answered (a new one's name when the body named none). */
  thread: string;
  query: Record<string, string>;
  body: Record<string, unknown>;
  authorization?: string;
}

function keyPair() {
  return generateKeyPairSync("rsa", { modulusLength: 2048 });
}

function jwt(key: KeyObject, kid: string, claims: Record<string, unknown>): string {
  const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");
  const now = Math.floor(Date.now() / 1000);
  const signed = `${enc({ alg: "RS256", typ: "JWT", kid })}.${enc({ iat: now, exp: now + 3600, ...claims })}`;
  return `${signed}.${createSign("RSA-SHA256").update(signed).sign(key).toString("base64url")}`;
}

export async function startGoogleChatStandin() {
  const published = keyPair();
  const rogue = keyPair();
  const calls: ChatApiCall[] = [];
  const spaces = new Map<string, string[]>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://x");
      const send = (status: number, body: unknown) =>
        res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
      const raw = Buffer.concat(chunks).toString("utf8");
      if (req.method === "GET" && url.pathname === "/certs") {
        return send(200, { [KID]: published.publicKey.export({ type: "spki", format: "pem" }) });
      }
      if (req.method === "POST" && url.pathname === "/_test/sign") {
        const key = url.searchParams.get("key") === "rogue" ? rogue.privateKey : published.privateKey;
        return send(200, { token: jwt(key, KID, JSON.parse(raw || "{}") as Record<string, unknown>) });
      }
      if (req.method === "GET" && url.pathname === "/_test/messages") return send(200, calls);
      const put = /^\/_test\/(spaces\/[^/]+)\/members$/.exec(url.pathname);
      if (req.method === "PUT" && put) {
        spaces.set(put[1], (JSON.parse(raw) as { members: string[] }).members);
        return send(200, {});
      }
      const member = /^\/v1\/(spaces\/[^/]+)\/members\/([^/]+)$/.exec(url.pathname);
      if (req.method === "GET" && member) {
        const user = `users/${decodeURIComponent(member[2])}`;
        if (spaces.get(member[1])?.includes(user))
          return send(200, {
            name: `${member[1]}/members/${member[2]}`,
            member: { name: user, type: "HUMAN" },
          });
        return send(404, { error: { code: 404, message: "Membership not found.", status: "NOT_FOUND" } });
      }
      const create = /^\/v1\/(spaces\/[^/]+)\/messages$/.exec(url.pathname);
      if (req.method === "POST" && create) {
        const body = JSON.parse(raw || "{}") as Record<string, unknown>;
        const thread = body.thread as { name?: string } | undefined;
        const threadName = thread?.name ?? `${create[1]}/threads/${randomUUID()}`;
        calls.push({
          parent: create[1],
          thread: threadName,
          query: Object.fromEntries(url.searchParams),
          body,
          ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
        });
        return send(200, {
          name: `${create[1]}/messages/${randomUUID()}`,
          ...body,
          thread: { ...thread, name: threadName },
        });
      }
      send(404, { error: { code: 404, message: `no ${req.method} ${url.pathname}`, status: "NOT_FOUND" } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

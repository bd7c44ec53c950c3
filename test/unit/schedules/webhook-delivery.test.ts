/** Posting a schedule's message to its webhook, against a loopback receiver. */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let server: http.Server;
let base: string;
const hits: string[] = [];
let postWebhook: typeof import("../../../functions/src/schedules/delivery").postWebhook;

beforeAll(async () => {
  process.env.GCLOUD_PROJECT ??= "demo-unit";
  ({ postWebhook } = await import("../../../functions/src/schedules/delivery"));
  server = http.createServer((req, res) => {
    hits.push(req.url!);
    req.resume();
    if (req.url === "/moved") return void res.writeHead(302, { location: "/target" }).end();
    if (req.url === "/gone") return void res.writeHead(404).end();
    if (req.url === "/busy") return void res.writeHead(429).end();
    res.writeHead(200).end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((r) => server.close(() => r())));

const msg = { name: "Revenue", threadId: "t1", answer: "Revenue fell.", alert: "revenue fell 20 %" };
const count = (path: string) => hits.filter((h) => h === path).length;

describe("webhook delivery", () => {
  it("delivers once to a receiver that answers 2xx", async () => {
    expect(await postWebhook(`${base}/ok`, msg)).toBeUndefined();
    expect(count("/ok")).toBe(1);
  });

  it("does not follow a redirect, and does not retry it", async () => {
    expect(await postWebhook(`${base}/moved`, msg)).toMatch(/HTTP 302/);
    expect(count("/moved")).toBe(1);
    expect(count("/target")).toBe(0);
  });

  it("does not retry a 4xx other than 429", async () => {
    expect(await postWebhook(`${base}/gone`, msg)).toMatch(/HTTP 404.*check the webhook URL/);
    expect(count("/gone")).toBe(1);
  });

  it("retries 429 three times in all", async () => {
    expect(await postWebhook(`${base}/busy`, msg)).toMatch(/HTTP 429/);
    expect(count("/busy")).toBe(3);
  });

  it("refuses a host name that resolves to this machine, without connecting", async () => {
    const port = new URL(base).port;
    expect(await postWebhook(`http://localhost:${port}/named`, msg)).toMatch(
      /resolves to a private address \((127\.0\.0\.1|::1)\)/,
    );
    expect(count("/named")).toBe(0);
  });
});

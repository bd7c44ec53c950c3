/**
 * Fail closed: the function's app configured with neither QUARRY_ALLOWED_DOMAINS nor QUARRY_ADMINS
 * (served from this process, on the integration stack's emulators) says so when it starts and
 * answers every request 503 `access:not_configured`, naming both settings — even for an admin's
 * verified address; and the local open policy is refused outside the emulator.
 */
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { signUp } from "../../support/auth-emulator";
import { call } from "../../support/api-client";
import { stackEnv } from "../../support/stack-env";

let server: http.Server;
let url: string;

beforeAll(async () => {
  stackEnv();
  for (const k of ["QUARRY_ALLOWED_DOMAINS", "QUARRY_ADMINS", "QUARRY_ACCESS_POLICY"]) delete process.env[k];
  Object.assign(process.env, { QUARRY_WAREHOUSE: "duckdb" });
  const { createApp } = await import("../../../functions/src/app");
  server = http.createServer(createApp());
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
});

describe("no access policy", () => {
  it("says why (what start-up logs) and refuses every request with 503 access:not_configured naming both settings", async () => {
    // What the function logs at start-up (createApp logs it as "Access: …").
    const { accessProblem } = await import("../../../functions/src/access/gate");
    expect(accessProblem()).toMatch(/^Quarry has no access policy yet, so it answers nobody\./);
    const user = await signUp(stackEnv().urls.auth!);
    for (const [method, path, body] of [
      ["GET", "/me"],
      ["POST", "/threads", {}],
      ["POST", "/threads/search", {}],
      ["GET", "/admin/members"],
    ] as const) {
      const res = await call(url, path, { method, token: user.idToken, ...(body ? { body } : {}) });
      expect([path, res.status, res.json?.error]).toEqual([path, 503, "access:not_configured"]);
      expect(String(res.json?.message)).toMatch(/QUARRY_ALLOWED_DOMAINS.*QUARRY_ADMINS/);
    }
    // The health check and the page's configuration stay open.
    expect((await call(url, "/ok")).status).toBe(200);
  });
});

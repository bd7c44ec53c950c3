/**
 * The function's express app (from source) served in the test's own process, on the integration
 * stack's Firestore and Auth emulators and Vertex AI stand-in: another instance beside the
 * emulated function, and one that notices a client's disconnect (the functions emulator never
 * tells a function that its client left).
 */
import { readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { INTEGRATION_ACCESS_ENV } from "./auth-emulator";
import { stackEnv } from "./stack-env";
import { trustCertificate } from "./vertex-standin-cert";

export interface InProcessApp {
  /** Base URL of the API. */
  url: string;
  close(): Promise<void>;
}

/** `env`: settings over the stack's (e.g. the BigQuery engine against a stand-in). */
export async function startInProcessApp(env: Record<string, string> = {}): Promise<InProcessApp> {
  const stack = stackEnv();
  // The function's configuration, as the stack gives it to the emulated function.
  Object.assign(process.env, {
    QUARRY_WAREHOUSE: "duckdb",
    QUARRY_RUN_LEASE_SECONDS: "10",
    VERTEX_AI_EMULATOR_HOST: stack.env.QUARRY_TEST_VERTEX_HOST,
    ...INTEGRATION_ACCESS_ENV,
    ...env,
  });
  trustCertificate(readFileSync(stack.env.QUARRY_TEST_VERTEX_CERT, "utf8"));
  const { createApp } = await import("../../functions/src/app");
  const server = http.createServer(createApp());
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

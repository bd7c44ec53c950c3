import type { TestProject } from "vitest/node";
import { freePort } from "../../scripts/stack.mjs";
import { startFaultProxy } from "./fault-proxy";
import { provideStack } from "./global-helpers";

/**
 * Integration tests: Firestore (Java) + functions + auth emulators on free ports. The function
 * reaches Firestore through a fault-injecting proxy (tests can cut it); tests themselves talk to
 * the emulator directly.
 */
export default async function setup(project: TestProject) {
  const firestorePort = await freePort();
  const proxy = await startFaultProxy("127.0.0.1", firestorePort);
  const teardown = await provideStack(project, {
    services: ["firestore", "functions", "auth"],
    ports: { firestore: firestorePort, functions: "auto", auth: "auto", hub: "auto", logging: "auto" },
    env: { QUARRY_WAREHOUSE: "duckdb", QUARRY_RUN_LEASE_SECONDS: "10" },
    functionsEnv: { FIRESTORE_EMULATOR_HOST: proxy.address },
    extraEnv: { QUARRY_TEST_FAULT_URL: proxy.controlUrl },
  });
  return async () => {
    await teardown();
    await proxy.close();
  };
}

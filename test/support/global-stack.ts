import type { TestProject } from "vitest/node";
import { freePort } from "../../scripts/stack.mjs";
import { apiScript } from "./api-script";
import { startFaultProxy } from "./fault-proxy";
import { provideStack } from "./global-helpers";
import { startVertexStandin } from "./vertex-standin";

/**
 * Integration tests: Firestore (Java) + functions + auth emulators on free ports, the DuckDB sample
 * warehouse, and the loopback Vertex AI stand-in (trusted through NODE_EXTRA_CA_CERTS). The function
 * reaches Firestore through a fault-injecting proxy (tests can cut it); tests themselves talk to the
 * emulator directly.
 */
export default async function setup(project: TestProject) {
  const firestorePort = await freePort();
  const proxy = await startFaultProxy("127.0.0.1", firestorePort);
  const standin = await startVertexStandin({ script: apiScript(), tokenDelayMs: 5, charsPerChunk: 16 });
  try {
    const teardown = await provideStack(project, {
      services: ["firestore", "functions", "auth"],
      ports: {
        firestore: firestorePort,
        functions: "auto",
        auth: "auto",
        hub: "auto",
        logging: "auto",
        eventarc: "auto",
        tasks: "auto",
      },
      env: {
        QUARRY_WAREHOUSE: "duckdb",
        QUARRY_RUN_LEASE_SECONDS: "10",
        VERTEX_AI_EMULATOR_HOST: standin.host,
        NODE_EXTRA_CA_CERTS: standin.certFile,
      },
      functionsEnv: { FIRESTORE_EMULATOR_HOST: proxy.address },
      extraEnv: { QUARRY_TEST_FAULT_URL: proxy.controlUrl },
    });
    return async () => {
      await teardown();
      await standin.stop();
      await proxy.close();
    };
  } catch (err) {
    await standin.stop();
    await proxy.close();
    throw err;
  }
}

import type { TestProject } from "vitest/node";
import { provideStack } from "./global-helpers";
import { startVertexStandin } from "./vertex-standin";
import { e2eScript } from "./e2e-script";

/**
 * Browser tests: the whole local product — Firestore (with firestore.rules), functions, auth and
 * hosting emulators, the DuckDB sample warehouse, and the loopback Vertex AI stand-in the function
 * reaches through VERTEX_AI_EMULATOR_HOST (its self-signed certificate trusted via
 * NODE_EXTRA_CA_CERTS). Answer tokens are streamed with a small delay so a page can watch them.
 */
export default async function setup(project: TestProject) {
  const standin = await startVertexStandin({ script: e2eScript(), tokenDelayMs: 40, charsPerChunk: 12 });
  try {
    const teardown = await provideStack(project, {
      services: ["firestore", "functions", "auth", "hosting"],
      rules: "firestore.rules",
      env: {
        QUARRY_WAREHOUSE: "duckdb",
        VERTEX_AI_EMULATOR_HOST: standin.host,
        NODE_EXTRA_CA_CERTS: standin.certFile,
      },
    });
    return async () => {
      await teardown();
      await standin.stop();
    };
  } catch (err) {
    await standin.stop();
    throw err;
  }
}

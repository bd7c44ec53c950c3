import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

/**
 * Test projects:
 * - unit:        test/unit/**\/*.test.ts and functions/src/**\/*.test.ts — nothing running.
 * - integration: test/integration/**\/*.int.ts — starts Firestore + functions + auth emulators.
 * - rules:       test/rules/**\/*.rules.ts — starts the Firestore emulator.
 * - e2e:         test/e2e/**\/*.e2e.ts — the whole stack plus Chromium (test/support/browser.ts).
 */
export default defineConfig({
  resolve: {
    // The page's contract with the API, from source (as the page's Vite build resolves it).
    alias: {
      "@quarry/functions/contract": fileURLToPath(
        new URL("functions/src/contract/index.ts", import.meta.url),
      ),
    },
  },
  test: {
    // The Admin SDK in test processes must never probe the cloud metadata server.
    env: { METADATA_SERVER_DETECTION: "none" },
    // expect.poll waits on a condition; its default bound (1 s) is a timing assumption that a loaded
    // 2-core machine breaks (a Firestore listener's first snapshot took longer once in CI). The bound
    // is only a failure deadline: a poll still ends as soon as its condition holds.
    expect: { poll: { timeout: 15_000 } },
    // Cancelling a streaming model call leaves a rejection nobody awaits inside the client libraries
    // (LangGraph's task promise with the abort reason, the SDK's stream reader); the function drops
    // these with a process guard (runs/abort.ts). Only these abort echoes are ignored here.
    onUnhandledError(error) {
      const text = `${error.name}: ${error.message}`;
      if (
        /^AbortError: |RunAbortedError|run cancelled by the test|Error reading from the stream/.test(text)
      ) {
        return false;
      }
    },
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["test/unit/**/*.test.ts", "functions/src/**/*.test.ts"],
        },
      },
      {
        extends: true,
        test: {
          name: "integration",
          include: ["test/integration/**/*.int.ts"],
          globalSetup: ["test/support/global-stack.ts"],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
      {
        extends: true,
        test: {
          name: "rules",
          include: ["test/rules/**/*.rules.ts"],
          globalSetup: ["test/support/global-firestore.ts"],
          testTimeout: 30_000,
        },
      },
      {
        extends: true,
        test: {
          name: "e2e",
          include: ["test/e2e/**/*.e2e.ts"],
          // A group of its own, so never beside the integration project (vitest runs the groups one
          // after the other): on 2 cores a browser waiting on a live stream shared the machine with
          // the integration stack's emulators, and twice a page's 30–60 s wait ran out in CI though
          // the same file passes alone and under 4–6 busy loops.
          sequence: { groupOrder: 1 },
          globalSetup: ["test/support/global-full-stack.ts"],
          testTimeout: 120_000,
          hookTimeout: 180_000,
          fileParallelism: false,
        },
      },
    ],
  },
});

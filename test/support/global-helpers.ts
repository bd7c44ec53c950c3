import { appendFileSync, existsSync } from "node:fs";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { ROOT, liveGroups, startStack, type StackOptions } from "../../scripts/stack.mjs";

let guarded = false;
/**
 * If vitest itself is killed (a CI timeout, Ctrl-C), its global teardown never runs: kill every
 * emulator process group still alive, synchronously, as the process goes.
 */
function guardAgainstOrphans(): void {
  if (guarded) return;
  guarded = true;
  const killAll = () => {
    for (const pid of liveGroups.keys()) {
      try {
        process.kill(-pid, "SIGKILL");
      } catch {
        /* already gone */
      }
    }
  };
  process.once("exit", killAll);
  for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.once(sig, () => {
      killAll();
      process.exit(1);
    });
  }
}

/** Starts a stack on free ports for one vitest project and provides its addresses to the tests. */
export async function provideStack(
  project: TestProject,
  { extraEnv, ...options }: StackOptions & { extraEnv?: Record<string, string> },
) {
  const needsFunctions = options.services?.includes("functions");
  if (needsFunctions && !existsSync(path.join(ROOT, "functions/lib/index.js"))) {
    throw new Error("functions/lib is missing: run `npm run build` before the integration tests.");
  }
  guardAgainstOrphans();
  // QUARRY_STACK_LOG=<file> keeps the emulators' output for debugging.
  const logFile = process.env.QUARRY_STACK_LOG;
  const stack = await startStack({
    ports: "auto",
    ...options,
    ...(logFile ? { onOutput: (chunk: Buffer) => appendFileSync(logFile, chunk) } : {}),
  });
  project.provide("stack", { env: { ...stack.env, ...extraEnv }, urls: stack.urls, pids: stack.pids });
  return async () => {
    await stack.stop();
  };
}

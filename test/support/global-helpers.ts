import { appendFileSync, existsSync } from "node:fs";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { ROOT, startStack, type StackOptions } from "../../scripts/stack.mjs";

/** Starts a stack on free ports for one vitest project and provides its addresses to the tests. */
export async function provideStack(
  project: TestProject,
  { extraEnv, ...options }: StackOptions & { extraEnv?: Record<string, string> },
) {
  const needsFunctions = options.services?.includes("functions");
  if (needsFunctions && !existsSync(path.join(ROOT, "functions/lib/index.js"))) {
    throw new Error("functions/lib is missing: run `npm run build` before the integration tests.");
  }
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

import { inject } from "vitest";

/** What a global setup hands to the tests (through vitest's provide/inject). */
export interface ProvidedStack {
  env: Record<string, string>;
  urls: { api?: string; web?: string; auth?: string; firestore?: string };
  pids: number[];
}

declare module "vitest" {
  export interface ProvidedContext {
    stack: ProvidedStack;
  }
}

/**
 * The running stack's addresses, also copied into this worker's process.env so the Admin SDK and
 * other clients find the emulators. Fails with a clear message when no global setup started one.
 */
export function stackEnv(): ProvidedStack {
  const stack = inject("stack");
  if (!stack?.env?.FIRESTORE_EMULATOR_HOST) {
    throw new Error(
      "No emulator stack: run this file through its vitest project (`npx vitest run --project integration`), " +
        "whose global setup starts the emulators.",
    );
  }
  Object.assign(process.env, stack.env);
  return stack;
}

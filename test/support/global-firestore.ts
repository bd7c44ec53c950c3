import type { TestProject } from "vitest/node";
import { provideStack } from "./global-helpers";

/** Rules tests: only the Firestore emulator (rules are loaded per test environment). */
export default function setup(project: TestProject) {
  return provideStack(project, { services: ["firestore"] });
}

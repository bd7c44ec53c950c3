import type { TestProject } from "vitest/node";
import { provideStack } from "./global-helpers";

/** Integration tests: Firestore (Java) + functions + auth emulators on free ports. */
export default function setup(project: TestProject) {
  return provideStack(project, { services: ["firestore", "functions", "auth"] });
}

import type { TestProject } from "vitest/node";
import { provideStack } from "./global-helpers";

/** Browser tests: the whole local product. */
export default function setup(project: TestProject) {
  return provideStack(project, { services: ["firestore", "functions", "auth", "hosting"] });
}

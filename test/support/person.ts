/**
 * The person a test run runs for: `configurable.quarry_person` as the server sets it. A run without
 * one sees no data (fails closed), so graph tests that query pass this.
 */
import { PERSON_KEY, type RunPerson } from "../../functions/src/tools/person";
import { FULL_SCOPE, type Scope } from "../../functions/src/tools/scope";

export function personConfig(uid = "user-1", scope: Scope = FULL_SCOPE, email: string | null = null) {
  return { [PERSON_KEY]: { uid, email, scope } satisfies RunPerson };
}

/**
 * Admission: what every channel's run or direct query goes through before it touches data — a
 * person with no data in scope refused (403), the per-minute questions and the day's bytes and
 * tokens checked and the question counted (429), within a deadline, with a storage failure worded —
 * and the charge once the work is done. `startRun` and MCP's data tools share it.
 */
import * as logger from "firebase-functions/logger";
import { config } from "../config";
import { QuarryError } from "../errors";
import { accessStores, type Access } from "../access/gate";
import type { ChargeWrite } from "../access/quota";
import { storageError, within } from "../storage";
import { uploadsOf, type ThreadDoc } from "./thread-doc";
import type { Scope } from "../tools/scope";
import type { RunPerson, ScheduledTurn, Via } from "../tools/person";

/** Who starts a run: the person, and what the access gate found (role, quota limits). */
export interface RunCaller {
  uid: string;
  email: string | null;
  access: Access;
  /** Asked through MCP (audit and usage entries say so, and which token). */
  via?: Via;
  /** A schedule's run: its saved SQL runs without planning, and its query is audited as scheduled. */
  schedule?: ScheduledTurn;
}

/** The person as the quotas and usage know them. */
const whoOf = ({ uid, email, via }: RunCaller) => ({ uid, email, ...(via ? { via: via.channel } : {}) });

/** A member in no group once groups exist sees no data: told so before anything runs (403). */
export function refuseEmptyScope(scope: Scope): void {
  if (scope.all || scope.entries.length) return;
  const { contact } = config().access;
  throw new QuarryError(
    "forbidden:no_scope",
    "You are not in any group yet, so there is no data you may ask about. " +
      `Ask ${contact ?? "your Quarry administrator"} to add you to a group.`,
  );
}

/**
 * Admits one question (or direct query) for the caller: 403 with no data in scope, 429 in words
 * when a quota is spent, the storage failure worded when the quotas cannot be read in time.
 * Returns what is left of the day's bytes.
 */
export async function admit(caller: RunCaller): Promise<{ bytesLeft: number }> {
  refuseEmptyScope(caller.access.scope);
  const { quotas } = await accessStores();
  const deadline = config().runLeaseMs;
  return within(deadline, quotas.admit(whoOf(caller), caller.access.limits), "checking the quota").catch(
    (err: unknown) => {
      throw storageError(err);
    },
  );
}

/**
 * The charge as a write the run's release carries (so the two land together, once); undefined
 * when nothing was spent. Made now, for `spent` known only at the run's end.
 */
export async function chargeAlong(
  caller: RunCaller,
): Promise<(spent: { bytes: number; tokens: number }) => ChargeWrite | undefined> {
  const { quotas } = await accessStores();
  return (spent) => quotas.chargeWrite(whoOf(caller), spent);
}

/**
 * Charges what was spent once the work is done. A charge that fails is logged, not thrown: the
 * answer was given, and the person is not made to pay for it with an error.
 */
export async function charge(
  caller: RunCaller,
  spent: { bytes: number; tokens: number },
  where: Record<string, unknown> = {},
): Promise<void> {
  const { quotas } = await accessStores();
  const deadline = config().runLeaseMs / 2;
  await within(deadline, quotas.charge(whoOf(caller), spent), "charging the quota").catch((err: unknown) =>
    logger.error("usage not charged", { ...where, uid: caller.uid, spent, err: String(err) }),
  );
}

/**
 * Who the work is for, as the graph's tools see it: the person, their scope and what is left of
 * their day's bytes, how the run came (MCP), whose schedule it runs, and the conversation's
 * uploaded tables (from the thread as the run read it). Optional parts are absent when empty.
 */
export function runPerson(
  caller: RunCaller,
  scope: Scope,
  bytesLeft?: number,
  thread?: ThreadDoc,
): RunPerson {
  const { uid, email, via, schedule } = caller;
  const uploads = uploadsOf(thread);
  return {
    uid,
    email,
    scope,
    ...(bytesLeft !== undefined ? { bytesLeft } : {}),
    ...(via ? { via } : {}),
    ...(schedule ? { schedule } : {}),
    ...(uploads.length ? { uploads } : {}),
  };
}

/**
 * Refusing outsiders at the door: the Firebase Auth blocking functions (`beforeCreate`,
 * `beforeSignIn` in index.ts) refuse to create or sign in an account whose email is outside the
 * access policy — the same decision as the API's (`decideAccess`, the members list read fresh) —
 * so a stranger never gets an account or an ID token at all.
 *
 * **Verification at the door.** An email/password account is never verified when it is created
 * (the person confirms the address later), and it signs in at once. So the door treats the address
 * as if verified: it lets in an address in an allowed domain, in QUARRY_ADMINS or on the members
 * list, verified or not, and refuses every other one. That is safe because the door only keeps
 * strangers out; what a person may *do* is still decided by the API on every request, which
 * requires the address to be verified (an unverified `ceo@company.com` gets an account and nothing
 * else). The API's check also covers what the door cannot see: an ID token lives an hour, so a
 * member removed after signing in is refused by the API, not here.
 *
 * Fails closed: without a policy nobody gets in (the message names QUARRY_ALLOWED_DOMAINS and
 * QUARRY_ADMINS); when the members list cannot be read, the attempt is refused (try again). The
 * local emulator stack's open policy lets everyone in. Deployed, blocking functions need Firebase
 * Authentication with Identity Platform enabled on the project.
 */
import * as logger from "firebase-functions/logger";
import { HttpsError } from "firebase-functions/v2/identity";
import { config } from "../config";
import { accessStores } from "./gate";
import {
  decideAccess,
  refusalMessage,
  type AccessDecision,
  type AccessSettings,
  type MemberRecord,
} from "./policy";

/** The account being created or signing in, as the blocking event carries it. */
export interface DoorUser {
  uid: string;
  email?: string;
}

/** Which blocking event asks. */
export type DoorEvent = "create" | "sign-in";

/**
 * The door's decision, pure: the API's decision for the address taken as verified (see the file's
 * comment). `member` is the members-list entry, when one was read.
 */
export function decideAtTheDoor(
  s: AccessSettings,
  user: DoorUser,
  member: MemberRecord | undefined,
): AccessDecision {
  return decideAccess(s, { uid: user.uid, email: user.email, emailVerified: true }, member);
}

/** The refusal's words at the door: whom to ask (or, without a policy, what to set). */
export function doorRefusal(s: AccessSettings, why: "not_configured" | "not_member", email?: string): string {
  if (why === "not_configured") return refusalMessage(s, why);
  const ask = s.contact ? `Ask ${s.contact} for access.` : "Ask your Quarry administrator for access.";
  const who = email ? `${email} is` : "An account without an email address is";
  return `${who} not allowed to use this Quarry (not in an allowed domain or on the members list). ${ask}`;
}

/**
 * Lets `user` in or throws `HttpsError("permission-denied", …)`, which Firebase Auth turns into a
 * refused sign-up or sign-in with that message. The members list is read only when the settings
 * alone refuse the address (most people are admitted by their domain without a read).
 */
export async function admitAtTheDoor(user: DoorUser | undefined, event: DoorEvent): Promise<void> {
  const cfg = config().access;
  const settings: AccessSettings = {
    allowedDomains: cfg.allowedDomains,
    admins: cfg.admins,
    contact: cfg.contact,
    localOpen: cfg.localOpen,
  };
  const who: DoorUser = { uid: user?.uid ?? "", email: user?.email };
  if (cfg.problem) return refuse(event, who, "not_configured", cfg.problem);
  let decision = decideAtTheDoor(settings, who, undefined);
  if (!decision.allowed && decision.why === "not_member" && who.email) {
    let member: MemberRecord | undefined;
    try {
      member = await (await accessStores()).members.fresh(who.email);
    } catch (err) {
      logger.error("access: the members list could not be read at the door", {
        event,
        email: who.email,
        error: (err as Error).message,
      });
      throw new HttpsError(
        "unavailable",
        "Quarry could not check its members list just now, so it cannot let you in. Try again in a minute.",
      );
    }
    decision = decideAtTheDoor(settings, who, member);
  }
  if (!decision.allowed)
    return refuse(event, who, decision.why, doorRefusal(settings, decision.why, who.email));
}

function refuse(event: DoorEvent, who: DoorUser, why: string, message: string): never {
  logger.info("access: refused at the door", { event, email: who.email ?? null, why });
  throw new HttpsError("permission-denied", message);
}

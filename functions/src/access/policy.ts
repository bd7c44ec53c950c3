/**
 * Who may use Quarry, decided from the settings and the members list, as a pure function.
 *
 * A person is a member when an admin added their email (the members list), or when their
 * **verified** email is in one of `QUARRY_ALLOWED_DOMAINS`; an admin when the members list says so
 * or their verified email is in `QUARRY_ADMINS`. An unverified `alice@company.com` (made with
 * email and password, never confirmed) is nobody. With neither setting the policy is not
 * configured and nobody passes (fails closed) — except in the local emulator stack, which runs an
 * open policy that admits every account of its Auth emulator (`npm start` sets it and says so).
 */
import type { Role } from "../contract/access";

export interface AccessSettings {
  /** Domains whose verified addresses are members (QUARRY_ALLOWED_DOMAINS), lower case. */
  allowedDomains: string[];
  /** Emails that are admins from the start (QUARRY_ADMINS), lower case. */
  admins: string[];
  /** Whom a refused person should ask: an email or a URL (QUARRY_ACCESS_CONTACT). */
  contact?: string;
  /** The emulator stack's open policy (QUARRY_ACCESS_POLICY=local-open, honoured only in the emulator). */
  localOpen: boolean;
}

/** What the members list holds about a person (`members/{email}`). */
export interface MemberRecord {
  email: string;
  role: Role;
}

/** The signed-in person, as their ID token says. */
export interface Identity {
  uid: string;
  email?: string;
  emailVerified: boolean;
}

export type AccessDecision =
  | { allowed: true; role: Role; via: "members" | "domain" | "admins" | "local-open" }
  | { allowed: false; why: "not_configured" | "not_member" };

/** Whether any policy is configured; without one no run is served. */
export function policyConfigured(s: AccessSettings): boolean {
  return s.localOpen || s.allowedDomains.length > 0 || s.admins.length > 0;
}

/** The lower-cased domain of an email address. */
function domainOf(email: string): string {
  return email.slice(email.lastIndexOf("@") + 1).toLowerCase();
}

/**
 * The decision for `who`, given their record in the members list (if any). A members-list record
 * needs the email verified too: anyone can create an unverified account with someone else's address.
 */
export function decideAccess(
  s: AccessSettings,
  who: Identity,
  member: MemberRecord | undefined,
): AccessDecision {
  if (!policyConfigured(s)) return { allowed: false, why: "not_configured" };
  if (s.localOpen) return { allowed: true, role: member?.role ?? "admin", via: "local-open" };
  const email = who.emailVerified ? who.email?.toLowerCase() : undefined;
  if (!email) return { allowed: false, why: "not_member" };
  if (s.admins.includes(email)) return { allowed: true, role: "admin", via: "admins" };
  if (member) return { allowed: true, role: member.role, via: "members" };
  if (s.allowedDomains.includes(domainOf(email))) return { allowed: true, role: "member", via: "domain" };
  return { allowed: false, why: "not_member" };
}

/** The refusal's words: what happened and whom to ask. */
export function refusalMessage(
  s: AccessSettings,
  why: "not_configured" | "not_member",
  email?: string,
): string {
  if (why === "not_configured") {
    return (
      "Quarry has no access policy yet, so it answers nobody. An administrator sets QUARRY_ALLOWED_DOMAINS " +
      "(domains whose verified addresses may use it) and/or QUARRY_ADMINS (admin emails) in functions/.env.<project>, " +
      "then deploys again."
    );
  }
  const ask = s.contact ? `Ask ${s.contact} for access.` : "Ask your Quarry administrator for access.";
  return `${email ? `${email} is` : "You are"} not a member of this Quarry (or the address is not verified). ${ask}`;
}

/**
 * The door's decision (Auth blocking functions, access/blocking.ts), as a pure function: the API's
 * policy with the address taken as verified — an email/password account is never verified when it
 * is made — so addresses in the policy get in, every other one is refused, and without a policy
 * nobody is. (The blocking functions themselves run in test/integration/auth-blocking.int.ts.)
 */
import { describe, it, expect } from "vitest";
import { decideAtTheDoor, doorRefusal } from "../../functions/src/access/blocking";
import type { AccessSettings } from "../../functions/src/access/policy";

const closed: AccessSettings = {
  allowedDomains: ["company.com"],
  admins: ["boss@partner.org"],
  contact: "data-team@company.com",
  localOpen: false,
};
const none: AccessSettings = { allowedDomains: [], admins: [], localOpen: false };
const user = (email?: string) => ({ uid: "u1", ...(email ? { email } : {}) });

describe("decideAtTheDoor", () => {
  it.each([
    ["an address in an allowed domain (unverified at sign-up)", closed, "alice@company.com", undefined, true],
    ["the domain compared case-insensitively", closed, "Alice@COMPANY.com", undefined, true],
    ["an admin named in QUARRY_ADMINS", closed, "boss@partner.org", undefined, true],
    ["an address on the members list", closed, "guest@partner.org", "member", true],
    ["an address outside the policy", closed, "x@elsewhere.test", undefined, false],
    ["a look-alike domain", closed, "x@company.com.evil.test", undefined, false],
    ["an account without an email", closed, undefined, undefined, false],
    ["anyone when no policy is configured", none, "alice@company.com", undefined, false],
    ["anyone, even a member, when no policy is configured", none, "guest@partner.org", "admin", false],
    [
      "anyone with the emulator's open policy",
      { ...none, localOpen: true },
      "x@elsewhere.test",
      undefined,
      true,
    ],
  ] as const)("%s", (_label, settings, email, role, allowed) => {
    const member = role && email ? { email, role } : undefined;
    expect(decideAtTheDoor(settings, user(email), member).allowed).toBe(allowed);
  });

  it("says why it refuses: not configured, or not a member", () => {
    expect(decideAtTheDoor(none, user("a@company.com"), undefined)).toEqual({
      allowed: false,
      why: "not_configured",
    });
    expect(decideAtTheDoor(closed, user("x@elsewhere.test"), undefined)).toEqual({
      allowed: false,
      why: "not_member",
    });
  });
});

describe("doorRefusal", () => {
  it("names the address and whom to ask", () => {
    const words = doorRefusal(closed, "not_member", "x@elsewhere.test");
    expect(words).toContain("x@elsewhere.test is not allowed to use this Quarry");
    expect(words).toContain("Ask data-team@company.com for access.");
    expect(doorRefusal({ ...closed, contact: undefined }, "not_member")).toContain(
      "Ask your Quarry administrator",
    );
  });

  it("without a policy, names the settings to set", () => {
    expect(doorRefusal(none, "not_configured")).toMatch(/QUARRY_ALLOWED_DOMAINS.*QUARRY_ADMINS/);
  });
});

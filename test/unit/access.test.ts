/**
 * Access decisions and quota arithmetic, as pure functions: who is a member or an admin (verified
 * addresses only), fail closed without a policy, the sliding questions window, and the words and
 * Retry-After of each quota refusal.
 */
import { describe, it, expect } from "vitest";
import {
  decideAccess,
  policyConfigured,
  refusalMessage,
  type AccessSettings,
} from "../../functions/src/access/policy";
import { overQuota, quotaFigures, recentQuestions } from "../../functions/src/access/quota";
import { QuarryError } from "../../functions/src/errors";

const closed: AccessSettings = {
  allowedDomains: ["company.com"],
  admins: ["boss@company.com", "ops@partner.org"],
  contact: "data-team@company.com",
  localOpen: false,
};
const who = (email: string | undefined, emailVerified = true) => ({ uid: "u1", email, emailVerified });

describe("decideAccess", () => {
  it.each([
    [
      "verified address in an allowed domain",
      who("alice@company.com"),
      undefined,
      { allowed: true, role: "member", via: "domain" },
    ],
    [
      "domain compared case-insensitively",
      who("Alice@COMPANY.com"),
      undefined,
      { allowed: true, role: "member" },
    ],
    [
      "unverified address in an allowed domain",
      who("alice@company.com", false),
      undefined,
      { allowed: false, why: "not_member" },
    ],
    [
      "verified address outside the domains",
      who("eve@evil.com"),
      undefined,
      { allowed: false, why: "not_member" },
    ],
    [
      "a subdomain is not the domain",
      who("eve@x.company.com"),
      undefined,
      { allowed: false, why: "not_member" },
    ],
    [
      "a look-alike domain",
      who("eve@company.com.evil.com"),
      undefined,
      { allowed: false, why: "not_member" },
    ],
    ["no email at all (anonymous, phone)", who(undefined), undefined, { allowed: false, why: "not_member" }],
    [
      "an admin from QUARRY_ADMINS",
      who("ops@partner.org"),
      undefined,
      { allowed: true, role: "admin", via: "admins" },
    ],
    [
      "an unverified admin address",
      who("boss@company.com", false),
      undefined,
      { allowed: false, why: "not_member" },
    ],
    [
      "on the members list, outside the domains",
      who("guest@else.org"),
      { email: "guest@else.org", role: "member" as const },
      { allowed: true, role: "member", via: "members" },
    ],
    [
      "made admin on the members list",
      who("alice@company.com"),
      { email: "alice@company.com", role: "admin" as const },
      { allowed: true, role: "admin", via: "members" },
    ],
  ])("%s", (_name, identity, member, expected) => {
    expect(decideAccess(closed, identity, member)).toMatchObject(expected);
  });

  it("fails closed without a policy, whoever asks", () => {
    const none: AccessSettings = { allowedDomains: [], admins: [], localOpen: false };
    expect(policyConfigured(none)).toBe(false);
    expect(decideAccess(none, who("boss@company.com"), { email: "boss@company.com", role: "admin" })).toEqual(
      {
        allowed: false,
        why: "not_configured",
      },
    );
    expect(refusalMessage(none, "not_configured")).toMatch(/QUARRY_ALLOWED_DOMAINS.*QUARRY_ADMINS/);
  });

  it("the local open policy admits any account, unverified too, as admin unless the list says otherwise", () => {
    const open: AccessSettings = { allowedDomains: [], admins: [], localOpen: true };
    expect(decideAccess(open, who("x@y.z", false), undefined)).toMatchObject({
      allowed: true,
      role: "admin",
    });
    expect(decideAccess(open, who("x@y.z"), { email: "x@y.z", role: "member" })).toMatchObject({
      role: "member",
    });
  });

  it("says whom to ask", () => {
    expect(refusalMessage(closed, "not_member", "eve@evil.com")).toBe(
      "eve@evil.com is not a member of this Quarry (or the address is not verified). Ask data-team@company.com for access.",
    );
    expect(refusalMessage({ ...closed, contact: undefined }, "not_member")).toMatch(
      /Ask your Quarry administrator/,
    );
  });
});

describe("quotas", () => {
  const limits = { questionsPerMinute: 3, bytesPerDay: 1_000_000_000, tokensPerDay: 10_000 };
  const now = Date.parse("2026-11-24T10:00:30Z");
  const minute = 60_000;

  it("counts only the questions inside the sliding window", () => {
    const times = [now - 70_000, now - 59_000, now - 1_000, now - 30_000];
    expect(recentQuestions({ times }, now, minute)).toEqual([now - 59_000, now - 30_000, now - 1_000]);
    expect(recentQuestions(undefined, now, minute)).toEqual([]);
  });

  it("admits below every limit", () => {
    const q = quotaFigures(limits, { bytes: 10, tokens: 10 }, [now - 1_000, now - 2_000], now, minute);
    expect(q.questionsPerMinute).toMatchObject({ used: 2, limit: 3 });
    expect(overQuota(q, now)).toBeUndefined();
  });

  it("refuses a question over the window's limit until its oldest question leaves it", () => {
    const recent = [now - 50_000, now - 20_000, now - 5_000];
    const q = quotaFigures(limits, undefined, recent, now, minute);
    expect(q.questionsPerMinute.resetsAt).toBe(new Date(now - 50_000 + minute).toISOString());
    const err = overQuota(q, now) as QuarryError;
    expect(err.code).toBe("quota:questions");
    expect(err.status).toBe(429);
    expect(err.headers["Retry-After"]).toBe("10");
    expect(err.message).toBe(
      "You have asked 3 questions in the last minute; the limit is 3. Ask again in 10 s.",
    );
  });

  it("refuses when the day's bytes or tokens are used, until midnight UTC, saying what was used", () => {
    const bytes = overQuota(
      quotaFigures(limits, { bytes: 1_500_000_000, tokens: 0 }, [], now, minute),
      now,
    ) as QuarryError;
    expect(bytes.code).toBe("quota:bytes");
    expect(bytes.message).toContain("1.5 GB of 1 GB billed");
    expect(bytes.message).toContain("2026-11-25T00:00:00Z");
    expect(Number(bytes.headers["Retry-After"])).toBe((Date.parse("2026-11-25T00:00:00Z") - now) / 1000);
    const tokens = overQuota(
      quotaFigures(limits, { bytes: 0, tokens: 10_000 }, [], now, minute),
      now,
    ) as QuarryError;
    expect(tokens.code).toBe("quota:tokens");
    expect(tokens.message).toContain("10,000 of 10,000 tokens");
  });
});

/**
 * The browser tests' access policy (test/support/global-full-stack.ts gives it to the function):
 * closed, as a deployment is — verified addresses of E2E_MEMBER_DOMAIN are members, the page's
 * one-click test user is an admin, anyone else is refused with E2E_CONTACT named. The questions
 * quota is high by default so the other browser tests are never limited.
 */
import { INTEGRATION_ACCESS_ENV } from "./auth-emulator";

export const E2E_MEMBER_DOMAIN = "quarry.local";

/** The page's "Continue as test user" account (web/src/auth/SignIn.tsx), verified, admin. */
export const E2E_TEST_USER = { email: "test-user@quarry.local", password: "quarry-test-user" };

export const E2E_CONTACT = "data-team@quarry.local";

export const E2E_ACCESS_ENV = {
  QUARRY_ALLOWED_DOMAINS: E2E_MEMBER_DOMAIN,
  QUARRY_ADMINS: E2E_TEST_USER.email,
  QUARRY_ACCESS_CONTACT: E2E_CONTACT,
  // Short, so a member added or changed in a test is seen soon; production allows up to 60 s.
  QUARRY_ACCESS_CACHE_SECONDS: INTEGRATION_ACCESS_ENV.QUARRY_ACCESS_CACHE_SECONDS,
  QUARRY_QUOTA_QUESTIONS_PER_MINUTE: "1000",
};

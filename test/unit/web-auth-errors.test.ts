/** Sign-in errors in words: a refusal by Quarry's sign-in check shows its own message, nothing else. */
import { describe, it, expect } from "vitest";
import { authErrorInWords } from "../../web/src/auth/auth-errors";

describe("authErrorInWords", () => {
  it("shows the blocking function's message, not Firebase's wrapper", () => {
    const raw = Object.assign(
      new Error(
        'Firebase: ((HTTP request to http://127.0.0.1:1/demo-quarry/us-central1/beforeSignIn returned HTTP error 403: {"error":{"message":"eve@x.test is not allowed to use this Quarry (not in an allowed domain or on the members list). Ask \\"data\\"@co.test for access.","status":"PERMISSION_DENIED"}})) (auth/internal-error).',
      ),
      { code: "auth/internal-error" },
    );
    expect(authErrorInWords(raw)).toBe(
      'eve@x.test is not allowed to use this Quarry (not in an allowed domain or on the members list). Ask "data"@co.test for access.',
    );
  });

  it("keeps the worded codes and falls back to the message", () => {
    expect(authErrorInWords({ code: "auth/weak-password" })).toMatch(/at least 6 characters/);
    expect(authErrorInWords(new Error("something else"))).toBe("something else");
  });
});

/**
 * The hosted page's security headers as firebase.json declares them (docs/deploy.md#security-headers),
 * and the launcher's local copy of them (scripts/stack.mjs adds the emulators' loopback origins).
 * What the hosting emulator actually serves, and the page working under it: test/e2e/csp.e2e.ts.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  ROOT,
  pageEmulatorOrigins,
  withConnectSources,
  type HostingHeaderRule,
} from "../../scripts/stack.mjs";

const hosting = (
  JSON.parse(readFileSync(path.join(ROOT, "firebase.json"), "utf8")) as {
    hosting: { headers: HostingHeaderRule[] };
  }
).hosting;

/** A policy as directive → sources. */
function directives(policy: string): Map<string, string[]> {
  return new Map(
    policy
      .split(";")
      .map((d) => d.trim().split(/\s+/))
      .filter((d) => d[0])
      .map(([name, ...sources]) => [name, sources]),
  );
}

const [rule] = hosting.headers;
const header = (key: string) => rule.headers.find((h) => h.key === key)?.value;
const csp = directives(header("Content-Security-Policy") ?? "");

describe("firebase.json's hosting headers", () => {
  it("is one rule with the CSP, frame denial, nosniff and the referrer policy", () => {
    expect(hosting.headers).toHaveLength(1);
    expect(header("X-Frame-Options")).toBe("DENY");
    expect(header("X-Content-Type-Options")).toBe("nosniff");
    expect(header("Referrer-Policy")).toBe("strict-origin-when-cross-origin");
  });

  it("allows only the page's own scripts and styles (plus Google sign-in's loader): no eval, nothing inline", () => {
    const all = [...csp.values()].flat();
    expect(all).not.toContain("'unsafe-eval'");
    expect(all).not.toContain("'unsafe-inline'");
    expect(all).not.toContain("*");
    expect(csp.get("default-src")).toEqual(["'self'"]);
    expect(csp.get("script-src")).toEqual(["'self'", "https://apis.google.com"]);
    expect(csp.get("style-src")).toEqual(["'self'"]);
    // A question's images are shown from their own bytes (data: URLs), never from another origin.
    expect(csp.get("img-src")).toEqual(["'self'", "data:"]);
    expect(csp.get("object-src")).toEqual(["'none'"]);
    expect(csp.get("base-uri")).toEqual(["'self'"]);
    expect(csp.get("frame-ancestors")).toEqual(["'none'"]);
    expect(csp.get("frame-src")).toEqual(["'self'", "https://*.firebaseapp.com"]);
  });

  it("connects to the page's origin, the function URLs, Firebase Auth and Firestore, and no loopback", () => {
    expect(csp.get("connect-src")).toEqual([
      "'self'",
      "https://*.cloudfunctions.net",
      "https://*.a.run.app",
      "https://identitytoolkit.googleapis.com",
      "https://securetoken.googleapis.com",
      "https://firestore.googleapis.com",
    ]);
  });

  it("applies to every path but Hosting's reserved /__/ URLs (the auth handler and iframe are Firebase's)", () => {
    // Hosting evaluates `regex` with RE2; the pattern uses nothing RE2 and JavaScript disagree on.
    const matches = (p: string) => new RegExp(rule.regex!, "u").test(p);
    for (const p of [
      "/",
      "/index.html",
      "/t/0b8e4c1e-6a4f-4d0e-9a57-3c2f5b7d9e10",
      "/admin",
      "/assets/index-x.js",
    ])
      expect(matches(p), p).toBe(true);
    for (const p of ["/_", "/_x", "/a__b"]) expect(matches(p), p).toBe(true);
    for (const p of ["/__/auth/handler", "/__/auth/iframe", "/__/firebase/init.json", "/__"])
      expect(matches(p), p).toBe(false);
  });
});

describe("the launcher's local copy of the headers", () => {
  it("adds exactly the emulators' origins to connect-src and changes nothing else", () => {
    const origins = ["http://127.0.0.1:5001", "http://127.0.0.1:9099"];
    const local = withConnectSources(hosting, origins);
    const [localRule] = local.headers;
    const localCsp = directives(localRule.headers.find((h) => h.key === "Content-Security-Policy")!.value);
    expect(localCsp.get("connect-src")).toEqual([...csp.get("connect-src")!, ...origins]);
    for (const [name, sources] of csp)
      if (name !== "connect-src") expect(localCsp.get(name)).toEqual(sources);
    expect(localRule.headers.filter((h) => h.key !== "Content-Security-Policy")).toEqual(
      rule.headers.filter((h) => h.key !== "Content-Security-Policy"),
    );
    expect(localRule.regex).toBe(rule.regex);
    // firebase.json's own object is untouched.
    expect(header("Content-Security-Policy")).not.toContain("127.0.0.1");
  });

  it("starts connect-src from default-src when a policy has none", () => {
    const local = withConnectSources(
      {
        headers: [
          { source: "**", headers: [{ key: "Content-Security-Policy", value: "default-src 'self'" }] },
        ],
      },
      ["http://127.0.0.1:9099"],
    );
    expect(local.headers[0].headers[0].value).toBe(
      "default-src 'self'; connect-src 'self' http://127.0.0.1:9099",
    );
  });

  it("names the API function's, the Auth emulator's and the page's Firestore emulator's origins", () => {
    const ports = { functions: 5001, auth: 9099, hosting: 5000, firestore: 8080 };
    expect(
      pageEmulatorOrigins(["functions", "auth", "hosting"], ports, {
        QUARRY_API_URL: "http://127.0.0.1:5001/demo-quarry/us-central1/api",
        // A test's fault proxy in front of Firestore: the function hands this address to the page.
        FIRESTORE_EMULATOR_HOST: "127.0.0.1:7123",
      }),
    ).toEqual(["http://127.0.0.1:5001", "http://127.0.0.1:9099", "http://127.0.0.1:7123"]);
    expect(pageEmulatorOrigins(["hosting"], { hosting: 5000 }, {})).toEqual([]);
  });
});

/**
 * The hosted page's security headers (firebase.json `hosting.headers`, docs/deploy.md#security-headers)
 * against the whole local stack: what the hosting emulator serves for the page, a client route and
 * the built assets (and not for Hosting's reserved /__/ URLs), and the page working under its
 * Content-Security-Policy in Chromium — sign in (Auth emulator), the live thread list (Firestore
 * emulator), a question streamed from the function, the table, the chart with its formatted axis and
 * tooltip, the chart's SVG and PNG downloads — with no `securitypolicyviolation` event and no CSP
 * console error. A last check shows the policy is enforced and the collector sees what it refuses.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ROOT, type HostingHeaderRule } from "../../scripts/stack.mjs";
import { launchBrowser, reportFailure, screenshot } from "../support/browser";
import { stackEnv } from "../support/stack-env";

const QUESTION = "What was revenue by month in 2025?";
const MONTHS_2025 = Array.from({ length: 12 }, (_, i) => `2025-${String(i + 1).padStart(2, "0")}`);
const CSP = "content-security-policy";

/** firebase.json's page headers (one rule), as deployed. */
const DECLARED = (
  JSON.parse(readFileSync(path.join(ROOT, "firebase.json"), "utf8")) as {
    hosting: { headers: HostingHeaderRule[] };
  }
).hosting.headers[0].headers;
const declared = (key: string) => DECLARED.find((h) => h.key.toLowerCase() === key)!.value;

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

interface Violation {
  directive: string;
  blocked: string;
  sample: string;
}

let browser: Browser | undefined;
let context: BrowserContext | undefined;
let page: Page | undefined;
let web: string;

beforeAll(async () => {
  web = stackEnv().urls.web!;
});

afterEach(async (ctx) => {
  await reportFailure(page, ctx.task);
  await context?.close();
  context = undefined;
});

afterAll(async () => {
  await browser?.close();
});

describe("the hosted page's security headers", () => {
  it("the hosting emulator serves them for the page, a client route and the assets; the local policy adds only the emulators", async () => {
    const { urls } = stackEnv();
    const html = await fetch(`${web}/`);
    expect(html.ok).toBe(true);
    const index = await html.text();
    const script = /<script type="module" crossorigin src="(\/assets\/[^"]+\.js)"/.exec(index)?.[1];
    const style = /<link rel="stylesheet" crossorigin href="(\/assets\/[^"]+\.css)"/.exec(index)?.[1];
    expect(script).toBeDefined();
    expect(style).toBeDefined();

    const served = new Map<string, Headers>();
    for (const p of ["/", "/t/0b8e4c1e-6a4f-4d0e-9a57-3c2f5b7d9e10", script!, style!]) {
      const res = await fetch(`${web}${p}`);
      expect(res.status, p).toBe(200);
      await res.arrayBuffer();
      served.set(p, res.headers);
    }
    // The local policy is firebase.json's with the emulators' loopback origins added to connect-src.
    const local = [new URL(urls.api!).origin, urls.auth!, urls.firestore!];
    const expected = directives(declared(CSP));
    expected.set("connect-src", [...expected.get("connect-src")!, ...local]);
    for (const [p, h] of served) {
      expect(directives(h.get(CSP) ?? ""), p).toEqual(expected);
      expect(h.get("x-frame-options"), p).toBe("DENY");
      expect(h.get("x-content-type-options"), p).toBe("nosniff");
      expect(h.get("referrer-policy"), p).toBe("strict-origin-when-cross-origin");
    }
    // nosniff makes the browser trust these types: scripts and styles must be served as such.
    expect(served.get(script!)!.get("content-type")).toMatch(/^(text|application)\/javascript/);
    expect(served.get(style!)!.get("content-type")).toMatch(/^text\/css/);

    // Hosting's reserved URLs are Firebase's own pages (the auth handler and iframe are framed by
    // the page and run inline scripts): the page's headers are not put on them.
    const init = await fetch(`${web}/__/firebase/init.json`);
    expect(init.ok).toBe(true);
    expect(((await init.json()) as { projectId?: string }).projectId).toBe(stackEnv().env.GCLOUD_PROJECT);
    expect(init.headers.get(CSP)).toBeNull();
    expect(init.headers.get("x-frame-options")).toBeNull();
  });

  it("the page works under its CSP in Chromium: sign in, ask, table, chart, tooltip, downloads; no violation", async () => {
    browser ??= await launchBrowser();
    context = await browser.newContext({
      locale: "en-US",
      viewport: { width: 1280, height: 1000 },
      acceptDownloads: true,
    });
    const p = (page = await context.newPage());
    // Every violation the page reports, from before its first script runs.
    await p.addInitScript(() => {
      const seen: Violation[] = [];
      (window as unknown as { __cspViolations: Violation[] }).__cspViolations = seen;
      document.addEventListener("securitypolicyviolation", (e) =>
        seen.push({ directive: e.effectiveDirective, blocked: e.blockedURI, sample: e.sample }),
      );
    });
    // And every CSP message the browser logs (Chromium reports some as page errors).
    const cspMessages: string[] = [];
    const isCsp = (text: string) => /Content Security Policy/i.test(text);
    p.on("console", (m) => {
      if (m.type() === "error" || m.type() === "warning") console.log(`[page ${m.type()}] ${m.text()}`);
      if (isCsp(m.text())) cspMessages.push(m.text());
    });
    p.on("pageerror", (e) => {
      console.log(`[page error] ${e.message}`);
      if (isCsp(e.message)) cspMessages.push(e.message);
    });
    const violations = () =>
      p.evaluate(() => (window as unknown as { __cspViolations: Violation[] }).__cspViolations);

    const response = await p.goto(web);
    expect(response?.headers()[CSP]).toContain("frame-ancestors 'none'");
    await p.getByRole("button", { name: "Continue as test user" }).click();
    await p.getByRole("button", { name: "+ New conversation" }).waitFor();
    await p.getByRole("button", { name: "+ New conversation" }).click();
    const box = p.getByLabel("Your question");
    await box.fill(QUESTION);
    await box.press("Enter");
    await p.waitForURL(/\/t\/[0-9a-f-]{36}$/);
    const turn = p.locator('article.turn[data-status="done"]');
    await turn.waitFor({ timeout: 60_000 });
    // The live thread list (Firestore emulator) shows the new thread.
    await p.locator(`li[data-thread-id="${p.url().split("/t/")[1]}"]`).waitFor();

    // The table, and the chart drawn by Vega's interpreter: expressions, custom formats included.
    await expect(turn.locator("table tbody tr").count()).resolves.toBeGreaterThan(0);
    const host = turn.locator('.chart-host[data-chart-type="line"]');
    await host.locator("svg g.mark-line path").first().waitFor();
    const ticks = (axis: "X" | "Y") =>
      host.locator(`svg g.role-axis[aria-label^="${axis}-axis"] g.role-axis-label text`).allTextContents();
    await expect.poll(() => ticks("X")).toEqual(MONTHS_2025);
    for (const label of await ticks("Y")) expect(label).toMatch(/^\$\d+(\.\d)?[KM]?$/);

    // The tooltip, styled by the page's own stylesheet (vega-tooltip injects no <style>).
    await host.locator("svg g.mark-symbol path").first().hover();
    const tooltip = p.locator("#vg-tooltip-element.visible");
    await tooltip.waitFor();
    await expect(tooltip.textContent()).resolves.toMatch(/\$\d{1,3}(,\d{3})*\.\d{2}/);
    await expect(tooltip.evaluate((el) => getComputedStyle(el).position)).resolves.toBe("fixed");
    expect(await p.locator("style").count()).toBe(0);
    await screenshot(p, "csp-01-answered");

    // The chart's exports (Vega's view.toImageURL) under the same policy.
    for (const format of ["SVG", "PNG"]) {
      const [download] = await Promise.all([
        p.waitForEvent("download"),
        p.getByRole("button", { name: new RegExp(`chart as ${format}`) }).click(),
      ]);
      expect(download.suggestedFilename()).toMatch(new RegExp(`\\.${format.toLowerCase()}$`));
    }

    expect(await violations()).toEqual([]);
    expect(cspMessages).toEqual([]);

    // The policy is in force and the collector sees what it refuses: an inline script and an inline
    // style added to the page are refused and reported. (Code evaluated through the DevTools
    // protocol is exempt from the policy, so eval cannot be probed from here.)
    await p.evaluate(() => {
      const script = document.createElement("script");
      script.textContent = "window.__inlineScriptRan = true";
      document.head.append(script);
      const style = document.createElement("style");
      style.textContent = "body { outline: 3px solid red }";
      document.head.append(style);
    });
    await expect
      .poll(violations)
      .toEqual([
        expect.objectContaining({ directive: "script-src-elem", blocked: "inline" }),
        expect.objectContaining({ directive: "style-src-elem", blocked: "inline" }),
      ]);
    expect(
      await p.evaluate(() => (window as { __inlineScriptRan?: boolean }).__inlineScriptRan),
    ).toBeUndefined();
    await expect(p.locator("body").evaluate((b) => getComputedStyle(b).outlineStyle)).resolves.toBe("none");
    await expect.poll(() => cspMessages.length).toBe(2);
  });
});

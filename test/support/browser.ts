/**
 * Debian Chromium driven by playwright-core (no browser download): launch options that keep it
 * offline and quiet, and a screenshot helper writing to test-results/e2e/.
 */
import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";

export const CHROMIUM = process.env.QUARRY_CHROMIUM ?? "/usr/bin/chromium";
export const SCREENSHOTS = path.resolve(__dirname, "../../test-results/e2e");

/** Starts headless Chromium, or fails saying how to install it. */
export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium not found at ${CHROMIUM}. Install it with \`apt-get install -y chromium\` ` +
        "(Debian; .ci/run does this) or set QUARRY_CHROMIUM to its path.",
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--no-first-run",
      "--disable-sync",
      "--disable-quic",
    ],
  });
}

/** Saves a full-page screenshot as test-results/e2e/<name>.png and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

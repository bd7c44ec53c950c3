/**
 * The browser tests' Chromium, driven by playwright-core (never a Playwright browser download), with
 * launch options that keep it offline and quiet, and a screenshot helper writing to test-results/e2e/.
 *
 * Which Chromium (`chooseBrowser`):
 * - `QUARRY_CHROMIUM=<path>`: that executable;
 * - else Debian's `/usr/bin/chromium` when it exists;
 * - else the Chromium inside the npm devDependency `@sparticuz/chromium` (headless shell, Linux x64),
 *   unpacked once per package version into node_modules/.cache/quarry-chromium/<version>/ together
 *   with its NSS libraries (used instead of the system's) and its fonts.
 * `QUARRY_BROWSER=system|bundled` forces one of the two (system: QUARRY_CHROMIUM or /usr/bin/chromium).
 *
 * The bundled archive is unpacked by the package's own `inflate` in a child process whose TMPDIR is a
 * private staging directory, then renamed into place: a directory that exists is complete, and two
 * processes unpacking at once both succeed (the later rename loses and its copy is dropped). The
 * package's `executablePath()` is not used: it returns /tmp/chromium whenever that path exists, even
 * half-written by a concurrent or interrupted unpack, or left there by another package version.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { chromium, type Browser, type Page } from "playwright-core";

const SCREENSHOTS = path.resolve(__dirname, "../../test-results/e2e");
export const DEBIAN_CHROMIUM = "/usr/bin/chromium";
const BUNDLE_PACKAGE = "@sparticuz/chromium";
const CACHE_ROOT = path.resolve(__dirname, "../../node_modules/.cache/quarry-chromium");

/** The same flags for every Chromium: headless, offline (no background or update traffic), no GPU. */
const LAUNCH_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--no-first-run",
  "--disable-sync",
  "--disable-quic",
];

export type BrowserChoice =
  { kind: "system"; path: string; source: "QUARRY_CHROMIUM" | "debian" } | { kind: "bundled" };

export interface ChoiceInput {
  env: Record<string, string | undefined>;
  exists: (file: string) => boolean;
  platform: string;
  arch: string;
}

const HOW_TO_GET_ONE =
  `Either run \`npm install\` at the repository root (it installs ${BUNDLE_PACKAGE}, whose Chromium the ` +
  "tests unpack themselves; Linux x64 only), or install Debian's Chromium (`apt-get install chromium`), " +
  "or set QUARRY_CHROMIUM to the path of a Chromium or Chrome executable.";

/** Which Chromium the browser tests use; throws, saying what to do, when the choice cannot work. */
export function chooseBrowser({ env, exists, platform, arch }: ChoiceInput): BrowserChoice {
  const forced = env.QUARRY_BROWSER?.trim() || undefined;
  if (forced !== undefined && forced !== "system" && forced !== "bundled") {
    throw new Error(
      `QUARRY_BROWSER=${forced} is not understood: use QUARRY_BROWSER=system or QUARRY_BROWSER=bundled.`,
    );
  }
  const custom = env.QUARRY_CHROMIUM?.trim() || undefined;
  if (forced !== "bundled" && custom !== undefined) {
    if (!exists(custom)) {
      throw new Error(
        `QUARRY_CHROMIUM=${custom} does not exist. Point it at a Chromium or Chrome executable, or unset it ` +
          `to use ${DEBIAN_CHROMIUM} or else the Chromium of ${BUNDLE_PACKAGE}.`,
      );
    }
    return { kind: "system", path: custom, source: "QUARRY_CHROMIUM" };
  }
  if (forced !== "bundled" && exists(DEBIAN_CHROMIUM)) {
    return { kind: "system", path: DEBIAN_CHROMIUM, source: "debian" };
  }
  if (forced === "system") {
    throw new Error(
      `QUARRY_BROWSER=system, but ${DEBIAN_CHROMIUM} does not exist and QUARRY_CHROMIUM is not set. Install ` +
        "Debian's Chromium (`apt-get install chromium`), set QUARRY_CHROMIUM to a Chromium executable, or " +
        "unset QUARRY_BROWSER to use the bundled Chromium.",
    );
  }
  if (platform !== "linux" || arch !== "x64") {
    throw new Error(
      `No Chromium for the browser tests: the Chromium bundled in ${BUNDLE_PACKAGE} runs on Linux x64 only ` +
        `(this is ${platform} ${arch})` +
        (forced === "bundled" ? " and QUARRY_BROWSER=bundled" : ` and ${DEBIAN_CHROMIUM} does not exist`) +
        ". Set QUARRY_CHROMIUM to the path of a Chromium or Chrome executable (and unset QUARRY_BROWSER).",
    );
  }
  return { kind: "bundled" };
}

interface Launchable {
  executablePath: string;
  env?: Record<string, string>;
  describe: string;
}

/** Unpacks (once per package version) the Chromium of @sparticuz/chromium; returns how to launch it. */
async function bundledChromium(): Promise<Launchable> {
  const require = createRequire(__filename);
  let entry: string;
  try {
    entry = require.resolve(BUNDLE_PACKAGE);
  } catch {
    throw new Error(
      `No Chromium for the browser tests: ${BUNDLE_PACKAGE} is not installed. ${HOW_TO_GET_ONE}`,
    );
  }
  const packageDir = path.dirname(path.dirname(entry));
  const version = (
    JSON.parse(readFileSync(path.join(packageDir, "package.json"), "utf8")) as { version: string }
  ).version;
  const dir = path.join(CACHE_ROOT, version);
  const bundled = (how: string): Launchable => ({
    executablePath: path.join(dir, "chromium"),
    env: {
      ...definedEntries(process.env),
      // The package's NSS build (the only libraries the binary needs beyond glibc), so no system NSS
      // is required; and fonts: the system's fontconfig setup when there is one, plus Open Sans.
      LD_LIBRARY_PATH: [path.join(dir, "al2023", "lib"), process.env.LD_LIBRARY_PATH]
        .filter(Boolean)
        .join(":"),
      FONTCONFIG_FILE: path.join(dir, "fonts.conf"),
    },
    describe: `the Chromium bundled in ${BUNDLE_PACKAGE} ${version} (${how})`,
  });
  // The directory only ever appears complete (renamed into place below).
  if (existsSync(path.join(dir, "chromium"))) return bundled("unpacked before");

  const staging = path.join(CACHE_ROOT, `${version}.unpacking-${process.pid}-${Date.now()}`);
  const started = Date.now();
  try {
    mkdirSync(CACHE_ROOT, { recursive: true });
    mkdirSync(staging);
    // inflate() writes to os.tmpdir(): the child's TMPDIR is the staging directory.
    const script =
      "const [entry, bin] = process.argv.slice(1); const { inflate } = await import(entry); " +
      'await Promise.all(["chromium.br", "fonts.tar.br", "swiftshader.tar.br", "al2023.tar.br"]' +
      '.map((f) => inflate(bin + "/" + f)));';
    await promisify(execFile)(
      process.execPath,
      ["--input-type=module", "-e", script, pathToFileURL(entry).href, path.join(packageDir, "bin")],
      { env: { ...process.env, TMPDIR: staging }, timeout: 120_000 },
    );
    for (const f of ["chromium", "fonts/fonts", "al2023/lib/libnss3.so", "libGLESv2.so"]) {
      if (!existsSync(path.join(staging, f))) throw new Error(`${f} is missing after unpacking`);
    }
    writeFileSync(path.join(staging, "fonts.conf"), fontsConf(dir));
  } catch (e) {
    removeQuietly(staging);
    throw new Error(
      `Could not unpack the Chromium of ${BUNDLE_PACKAGE} ${version} into ${dir}: ${(e as Error).message}\n` +
        `Make ${CACHE_ROOT} a writable directory with about 220 MB free (delete it to start over; run ` +
        `\`npm ci\` if the package itself is damaged) and rerun; or set QUARRY_CHROMIUM to a Chromium ` +
        "executable, or install Debian's Chromium (`apt-get install chromium`).",
      { cause: e },
    );
  }
  try {
    renameSync(staging, dir);
  } catch (e) {
    removeQuietly(staging);
    // Another process finished the same unpack first: use its copy.
    if (!existsSync(path.join(dir, "chromium"))) throw e;
  }
  removeLeftovers(version);
  return bundled(`unpacked in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

/** fontconfig setup for the bundled Chromium: the system's (if any) plus the package's Open Sans. */
function fontsConf(dir: string): string {
  return `<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig>
  <cachedir>${path.join(dir, "fontconfig-cache")}</cachedir>
  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>
  <dir>/usr/share/fonts</dir>
  <dir>/usr/local/share/fonts</dir>
  <dir prefix="xdg">fonts</dir>
  <dir>${path.join(dir, "fonts", "fonts")}</dir>
</fontconfig>
`;
}

/** Removes other package versions' unpacked copies and staging directories of processes that died. */
function removeLeftovers(version: string): void {
  for (const name of readdirSync(CACHE_ROOT)) {
    const staging = /\.unpacking-(\d+)-\d+$/.exec(name);
    if (name === version || (staging && processAlive(Number(staging[1])))) continue;
    removeQuietly(path.join(CACHE_ROOT, name));
  }
}

function removeQuietly(dir: string): void {
  try {
    rmSync(dir, { recursive: true, force: true });
  } catch {
    // Best effort: a leftover is removed by a later run.
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

function definedEntries(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
}

let announced = false;

/** Starts headless Chromium (see the module comment for which), or fails saying what to do. */
export async function launchBrowser(): Promise<Browser> {
  const choice = chooseBrowser({
    env: process.env,
    exists: existsSync,
    platform: process.platform,
    arch: process.arch,
  });
  const target: Launchable =
    choice.kind === "bundled"
      ? await bundledChromium()
      : {
          executablePath: choice.path,
          describe: choice.source === "debian" ? "Debian's Chromium" : "the Chromium in QUARRY_CHROMIUM",
        };
  let browser: Browser;
  try {
    browser = await chromium.launch({
      executablePath: target.executablePath,
      env: target.env,
      args: LAUNCH_ARGS,
    });
  } catch (e) {
    const hint =
      choice.kind === "bundled"
        ? "It needs Linux x64 with glibc >= 2.34; elsewhere install Debian's Chromium (`apt-get install " +
          "chromium`) or set QUARRY_CHROMIUM to a Chromium or Chrome executable that runs here."
        : "Set QUARRY_CHROMIUM to a working Chromium or Chrome executable, or QUARRY_BROWSER=bundled to use " +
          `the Chromium of ${BUNDLE_PACKAGE}.`;
    throw new Error(
      `${target.describe} at ${target.executablePath} did not start. ${hint}\n${(e as Error).message}`,
      { cause: e },
    );
  }
  if (!announced) {
    announced = true;
    console.log(`[browser] Chromium ${browser.version()}: ${target.describe}, ${target.executablePath}`);
  }
  return browser;
}

/** Saves a full-page screenshot as test-results/e2e/<name>.png and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/** After a failed test: what the page showed, as a screenshot and as text (for `afterEach`). */
export async function reportFailure(
  page: Page | undefined,
  task: { name: string; result?: { state?: string } },
): Promise<void> {
  if (task.result?.state !== "fail" || !page) return;
  await screenshot(page, `failed-${task.name.replace(/\W+/g, "-")}`).catch(() => undefined);
  const text = await page
    .locator("body")
    .innerText()
    .catch(() => "");
  console.log(`[page text at failure] ${text.slice(0, 2000)}`);
}

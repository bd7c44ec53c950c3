/**
 * `npm run docs`: writes the configuration page's settings tables from functions/src/config/.
 * `npm run docs -- --check` (in `npm run lint`): fails on a broken relative link, a setting read
 * but undeclared or documented but unread, a stale configuration page, or a troubleshooting page
 * that does not match contract/errors.ts. The checks themselves are in doc-checks.ts.
 */
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { ERROR_CODES } from "../functions/src/contract/errors";
import { SETTINGS } from "../functions/src/config/settings";
import {
  brokenLinks,
  errorCodeProblems,
  reachProblems,
  settingNames,
  settingProblems,
  withSettingsTables,
  type Page,
} from "./doc-checks";

const root = path.resolve(import.meta.dirname, "..");
const CONFIGURATION = "docs/configuration.md";
const TROUBLESHOOTING = "docs/troubleshooting.md";

function read(rel: string): string {
  return readFileSync(path.join(root, rel), "utf8");
}

function walk(rel: string, keep: (file: string) => boolean): string[] {
  const abs = path.join(root, rel);
  if (!existsSync(abs)) return [];
  if (statSync(abs).isFile()) return keep(rel) ? [rel] : [];
  return readdirSync(abs)
    .filter((f) => f !== "node_modules" && f !== "lib" && f !== "dist")
    .flatMap((f) => walk(path.posix.join(rel, f), keep));
}

/** The checked pages: the front door, CONTRIBUTING, docs/, and the READMEs beside the code. */
function docPages(): Page[] {
  const files = [
    "README.md",
    "CONTRIBUTING.md",
    ...walk("docs", (f) => f.endsWith(".md")),
    ...walk("functions/src", (f) => f.endsWith("README.md")),
  ];
  return files.map((p) => ({ path: p, text: read(p) }));
}

/** Names read in code: the function (config/ declares; the rest words errors), the page, scripts, test support, CI. */
function namesReadInCode(): Set<string> {
  const code = (f: string) => /\.(ts|tsx|mjs|js)$/.test(f) && !/\.test\.tsx?$/.test(f);
  const files = [
    ...walk("functions/src", code).filter((f) => f !== "functions/src/config/tooling.ts"),
    ...walk("web/src", code),
    ...walk("scripts", code).filter((f) => !/scripts\/doc(s|-checks)\.ts$/.test(f)),
    ...walk("test/support", code),
    ...walk("eval", code),
    ".ci/run",
  ];
  const names = new Set<string>();
  for (const f of files) for (const n of settingNames(read(f))) names.add(n);
  return names;
}

/** Every documentation problem in the repository (none when the docs are in order). */
export function checkRepository(): string[] {
  const pages = docPages();
  const mentioned = new Set<string>();
  for (const p of pages) if (p.path !== CONFIGURATION) for (const n of settingNames(p.text)) mentioned.add(n);
  return [
    ...brokenLinks(pages, (p) => existsSync(path.join(root, p))),
    ...reachProblems(pages),
    ...settingProblems({
      settings: SETTINGS,
      configurationPage: read(CONFIGURATION),
      readInCode: namesReadInCode(),
      mentionedInDocs: mentioned,
    }),
    ...errorCodeProblems(ERROR_CODES, read(TROUBLESHOOTING)),
  ];
}

function main(): void {
  if (!process.argv.includes("--check")) {
    const file = path.join(root, CONFIGURATION);
    writeFileSync(file, withSettingsTables(readFileSync(file, "utf8"), SETTINGS));
    console.log(`docs: wrote the settings tables of ${CONFIGURATION}.`);
    return;
  }
  const problems = checkRepository();
  for (const p of problems) console.error(`docs: ${p}`);
  if (problems.length) process.exit(1);
  console.log(`docs: ${docPages().length} pages, links, settings and error codes checked.`);
}

// Run as `npm run docs`; imported by the unit test for checkRepository.
if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) main();

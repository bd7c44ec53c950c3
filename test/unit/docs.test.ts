/**
 * One home per fact, enforced: the documentation checks of `npm run lint` (scripts/docs.ts) pass on
 * the repository, and each one fails on a fixture that breaks what it guards.
 */
import { describe, expect, it } from "vitest";
import { SETTINGS } from "../../functions/src/config/settings";
import { ERROR_CODES } from "../../functions/src/contract/errors";
import {
  anchors,
  brokenLinks,
  errorCodeProblems,
  reachProblems,
  settingNames,
  settingProblems,
  withSettingsTables,
  SETTINGS_BEGIN,
  SETTINGS_END,
} from "../../scripts/doc-checks";
import { checkRepository } from "../../scripts/docs";

describe("the repository's documentation", () => {
  it("has no broken link, no undeclared or unread setting, a current configuration page and every error code", () => {
    expect(checkRepository()).toEqual([]);
  });

  it("declares each setting once", () => {
    const names = SETTINGS.map((s) => s.name);
    expect(names.length).toBe(new Set(names).size);
  });
});

describe("links", () => {
  const pages = [
    { path: "README.md", text: "# Quarry\n\nSee [runs](docs/runs.md#the-lease) and [top](#quarry)." },
    { path: "docs/runs.md", text: "# Runs\n\n## The lease\n\nBack to the [README](../README.md)." },
  ];
  const files = new Set(["README.md", "docs/runs.md"]);

  it("passes links to files and headings that exist", () => {
    expect(brokenLinks(pages, (p) => files.has(p))).toEqual([]);
  });

  it("fails on a link to a missing file", () => {
    const broken = [...pages, { path: "docs/api.md", text: "# API\n\nSee [deploy](deploy.md)." }];
    expect(brokenLinks(broken, (p) => files.has(p) || p === "docs/api.md")).toEqual([
      "docs/api.md: link to deploy.md: no file docs/deploy.md",
    ]);
  });

  it("fails on a link to a missing anchor", () => {
    const broken = [{ ...pages[0], text: "# Quarry\n\nSee [runs](docs/runs.md#the-leases)." }, pages[1]];
    expect(brokenLinks(broken, (p) => files.has(p))).toEqual([
      "README.md: link to docs/runs.md#the-leases: no heading #the-leases in docs/runs.md",
    ]);
  });

  it("ignores links inside code and to other sites", () => {
    const page = {
      path: "README.md",
      text: "`[x](nowhere.md)`\n\n```\n[y](nowhere.md)\n```\n[z](https://x.dev/a.md)",
    };
    expect(brokenLinks([page], () => false)).toEqual([]);
  });

  it("makes anchors as GitHub does", () => {
    expect([...anchors("# A b\n## Run event log (`run-log`)\n## A b\n```\n# not\n```")]).toEqual([
      "a-b",
      "run-event-log-run-log",
      "a-b-1",
    ]);
  });
});

describe("reach", () => {
  const pages = [
    { path: "README.md", text: "# Quarry\n\n[runs](docs/runs.md)" },
    { path: "docs/runs.md", text: "# Runs\n\n[api](api.md#x)" },
    { path: "docs/api.md", text: "# API" },
  ];

  it("passes when every page is linked from the README or another page", () => {
    expect(reachProblems(pages)).toEqual([]);
  });

  it("fails on a page nothing links to, and on a README over 8 KB", () => {
    const orphan = [...pages, { path: "docs/lost.md", text: "# Lost" }];
    expect(reachProblems(orphan)).toEqual(["docs/lost.md: no page links to it"]);
    const big = [{ path: "README.md", text: "x".repeat(8 * 1024 + 1) }];
    expect(reachProblems(big)).toEqual(["README.md is 8193 bytes, more than 8192"]);
  });
});

describe("settings", () => {
  const one = SETTINGS.filter((s) => s.name === "QUARRY_MAX_ROWS");
  const page = withSettingsTables(`# Configuration\n\n${SETTINGS_BEGIN}\n${SETTINGS_END}\n`, one);
  const ok = {
    settings: one,
    configurationPage: page,
    readInCode: new Set(["QUARRY_MAX_ROWS"]),
    mentionedInDocs: new Set(["QUARRY_MAX_ROWS"]),
  };

  it("passes when the page is generated from the declarations and every name is read and declared", () => {
    expect(settingProblems(ok)).toEqual([]);
    expect(page).toContain("| `QUARRY_MAX_ROWS` | warehouse | integer | `10000` |");
  });

  it("fails on a name read in code but not declared", () => {
    expect(settingProblems({ ...ok, readInCode: new Set(["QUARRY_MAX_ROWS", "QUARRY_NEW_THING"]) })).toEqual([
      "QUARRY_NEW_THING is read in code but not declared in functions/src/config/",
    ]);
  });

  it("fails on a name documented but read nowhere", () => {
    expect(settingProblems({ ...ok, mentionedInDocs: new Set(["QUARRY_MAX_ROWS", "QUARRY_GONE"]) })).toEqual([
      "QUARRY_GONE is documented but read nowhere in code",
    ]);
  });

  it("fails when the page's table differs from the declarations", () => {
    const stale = page.replace("`10000`", "`5000`");
    expect(settingProblems({ ...ok, configurationPage: stale })).toEqual([
      "docs/configuration.md: the settings tables differ from functions/src/config/ (run `npm run docs`)",
    ]);
  });

  it("reads names, not prefixes", () => {
    expect([...settingNames("QUARRY_QUOTA_* and QUARRY_MAX_ROWS, VITE_QUARRY_API_URL")]).toEqual([
      "QUARRY_MAX_ROWS",
      "VITE_QUARRY_API_URL",
    ]);
  });
});

describe("error codes", () => {
  const table = (codes: readonly string[]) =>
    [
      "| Code | What it means | What to do |",
      "| --- | --- | --- |",
      ...codes.map((c) => `| \`${c}\` | … | … |`),
    ].join("\n");

  it("passes with one row per code", () => {
    expect(errorCodeProblems(ERROR_CODES, table(ERROR_CODES))).toEqual([]);
  });

  it("fails on a missing code and on a code errors.ts does not have", () => {
    const rows = [...ERROR_CODES.filter((c) => c !== "model:auth"), "model:gone"];
    expect(errorCodeProblems(ERROR_CODES, table(rows))).toEqual([
      "docs/troubleshooting.md: no row for `model:auth`",
      "docs/troubleshooting.md: `model:gone` is not a code of contract/errors.ts",
    ]);
  });
});

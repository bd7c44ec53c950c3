/**
 * The layer rule as `npm run lint` checks it (.dependency-cruiser.cjs): a tree shaped like
 * functions/src and web/src, written to a temporary folder, with one import that breaks each rule
 * and imports the rule allows — each broken rule is reported by name, and nothing else is.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { cruise, type ICruiseResult } from "dependency-cruiser";
import { afterAll, describe, expect, it } from "vitest";

const root = path.resolve(__dirname, "../..");
const ruleSet = createRequire(import.meta.url)(path.join(root, ".dependency-cruiser.cjs"));

const made: string[] = [];
afterAll(() => made.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** Writes `files` (path → imports) under a fresh folder and cruises it with the project's rules. */
async function cruiseTree(files: Record<string, string[]>): Promise<ICruiseResult> {
  const dir = mkdtempSync(path.join(tmpdir(), "quarry-layers-"));
  made.push(dir);
  for (const [file, imports] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    const lines = imports.map((to, i) => {
      const spec = path.relative(path.dirname(file), to).replace(/\.ts$/, "");
      return `import * as m${i} from "${spec.startsWith(".") ? spec : `./${spec}`}";\nexport const u${i} = m${i};`;
    });
    writeFileSync(path.join(dir, file), `${lines.join("\n")}\nexport const here = 1;\n`);
  }
  const { output } = await cruise(["functions/src", "web/src"], {
    ruleSet,
    validate: true,
    baseDir: dir,
    tsPreCompilationDeps: true,
  });
  return output as ICruiseResult;
}

const broken = (r: ICruiseResult) =>
  r.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`).sort();

/** The allowed shape: each layer importing the ones below it. */
const allowed: Record<string, string[]> = {
  "functions/src/index.ts": ["functions/src/app.ts"],
  "functions/src/app.ts": [
    "functions/src/http/routes.ts",
    "functions/src/mcp/index.ts",
    "functions/src/schedules/routes.ts",
  ],
  "functions/src/http/routes.ts": ["functions/src/runs/start.ts", "functions/src/access/gate.ts"],
  "functions/src/mcp/index.ts": ["functions/src/runs/start.ts"],
  "functions/src/schedules/routes.ts": ["functions/src/runs/start.ts"],
  "functions/src/runs/start.ts": [
    "functions/src/access/gate.ts",
    "functions/src/agent/graph.ts",
    "functions/src/errors.ts",
  ],
  "functions/src/access/gate.ts": ["functions/src/identity/broker.ts", "functions/src/tools/scope.ts"],
  "functions/src/identity/broker.ts": ["functions/src/config/index.ts"],
  "functions/src/agent/graph.ts": ["functions/src/context/catalog.ts"],
  "functions/src/context/catalog.ts": ["functions/src/tools/scope.ts"],
  "functions/src/tools/scope.ts": ["functions/src/contract/index.ts"],
  "functions/src/config/index.ts": [],
  "functions/src/errors.ts": ["functions/src/contract/index.ts"],
  "functions/src/contract/index.ts": [],
  "web/src/main.ts": ["functions/src/contract/index.ts"],
};

describe("the layer rule (dependency-cruiser)", () => {
  it("passes a tree where every import runs downward", async () => {
    expect(broken(await cruiseTree(allowed))).toEqual([]);
  });

  it("names each rule a tree breaks", async () => {
    const result = await cruiseTree({
      ...allowed,
      // a lower layer reaching up
      "functions/src/tools/scope.ts": ["functions/src/contract/index.ts", "functions/src/runs/start.ts"],
      "functions/src/runs/start.ts": ["functions/src/access/gate.ts", "functions/src/http/routes.ts"],
      "functions/src/config/index.ts": ["functions/src/agent/graph.ts"],
      // a channel reaching into another
      "functions/src/mcp/index.ts": ["functions/src/runs/start.ts", "functions/src/schedules/routes.ts"],
      // identity under access
      "functions/src/identity/broker.ts": ["functions/src/config/index.ts", "functions/src/access/gate.ts"],
      // the page past the contract
      "web/src/main.ts": ["functions/src/contract/index.ts", "functions/src/runs/start.ts"],
    });
    const rules = new Set(result.summary.violations.map((v) => v.rule.name));
    for (const rule of [
      "no-upward-from-tools",
      "no-upward-from-runs",
      "no-upward-from-base",
      "channel-mcp-imports-no-other-channel",
      "identity-not-into-access",
      "page-imports-only-the-contract",
      "no-circular",
    ]) {
      expect(rules, rule).toContain(rule);
    }
    expect(broken(result)).toContain(
      "no-upward-from-tools: functions/src/tools/scope.ts → functions/src/runs/start.ts",
    );
    expect(broken(result)).toContain(
      "channel-mcp-imports-no-other-channel: functions/src/mcp/index.ts → functions/src/schedules/routes.ts",
    );
    expect(broken(result)).toContain(
      "page-imports-only-the-contract: web/src/main.ts → functions/src/runs/start.ts",
    );
  });
});

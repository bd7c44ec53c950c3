/**
 * `npm run bench`: runs every test/bench/*.bench.ts in its own process, one after another. Each
 * benchmark prints its own table with the baseline measured in the same run.
 */
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import path from "node:path";

const dir = path.dirname(new URL(import.meta.url).pathname);
const only = process.argv.slice(2);
const files = readdirSync(dir)
  .filter((f) => f.endsWith(".bench.ts"))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();
let failed = 0;
for (const f of files) {
  console.log(`\n=== ${f} ===`);
  const run = spawnSync(process.execPath, ["--import", "tsx", path.join(dir, f)], { stdio: "inherit" });
  if (run.status !== 0) failed++;
}
if (failed) {
  console.error(`${failed} benchmark(s) failed`);
  process.exit(1);
}

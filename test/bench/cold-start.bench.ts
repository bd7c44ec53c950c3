/**
 * Cold start: median time to load the built function entry (functions/lib/index.js) in a fresh
 * Node process, against a hello-world firebase-functions + express entry measured in the same run.
 * Goal: Quarry ≤ 1.15 × baseline (LangChain, Vertex AI, BigQuery, DuckDB are loaded lazily).
 */
import { spawnSync } from "node:child_process";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "../..");
const entries = {
  "hello-world (baseline)": path.join(import.meta.dirname, "fixtures/hello-entry.cjs"),
  "quarry functions/lib/index.js": path.join(root, "functions/lib/index.js"),
};
const RUNS = Number(process.env.BENCH_RUNS ?? 21);

function loadMs(entry: string): number {
  const script =
    `const t=process.hrtime.bigint();require(${JSON.stringify(entry)});` +
    `process.stdout.write(String(Number(process.hrtime.bigint()-t)/1e6))`;
  const run = spawnSync(process.execPath, ["-e", script], {
    cwd: path.join(root, "functions"),
    env: {
      ...process.env,
      GCLOUD_PROJECT: "demo-quarry",
      FUNCTIONS_EMULATOR: "",
      FIRESTORE_EMULATOR_HOST: "",
    },
    encoding: "utf8",
  });
  if (run.status !== 0) throw new Error(`loading ${entry} failed:\n${run.stderr}`);
  return Number(run.stdout);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const samples: Record<string, number[]> = Object.fromEntries(Object.keys(entries).map((k) => [k, []]));
loadMs(entries["hello-world (baseline)"]); // warm the OS file cache for both
loadMs(entries["quarry functions/lib/index.js"]);
for (let i = 0; i < RUNS; i++) {
  // Alternate so drift on this machine hits both equally.
  for (const [name, file] of Object.entries(entries)) samples[name].push(loadMs(file));
}
const base = median(samples["hello-world (baseline)"]);
console.log(
  `Cold start: require() of the function entry, ${RUNS} fresh processes each, Node ${process.versions.node}`,
);
console.table(
  Object.entries(samples).map(([name, xs]) => ({
    entry: name,
    "median ms": median(xs).toFixed(1),
    "min ms": Math.min(...xs).toFixed(1),
    "max ms": Math.max(...xs).toFixed(1),
    "× baseline": (median(xs) / base).toFixed(2),
  })),
);
const ratio = median(samples["quarry functions/lib/index.js"]) / base;
console.log(`goal ≤ 1.15× baseline: ${ratio <= 1.15 ? "met" : "NOT met"} (${ratio.toFixed(2)}×)`);

/**
 * The function's express app (compiled, functions/lib) served in a process of its own, for benches
 * that need several instances or a configuration per variant (configuration is read once per
 * process). Run as a script with BENCH_ROLE=server it serves and prints `PORT <n>`.
 */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";

const root = path.resolve(import.meta.dirname, "../..");

/**
 * The access policy benchmarks run with, as a deployment would: verified addresses of the test
 * users' domain are members (so every run passes the gate and the quota check), and a questions
 * quota no benchmark reaches.
 */
export const BENCH_ACCESS_ENV = {
  QUARRY_ALLOWED_DOMAINS: "example.com",
  QUARRY_QUOTA_QUESTIONS_PER_MINUTE: "1000000",
};

/** Starts an instance with `env`; stop it with `child.kill()`. */
export function startAppServer(env: Record<string, string>): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ["--import", "tsx", import.meta.filename], {
    env: { ...process.env, ...env, BENCH_ROLE: "server" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`server exited with ${code}`)));
    createInterface({ input: child.stdout! }).on("line", (line) => {
      const port = /^PORT (\d+)$/.exec(line)?.[1];
      if (port) resolve({ url: `http://127.0.0.1:${port}`, child });
    });
  });
}

async function serve() {
  // As the function's entry does: a cancelled model call's abort echoes are not crashes.
  // BENCH_FUNCTIONS_DIR: another build of the function (a baseline measured in the same run).
  const lib = path.join(process.env.BENCH_FUNCTIONS_DIR ?? path.join(root, "functions"), "lib");
  // A baseline from before the run core moved out of http/ (issue #41) has them there.
  const at = async (today: string, before: string) => {
    const { existsSync } = await import("node:fs");
    return import(path.join(lib, existsSync(path.join(lib, today)) ? today : before));
  };
  const { installProcessGuards } = await at("runs/abort.js", "http/abort.js");
  installProcessGuards((message: string, data: unknown) => console.error(message, data));
  const { createApp } = await at("app.js", "http/app.js");
  const server = createApp().listen(0, "127.0.0.1", () => console.log(`PORT ${server.address().port}`));
}

if (process.env.BENCH_ROLE === "server") void serve();

/**
 * The function as it was at git `ref`, built in a temporary directory (the repository's
 * node_modules linked in): a baseline a benchmark serves beside today's build, in the same run.
 * Returns its functions directory, for BENCH_FUNCTIONS_DIR; remove `dir` when done.
 */
export async function buildBaseline(ref: string): Promise<{ functionsDir: string; dir: string }> {
  const { execFileSync } = await import("node:child_process");
  const { mkdtempSync, symlinkSync } = await import("node:fs");
  const os = await import("node:os");
  const dir = mkdtempSync(path.join(os.tmpdir(), "quarry-baseline-"));
  const archive = execFileSync("git", ["archive", ref, "functions", "tsconfig.base.json"], {
    cwd: root,
    maxBuffer: 256 * 1024 * 1024,
  });
  execFileSync("tar", ["-x", "-C", dir], { input: archive });
  symlinkSync(path.join(root, "node_modules"), path.join(dir, "node_modules"));
  symlinkSync(path.join(root, "functions/node_modules"), path.join(dir, "functions/node_modules"));
  execFileSync(
    process.execPath,
    [path.join(root, "node_modules/typescript/bin/tsc"), "-p", "functions/tsconfig.build.json"],
    {
      cwd: dir,
      stdio: "inherit",
    },
  );
  return { functionsDir: path.join(dir, "functions"), dir };
}

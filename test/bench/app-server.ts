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
  const { installProcessGuards } = await import(path.join(root, "functions/lib/http/abort.js"));
  installProcessGuards((message: string, data: unknown) => console.error(message, data));
  const { createApp } = await import(path.join(root, "functions/lib/http/app.js"));
  const server = createApp().listen(0, "127.0.0.1", () => console.log(`PORT ${server.address().port}`));
}

if (process.env.BENCH_ROLE === "server") void serve();

import { describe, it, expect, afterEach } from "vitest";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { ROOT, StackError, isPortFree, startStack, type Stack } from "../../scripts/stack.mjs";

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

function processesMentioning(text: string): string[] {
  const ps = spawnSync("ps", ["-eo", "pid,args"], { encoding: "utf8" });
  return ps.stdout.split("\n").filter((l) => l.includes(text) && !l.includes("ps -eo"));
}

describe("the local-stack launcher", () => {
  let first: Stack | undefined;

  afterEach(async () => {
    await first?.stop();
    first = undefined;
  });

  it("refuses a taken port with a clear error naming it", async () => {
    first = await startStack({ services: ["firestore"], ports: "auto" });
    const taken = first.ports.firestore;
    const second = startStack({ services: ["firestore"], ports: { firestore: taken } });
    await expect(second).rejects.toThrow(StackError);
    await expect(second).rejects.toThrow(
      new RegExp(`Port ${taken} \\(firestore emulator\\) is already in use`),
    );
    // The first stack is untouched by the refused second start.
    const res = await fetch(`${first.urls.firestore}/`);
    expect(res.ok).toBe(true);
  });

  it("leaves no emulator process behind when stopped (the Java wrapper's child included)", async () => {
    first = await startStack({ services: ["firestore"], ports: "auto" });
    const port = first.ports.firestore;
    const pids = [...first.pids];
    // The wrapper script forks a JVM: both are running now.
    expect(processesMentioning(`--port=${port}`).length).toBeGreaterThanOrEqual(1);
    await first.stop();
    first = undefined;
    for (const pid of pids) expect(groupAlive(pid)).toBe(false);
    expect(processesMentioning(`--port=${port}`)).toEqual([]);
    expect(await isPortFree(port)).toBe(true);
  });

  it("refuses to start functions without FIRESTORE_EMULATOR_HOST instead of hanging", async () => {
    const attempt = startStack({
      services: ["functions"],
      ports: "auto",
      env: { FIRESTORE_EMULATOR_HOST: "" },
    });
    await expect(attempt).rejects.toThrow(/FIRESTORE_EMULATOR_HOST is not set/);
  });

  it("the built function reports a missing FIRESTORE_EMULATOR_HOST when it loads", () => {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      FUNCTIONS_EMULATOR: "true",
      GCLOUD_PROJECT: "demo-quarry",
    };
    delete env.FIRESTORE_EMULATOR_HOST;
    const run = spawnSync(
      process.execPath,
      ["-e", `require(${JSON.stringify(path.join(ROOT, "functions/lib/index.js"))})`],
      {
        env,
        encoding: "utf8",
        timeout: 30_000,
      },
    );
    // It exits by itself with the message; it is not killed by the timeout.
    expect(run.signal).toBeNull();
    expect(run.status).not.toBe(0);
    expect(run.stderr).toMatch(/FIRESTORE_EMULATOR_HOST is not set in the functions emulator's environment/);
  });
});

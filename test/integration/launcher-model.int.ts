/**
 * `npm start`'s model line: the launcher (scripts/stack.mjs, what `npm start` runs after building)
 * prints, once the stack is up, the provider and model the function will use — or that none is
 * configured and the three ways to get one. Each configuration runs the real launcher in its own
 * process with a clean environment and an empty HOME (no gcloud credentials on any machine).
 */
import { describe, it, expect } from "vitest";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { ROOT } from "../../scripts/stack.mjs";

const MODEL_ENV =
  /^(GEMINI_API_KEY|GOOGLE_API_KEY|GOOGLE_APPLICATION_CREDENTIALS|VERTEX_AI_EMULATOR_HOST|QUARRY_.*|FIRESTORE_EMULATOR_HOST|FIREBASE_AUTH_EMULATOR_HOST|GCLOUD_PROJECT|NODE_EXTRA_CA_CERTS)$/;

/** Starts the launcher, waits for its "Ready." line, stops it, and returns its model lines. */
async function launch(env: Record<string, string>): Promise<string[]> {
  return pick(await launchOutput(env), (l) => l.startsWith("[quarry] Model:") || l.startsWith("[quarry]   "));
}

/** The [quarry] lines of the launcher's output that `keep` keeps, without the prefix. */
function pick(out: string, keep: (line: string) => boolean): string[] {
  return out
    .split("\n")
    .filter(keep)
    .map((l) => l.replace(/^\[quarry\] /, ""));
}

/** Starts the launcher, waits for its "Ready." line, stops it, and returns its output. */
async function launchOutput(
  env: Record<string, string>,
  args = ["--ports=auto", "--only=firestore,functions"],
): Promise<string> {
  const home = mkdtempSync(path.join(tmpdir(), "quarry-home-"));
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !MODEL_ENV.test(k)));
  const child = spawn(process.execPath, [path.join(ROOT, "scripts/stack.mjs"), ...args], {
    cwd: ROOT,
    env: { ...base, HOME: home, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  // Listened for from the start: a launcher that exits before it is ready has already exited when
  // the `finally` below waits for it.
  const exited = new Promise((r) => child.once("exit", r));
  let out = "";
  try {
    await new Promise<void>((resolve, reject) => {
      // The launcher bounds each emulator's start itself; this bound only makes a launcher that
      // neither gets ready nor exits fail with what it printed, instead of the test's timeout.
      const stuck = setTimeout(
        () => reject(new Error(`the launcher was not ready after 200 s:\n${out}`)),
        200_000,
      );
      child.once("exit", () => clearTimeout(stuck));
      const onData = (c: Buffer) => {
        out += c.toString("utf8");
        if (out.includes("[quarry] Ready.")) {
          clearTimeout(stuck);
          resolve();
        }
      };
      child.stdout.on("data", onData);
      child.stderr.on("data", (c: Buffer) => (out += c.toString("utf8")));
      child.once("exit", (code) =>
        reject(new Error(`the launcher exited (${code}) before it was ready:\n${out}`)),
      );
    });
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
    rmSync(home, { recursive: true, force: true });
  }
  return out;
}

describe("npm start's model line", { timeout: 240_000 }, () => {
  it("names the Gemini Developer API when GEMINI_API_KEY is set", async () => {
    const lines = await launch({ GEMINI_API_KEY: "AIza-test" });
    expect(lines).toEqual([
      "Model: Gemini Developer API · gemini-2.5-flash at https://generativelanguage.googleapis.com",
    ]);
  });

  it("names the OpenAI-compatible server and model when its base URL and model are set", async () => {
    const lines = await launch({
      QUARRY_OPENAI_BASE_URL: "http://127.0.0.1:11434/v1",
      QUARRY_MODEL: "qwen2.5:7b",
    });
    expect(lines).toEqual(["Model: OpenAI-compatible server · qwen2.5:7b at http://127.0.0.1:11434/v1"]);
  });

  it("names Vertex AI when a Vertex AI stand-in is set", async () => {
    const lines = await launch({ VERTEX_AI_EMULATOR_HOST: "127.0.0.1:8085", QUARRY_MODEL: "gemini-2.5-pro" });
    expect(lines).toEqual(["Model: Vertex AI · gemini-2.5-pro at https://127.0.0.1:8085"]);
  });

  it("prints the local open access policy when none is set", async () => {
    const openOutput = await launchOutput({ GEMINI_API_KEY: "AIza-test" });
    // Nothing false on the way: firebase-tools' discovery pass logs no alarming error about a policy
    // that the launcher then sets, and no ERROR at all.
    expect(openOutput).not.toMatch(/answers nobody/);
    expect(openOutput).not.toMatch(/"severity":"ERROR"|\bERROR\b/);
    const open = pick(openOutput, (l) => l.startsWith("[quarry] Access:"));
    expect(open[0]).toMatch(/^Access: local open policy — every account of the Auth emulator/);
    expect(open[1]).toMatch(/QUARRY_ALLOWED_DOMAINS=example\.com QUARRY_ADMINS=you@example\.com npm start$/);
  });

  it("prints a closed access policy when one is set", async () => {
    const closed = pick(
      await launchOutput({
        GEMINI_API_KEY: "AIza-test",
        QUARRY_ALLOWED_DOMAINS: "acme.test",
        QUARRY_ADMINS: "boss@acme.test",
      }),
      (l) => l.startsWith("[quarry] Access:"),
    );
    expect(closed).toEqual([
      "Access: closed — verified emails in acme.test are members; admins: boss@acme.test; others are refused (403).",
    ]);
  });

  it("exits at once, saying what to pass, when given an argument it does not know", async () => {
    const attempt = launchOutput({ GEMINI_API_KEY: "AIza-test" }, ["--port=5001"]);
    await expect(attempt).rejects.toThrow(/exited \(1\) before it was ready/);
    await expect(attempt).rejects.toThrow(/Unknown argument --port=5001\. Try --ports=auto/);
  });

  it("without any model says so and prints the three ways, one line each", async () => {
    const lines = await launch({});
    expect(lines[0]).toMatch(/^Model: NOT CONFIGURED\. No AI model is configured/);
    expect(lines.slice(1)).toEqual([
      expect.stringMatching(
        /^ {2}1\. Gemini API key .*: GEMINI_API_KEY=<your key> npm start {3}\(https:\/\/aistudio/,
      ),
      expect.stringMatching(
        /^ {2}2\. Local OpenAI-compatible server .*QUARRY_OPENAI_BASE_URL=http:\/\/127\.0\.0\.1:11434\/v1 QUARRY_MODEL=/,
      ),
      expect.stringMatching(/^ {2}3\. Vertex AI .*gcloud auth application-default login/),
    ]);
  });
});

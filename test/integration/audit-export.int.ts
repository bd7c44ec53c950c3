/**
 * `npm run audit -- export`, run as the command runs (a child process, scripts/audit.ts through
 * tsx) against the integration stack's Firestore: entries written with `AuditLog.record` come out
 * as JSON Lines, newest first, exactly those at or after `--since` (and of `--person`); a bad date
 * or an unknown option is refused with words saying what to write.
 */
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { spawn } from "node:child_process";
import path from "node:path";
import { Firestore, Timestamp } from "@google-cloud/firestore";
import { AuditLog, type AdminAudit, type QueryAudit } from "../../functions/src/access/audit";
import { ROOT } from "../../scripts/stack.mjs";
import { stackEnv } from "../support/stack-env";

let db: Firestore;
let log: AuditLog;

beforeAll(() => {
  const stack = stackEnv();
  db = new Firestore({
    projectId: stack.env.GCLOUD_PROJECT,
    host: stack.env.FIRESTORE_EMULATOR_HOST,
    ssl: false,
  });
  log = new AuditLog(db, Timestamp, 30);
});
afterAll(async () => {
  await db?.terminate();
});

/** Runs `npm run audit -- <args>` (the script the npm script runs) to its end. */
function audit(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", path.join(ROOT, "scripts/audit.ts"), ...args], {
      cwd: ROOT,
      env: process.env,
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (b: Buffer) => (stdout += b.toString()));
    child.stderr.on("data", (b: Buffer) => (stderr += b.toString()));
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** The newest stored entry's time, ms, for entries matching `where` (as stored, not as read back). */
async function storedAt(field: string, value: string): Promise<number> {
  const snap = await db.collection("audit").where(field, "==", value).get();
  return Math.max(...snap.docs.map((d) => (d.get("at") as Timestamp).toMillis()));
}

/** Waits until the clock has passed `ms`, so the next entry is strictly later. */
async function clockPast(ms: number): Promise<void> {
  await expect.poll(() => Date.now(), { interval: 1 }).toBeGreaterThan(ms);
}

describe("npm run audit -- export", () => {
  it("writes the entries at or after --since, newest first, one JSON object per line", async () => {
    const tag = `${Date.now()}`;
    const before: AdminAudit = {
      kind: "admin",
      uid: `admin-${tag}`,
      email: "admin@quarry-admins.test",
      action: "member.add",
      target: `early-${tag}@example.com`,
    };
    const query: QueryAudit = {
      kind: "query",
      uid: `alice-${tag}`,
      email: `alice-${tag}@example.com`,
      threadId: "t1",
      runId: "r1",
      sql: "SELECT COUNT(*) AS orders FROM shop.orders",
      outcome: "ok",
      bytesBilled: 1024,
      jobId: "job-1",
      durationMs: 12,
    };
    const removal: AdminAudit = {
      kind: "admin",
      uid: `admin-${tag}`,
      email: "admin@quarry-admins.test",
      action: "member.remove",
      target: `late-${tag}@example.com`,
      detail: { role: "member" },
    };
    await log.record(before);
    const beforeAt = await storedAt("target", before.target);
    await clockPast(beforeAt);
    const since = new Date(beforeAt + 1);
    await log.record(query);
    const queryAt = await storedAt("uid", query.uid);
    await clockPast(queryAt);
    await log.record(removal);
    const removalAt = await storedAt("target", removal.target);

    const run = await audit("export", "--since", since.toISOString());
    expect(run.stderr).toContain("[audit] exported 2 entries, newest first.");
    expect(run.code).toBe(0);
    expect(run.stdout.endsWith("\n")).toBe(true);
    const lines = run.stdout.trimEnd().split("\n");
    expect(lines.map((l) => JSON.parse(l) as unknown)).toEqual([
      { ...removal, at: new Date(removalAt).toISOString() },
      { ...query, at: new Date(queryAt).toISOString() },
    ]);

    // --person (an email, any case) and --until (exclusive) narrow it further.
    const alice = await audit(
      "export",
      "--since",
      since.toISOString(),
      "--person",
      query.email!.toUpperCase(),
    );
    expect(
      alice.stdout
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l) as unknown),
    ).toEqual([{ ...query, at: new Date(queryAt).toISOString() }]);
    const upTo = await audit(
      "export",
      "--since",
      since.toISOString(),
      "--until",
      new Date(removalAt).toISOString(),
    );
    expect(
      upTo.stdout
        .trimEnd()
        .split("\n")
        .map((l) => (JSON.parse(l) as { uid: string }).uid),
    ).toEqual([query.uid]);
    // A day after everything above: nothing, and an empty output.
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    expect(await audit("export", "--since", tomorrow)).toMatchObject({ code: 0, stdout: "" });
  });

  it.each([
    [
      ["--since", "2026-13-01"],
      /--since must be a day like 2026-11-01 or a time like 2026-11-01T09:30:00Z, got "2026-13-01"/,
    ],
    [["--since", "2026-02-30"], /--since must be a day .* got "2026-02-30"/],
    [["--until", "yesterday"], /--until must be a day .* got "yesterday"/],
    [["--since", "2026-11-01T09:30"], /--since must be a day .* got "2026-11-01T09:30"/],
    [
      ["--since", "2026-11-02", "--until", "2026-11-01"],
      /--until \(2026-11-01T00:00:00.000Z\) must be after --since/,
    ],
    [["--since"], /--since needs a value/],
    [["--from", "2026-11-01"], /Unknown option "--from"/],
  ])("refuses %j, saying what to write", async (args, message) => {
    const run = await audit("export", ...args);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(message);
    expect(run.stdout).toBe("");
  });

  it("without a command, prints the usage", async () => {
    const run = await audit();
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/Usage: npm run audit -- export/);
  });
});

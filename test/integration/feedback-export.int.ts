/**
 * `npm run feedback -- export`, run as the command runs (a child process) against the integration
 * stack's Firestore and a copy of the shipped context file: the verified queries approved in the
 * admin page (`approved_queries`) are written into the file — a new one appended, one already
 * there skipped, one whose SQL fails the dry run refused with the reason — and the file still
 * validates. This file owns `approved_queries` while it runs (integration files run one at a time).
 */
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { spawn } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Firestore } from "@google-cloud/firestore";
import { parseContextFile, validateAgainstWarehouse } from "../../functions/src/context/authored";
import { readConfig } from "../../functions/src/config";
import { closeWarehouses, getWarehouse } from "../../functions/src/tools";
import { ROOT } from "../../scripts/stack.mjs";
import { stackEnv } from "../support/stack-env";

let db: Firestore;

beforeAll(() => {
  const stack = stackEnv();
  db = new Firestore({
    projectId: stack.env.GCLOUD_PROJECT,
    host: stack.env.FIRESTORE_EMULATOR_HOST,
    ssl: false,
  });
});
afterAll(async () => {
  await db?.terminate();
  await closeWarehouses();
});

/** Runs `npm run feedback -- <args>` with the context folder `dir`. */
function feedback(
  dir: string,
  ...args: string[]
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", path.join(ROOT, "scripts/feedback.ts"), ...args],
      {
        cwd: ROOT,
        env: { ...process.env, QUARRY_CONTEXT_DIR: dir, QUARRY_WAREHOUSE: "duckdb" },
      },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (b: Buffer) => (stdout += b.toString()));
    child.stderr.on("data", (b: Buffer) => (stderr += b.toString()));
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}

async function approve(id: string, question: string, sql: string, minute: number): Promise<void> {
  await db
    .collection("approved_queries")
    .doc(id)
    .set({
      id,
      question,
      sql,
      proposalId: id,
      approvedBy: "admin@quarry-admins.test",
      approvedAt: `2026-11-01T10:${String(minute).padStart(2, "0")}:00.000Z`,
    });
}

describe("npm run feedback -- export", () => {
  it("writes approved queries into the context file, skipping ones already there or that do not validate", async () => {
    for (const d of (await db.collection("approved_queries").get()).docs) await d.ref.delete();
    const dir = mkdtempSync(path.join(tmpdir(), "quarry-export-"));
    const file = path.join(dir, "shop.yaml");
    copyFileSync(path.join(ROOT, "functions/context/shop.yaml"), file);
    const original = readFileSync(file, "utf8");
    const before = parseContextFile(original, file).context.verified_queries;
    const fresh = {
      question: "How many customers are there?",
      sql: "SELECT COUNT(*) AS customers FROM shop.customers",
    };
    await approve("new", fresh.question, fresh.sql, 1);
    // Already in the file (its first verified query), written with other whitespace.
    await approve("dup", `  ${before[0].question} `, before[0].sql.replace(/ /g, "  "), 2);
    await approve("broken", "Which colour is most popular?", "SELECT colour FROM shop.products", 3);

    const run = await feedback(dir, "export");
    expect(run.code).toBe(1); // one could not be written; the others were
    expect(run.stdout).toContain(`Added new to ${file}.`);
    expect(run.stdout).toContain(`Already in ${file}: dup.`);
    expect(run.stdout).toContain(`Wrote 1 verified query into ${file}. Commit the file.`);
    expect(run.stderr).toMatch(/Not exported: broken: .*shop\.yaml would not validate with it:\n.*dry run/s);

    const text = readFileSync(file, "utf8");
    const parsed = parseContextFile(text, file);
    expect(parsed.context.verified_queries).toEqual([...before, fresh]);
    // The rest of the file byte for byte as it was: the diff to commit is the new entry alone.
    expect(text).toBe(`${original.trimEnd()}\n  - question: ${fresh.question}\n    sql: ${fresh.sql}\n`);
    const warehouse = await getWarehouse(readConfig({ GOOGLE_CLOUD_PROJECT: "p" }).warehouse);
    await validateAgainstWarehouse(parsed, warehouse, file); // still valid

    // Again, without the broken one: nothing new, the file unchanged, success.
    await db.collection("approved_queries").doc("broken").delete();
    const again = await feedback(dir, "export");
    expect(again).toMatchObject({ code: 0, stderr: "" });
    expect(again.stdout).toContain(`Already in ${file}: new.`);
    expect(again.stdout).toContain("Nothing new to write.");
    expect(readFileSync(file, "utf8")).toBe(text);
  });

  it("with no context file, says to name one", async () => {
    const empty = mkdtempSync(path.join(tmpdir(), "quarry-export-empty-"));
    const run = await feedback(empty, "export");
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`[feedback] No context files in ${empty}; say which with --file.`);
  });
});

/**
 * `npm run context -- import dbt … --propose`, run as the command runs (a child process) against
 * the integration stack's Firestore: the public jaffle-shop fixture's saved queries that compile
 * to SQL become proposals in the admin page's review (the feedback collection, `proposed`), the
 * one that does not is said; a second import proposes nothing again, and a proposal an admin
 * rejected in between stays rejected.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Firestore } from "@google-cloud/firestore";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../../scripts/stack.mjs";
import { stackEnv } from "../support/stack-env";
import { JAFFLE, jaffleFiles } from "../unit/context-imports/jaffle";

let db: Firestore;
let dir: string;

beforeAll(() => {
  const stack = stackEnv();
  db = new Firestore({
    projectId: stack.env.GCLOUD_PROJECT,
    host: stack.env.FIRESTORE_EMULATOR_HOST,
    ssl: false,
  });
  dir = mkdtempSync(path.join(tmpdir(), "quarry-import-propose-"));
});
afterAll(async () => {
  // Other files list the proposals waiting: leave none of these behind.
  for (const d of (await db.collection("feedback").where("uid", "==", "import:dbt").get()).docs)
    await d.ref.delete();
  await db?.terminate();
  rmSync(dir, { recursive: true, force: true });
});

function importCommand(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        path.join(ROOT, "scripts/context.ts"),
        "import",
        "dbt",
        JAFFLE,
        "--map",
        "main=jaffle",
        ...args,
      ],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          QUARRY_CONTEXT_DIR: dir,
          QUARRY_WAREHOUSE: "duckdb",
          QUARRY_DUCKDB_FILES: jaffleFiles(),
        },
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

interface Proposed {
  id: string;
  questionId: string;
  status: string;
  sql: string;
}

const imported = async (): Promise<Proposed[]> =>
  (await db.collection("feedback").where("uid", "==", "import:dbt").get()).docs.map(
    (d) => ({ id: d.id, ...d.data() }) as Proposed,
  );

describe("npm run context -- import dbt --propose", () => {
  it("proposes the saved queries with SQL for review, once, and never undoes a review", async () => {
    for (const d of (await db.collection("feedback").where("uid", "==", "import:dbt").get()).docs)
      await d.ref.delete();
    const first = await importCommand("--propose");
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain("Saved queries proposed for review: order_metrics, revenue_metrics");
    expect(first.stdout).toMatch(/not proposed: customer_order_metrics: it groups by Entity\('customer'\)/);
    const docs = await imported();
    expect(docs.map((d) => [d.questionId, d.status]).sort()).toEqual([
      ["order_metrics", "proposed"],
      ["revenue_metrics", "proposed"],
    ]);
    for (const d of docs) {
      expect(d.id).toMatch(/^[0-9a-f]{40}$/); // the admin page's proposal id
      expect(d.sql).toMatch(/^SELECT metric_time, /);
    }
    // An admin rejects one; the next import leaves both as they are.
    const revenue = docs.find((d) => d.questionId === "revenue_metrics")!;
    await db.collection("feedback").doc(revenue.id).update({ status: "rejected" });
    const second = await importCommand("--propose");
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain("Saved queries proposed for review: (none)");
    expect(second.stdout).toContain("proposed before (left as reviewed): order_metrics, revenue_metrics");
    const after = await imported();
    expect(after).toHaveLength(2);
    expect(after.find((d) => d.id === revenue.id)!.status).toBe("rejected");
  });
});

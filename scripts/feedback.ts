/**
 * `npm run feedback -- list | approve <id> [--file F] [--question "…"] | reject <id> | export [--file F]`
 *
 * Reviews the verified queries people proposed by up-voting answers (Firestore `feedback`, written
 * by the API): `list` shows them; `approve` appends one to a context file (default: the only file
 * in QUARRY_CONTEXT_DIR) if the file still validates with it — its SQL passes the warehouse's dry
 * run — and marks it approved; `reject` marks it rejected. `export` writes the verified queries
 * approved in the admin page (Firestore `approved_queries`, which the function merges with the
 * files' own) into the context files, so the team can version them: each into the file of the
 * dataset its SQL names (or all into --file), skipping one already there, and only if the file
 * still validates with it (exit code 1 when one could not be written; the others are). Locally,
 * point it at the running stack with FIRESTORE_EMULATOR_HOST (`npm start` prints it); in
 * production it uses your gcloud credentials and GOOGLE_CLOUD_PROJECT.
 */
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import type { Firestore } from "@google-cloud/firestore";
import { readConfig, type RuntimeConfig } from "../functions/src/config";
import {
  approveProposal,
  exportApprovedQueries,
  listProposals,
  rejectProposal,
} from "../functions/src/context/proposals";
import { closeWarehouses, getWarehouse } from "../functions/src/tools";
import { commandFirestore, runCommand } from "./cli";

const USAGE =
  'Usage: npm run feedback -- list | approve <id> [--file F] [--question "…"] | reject <id> | export [--file F]';

function flag(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

/** The context files in the context folder. */
function contextFiles(dir: string): string[] {
  return existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => /\.ya?ml$/.test(f))
        .map((f) => path.join(dir, f))
    : [];
}

/** `export`: approved queries from Firestore into the context files; 1 when one could not be written. */
async function exportCommand(db: Firestore, cfg: RuntimeConfig, args: string[]): Promise<number> {
  const only = flag(args, "--file");
  const files = contextFiles(cfg.contextDir);
  if (!only && !files.length)
    throw new Error(`No context files in ${cfg.contextDir}; say which with --file.`);
  const report = await exportApprovedQueries({
    db,
    files,
    warehouse: await getWarehouse(cfg.warehouse),
    ...(only ? { only } : {}),
  });
  for (const { id, file } of report.added) console.log(`Added ${id} to ${file}.`);
  for (const { id, file } of report.present) console.log(`Already in ${file}: ${id}.`);
  for (const { id, why } of report.skipped) console.error(`Not exported: ${id}: ${why}`);
  const changed = new Set(report.added.map((a) => a.file));
  console.log(
    changed.size
      ? `Wrote ${report.added.length} verified quer${report.added.length === 1 ? "y" : "ies"} into ${[...changed].join(", ")}. Commit the file${changed.size === 1 ? "" : "s"}.`
      : "Nothing new to write.",
  );
  return report.skipped.length ? 1 : 0;
}

async function main(): Promise<number> {
  const [command, id, ...rest] = process.argv.slice(2);
  const cfg = readConfig({ GOOGLE_CLOUD_PROJECT: "demo-quarry", ...process.env });
  const db = commandFirestore(cfg);
  try {
    if (command === "export") return await exportCommand(db, cfg, [id, ...rest].filter(Boolean));
    if (command === "list") {
      const proposals = await listProposals(db, cfg.feedbackCollection);
      if (!proposals.length) console.log("No proposals waiting for review.");
      for (const p of proposals) {
        console.log(
          `${p.id}\n  question: ${p.question}\n  sql: ${p.sql}${p.note ? `\n  note: ${p.note}` : ""}\n`,
        );
      }
      return 0;
    }
    if ((command === "approve" || command === "reject") && id) {
      if (command === "reject") {
        await rejectProposal(db, id, cfg.feedbackCollection);
        console.log(`Rejected ${id}.`);
        return 0;
      }
      const files = contextFiles(cfg.contextDir);
      const file = flag(rest, "--file") ?? (files.length === 1 ? files[0] : undefined);
      if (!file)
        throw new Error(
          `Say which context file with --file (in ${cfg.contextDir}: ${files.map((f) => path.basename(f)).join(", ") || "none"}).`,
        );
      const question = flag(rest, "--question");
      await approveProposal({
        db,
        id,
        file,
        warehouse: await getWarehouse(cfg.warehouse),
        collection: cfg.feedbackCollection,
        ...(question ? { question } : {}),
      });
      console.log(`Approved ${id}: added to ${file}. Commit the file and deploy to use it.`);
      return 0;
    }
    console.error(USAGE);
    return 2;
  } finally {
    await db.terminate();
    await closeWarehouses();
  }
}

runCommand("feedback", main);

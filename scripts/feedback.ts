/**
 * `npm run feedback -- list | approve <id> [--file F] [--question "…"] | reject <id>`
 *
 * Reviews the verified queries people proposed by up-voting answers (Firestore `feedback`, written
 * by the API): `list` shows them; `approve` appends one to a context file (default: the only file
 * in QUARRY_CONTEXT_DIR) if the file still validates with it — its SQL passes the warehouse's dry
 * run — and marks it approved; `reject` marks it rejected. Locally, point it at the running stack
 * with FIRESTORE_EMULATOR_HOST (`npm start` prints it); in production it uses your gcloud
 * credentials and GOOGLE_CLOUD_PROJECT.
 */
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { readConfig } from "../functions/src/config";
import { approveProposal, listProposals, rejectProposal } from "../functions/src/context/proposals";
import { closeWarehouses, getWarehouse } from "../functions/src/tools";
import { commandFirestore, runCommand } from "./cli";

function flag(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

async function main(): Promise<number> {
  const [command, id, ...rest] = process.argv.slice(2);
  const cfg = readConfig({ GOOGLE_CLOUD_PROJECT: "demo-quarry", ...process.env });
  const db = commandFirestore(cfg);
  try {
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
      const files = existsSync(cfg.contextDir)
        ? readdirSync(cfg.contextDir).filter((f) => /\.ya?ml$/.test(f))
        : [];
      const file =
        flag(rest, "--file") ?? (files.length === 1 ? path.join(cfg.contextDir, files[0]) : undefined);
      if (!file)
        throw new Error(
          `Say which context file with --file (in ${cfg.contextDir}: ${files.join(", ") || "none"}).`,
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
    console.error('Usage: npm run feedback -- list | approve <id> [--file F] [--question "…"] | reject <id>');
    return 2;
  } finally {
    await db.terminate();
    await closeWarehouses();
  }
}

runCommand("feedback", main);

/**
 * `npm run audit -- export [--since D] [--until D] [--person P] > audit.jsonl` (`npm run`: a bare
 * `npm audit` is npm's own vulnerability report)
 *
 * Exports the audit log (Firestore `audit`, server-only: every query and every admin action) as
 * JSON Lines on stdout — one entry per line, **newest first**, each as the admin API returns it
 * (`at` an ISO time; the TTL field left out). `--since` is inclusive and `--until` exclusive; each
 * is a day (`2026-11-01`, midnight UTC) or a time (`2026-11-01T09:30:00Z`). `--person` is an email
 * or a uid. Read a page at a time through `AuditLog.read`, so a long export never holds the whole
 * log. Locally, point it at the running stack with FIRESTORE_EMULATOR_HOST (`npm start` prints it);
 * in production it uses your gcloud credentials and GOOGLE_CLOUD_PROJECT.
 */
import { Timestamp } from "@google-cloud/firestore";
import { AuditLog } from "../functions/src/access/audit";
import { readConfig } from "../functions/src/config";
import { commandFirestore, runCommand } from "./cli";

const USAGE =
  "Usage: npm run audit -- export [--since 2026-11-01] [--until 2026-12-01] [--person alice@example.com|uid] > audit.jsonl";
const PAGE = 500;

/** The options of `export`, checked: unknown flags and missing values are refused. */
interface ExportOptions {
  since?: Date;
  until?: Date;
  person?: string;
}

/** A day (midnight UTC) or an ISO time with its zone; anything else is refused with an example. */
function parseWhen(flag: string, raw: string): Date {
  const day = /^\d{4}-\d{2}-\d{2}$/.test(raw);
  const time = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(raw);
  const when = new Date(day ? `${raw}T00:00:00Z` : raw);
  // A day like 2026-02-30 parses (as March 2): compare it back to what was written.
  const real = !Number.isNaN(when.getTime()) && (!day || when.toISOString().slice(0, 10) === raw);
  if (!(day || time) || !real) {
    throw new Error(
      `${flag} must be a day like 2026-11-01 or a time like 2026-11-01T09:30:00Z, got "${raw}".`,
    );
  }
  return when;
}

/** Reads `export`'s flags. */
function parseExportArgs(args: string[]): ExportOptions {
  const opts: ExportOptions = {};
  for (let i = 0; i < args.length; i += 2) {
    const [flag, value] = [args[i], args[i + 1]];
    if (!["--since", "--until", "--person"].includes(flag))
      throw new Error(`Unknown option "${flag}".\n${USAGE}`);
    if (value === undefined || value.startsWith("--")) throw new Error(`${flag} needs a value.\n${USAGE}`);
    if (flag === "--person") opts.person = value.trim();
    else opts[flag === "--since" ? "since" : "until"] = parseWhen(flag, value);
  }
  if (opts.since && opts.until && opts.until <= opts.since) {
    throw new Error(
      `--until (${opts.until.toISOString()}) must be after --since (${opts.since.toISOString()}): --until is exclusive.`,
    );
  }
  return opts;
}

/** Writes every entry matching `opts` to `out`, newest first; returns how many. */
async function exportAudit(log: AuditLog, opts: ExportOptions, out: (line: string) => void): Promise<number> {
  let count = 0;
  let cursor: string | undefined;
  do {
    const page = await log.read({ ...opts, limit: PAGE, ...(cursor ? { cursor } : {}) });
    for (const entry of page.entries) out(JSON.stringify(entry));
    count += page.entries.length;
    cursor = page.next;
  } while (cursor);
  return count;
}

async function main(): Promise<number> {
  const [command, ...rest] = process.argv.slice(2);
  if (command !== "export") {
    console.error(USAGE);
    return 2;
  }
  const opts = parseExportArgs(rest);
  const cfg = readConfig({ GOOGLE_CLOUD_PROJECT: "demo-quarry", ...process.env });
  const db = commandFirestore(cfg);
  try {
    const log = new AuditLog(db, Timestamp, cfg.access.auditTtlDays);
    const lines: string[] = [];
    const flush = () => {
      if (lines.length) process.stdout.write(`${lines.splice(0).join("\n")}\n`);
    };
    const count = await exportAudit(log, opts, (line) => {
      lines.push(line);
      if (lines.length >= PAGE) flush();
    });
    flush();
    console.error(`[audit] exported ${count} entr${count === 1 ? "y" : "ies"}, newest first.`);
    return 0;
  } finally {
    await db.terminate();
  }
}

runCommand("audit", main);

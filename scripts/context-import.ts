/**
 * `npm run context -- import dbt <project> [--map <dbt schema>=<dataset>]... [--dataset <dataset>]
 * [--dry-run]` (and `import lookml <project> [--map <dataset>=<dataset>]...`): imports a dbt project's semantic layer (its `target/` artifacts, else its YAML, whose
 * models are in `--dataset`) into Quarry's context — table and column
 * notes, value lists, declared joins, metrics as glossary terms with SQL checked by the warehouse's
 * dry run — and prints what changed against the active import. Without `--dry-run` the import
 * becomes the active one (`<context dir>/imported/dbt-<project>.json`: commit it and deploy). A
 * refused import (bad file, unknown version, a metric naming something undefined) writes nothing.
 */
import { readConfig } from "../functions/src/config";
import { commandFirestore } from "./cli";
import { proposeSavedQueries } from "../functions/src/context/imports/propose";
import { diffImports } from "../functions/src/context/imports/diff";
import { ImportError } from "../functions/src/context/imports/errors";
import { importDbtProject, importLookmlProject } from "../functions/src/context/imports/project";
import { readActiveImport, writeActiveImport } from "../functions/src/context/imports/store";
import type { ImportedLayer } from "../functions/src/context/imports/types";
import { closeWarehouses, getWarehouse } from "../functions/src/tools";

const USAGE =
  "Usage: npm run context -- import dbt|lookml <project folder> [--map <dbt schema or LookML dataset>=<dataset>]... [--dataset <dataset>] [--dry-run | --propose]";

/** `--map a=b` pairs and the rest of the arguments. */
function parseArgs(argv: string[]): {
  source?: string;
  project?: string;
  map: Record<string, string>;
  dryRun: boolean;
  propose: boolean;
} {
  const map: Record<string, string> = {};
  const rest: string[] = [];
  let dryRun = false;
  let propose = false;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--dry-run") dryRun = true;
    else if (argv[i] === "--propose") propose = true;
    else if (argv[i] === "--dataset") {
      const dataset = argv[++i];
      if (!dataset) throw new ImportError("--dataset", "needs the dataset the project's models are built in");
      map["*"] = dataset;
    } else if (argv[i] === "--map") {
      const [from, to] = (argv[++i] ?? "").split("=");
      if (!from || !to) throw new ImportError("--map", `"${argv[i] ?? ""}" is not <dbt schema>=<dataset>`);
      map[from] = to;
    } else rest.push(argv[i]);
  }
  return { source: rest[0], project: rest[1], map, dryRun, propose };
}

function summary(layer: ImportedLayer): string[] {
  const compiled = layer.metrics.filter((m) => m.sql).length;
  return [
    `Imported from ${layer.source} project "${layer.project}" (as of ${layer.generatedAt}):`,
    `  ${layer.tables.length} tables, ${layer.tables.reduce((n, t) => n + t.columns.length, 0)} documented columns, ` +
      `${layer.joins.length} joins, ${layer.metrics.length} metrics (${compiled} with SQL that passed the dry run), ` +
      `${layer.queries.length} saved queries to review`,
    ...layer.notices.map((n) => `  note: ${n.item}: ${n.message}`),
  ];
}

/** `--propose`: the saved queries with SQL become proposals in the admin page's review. */
async function propose(cfg: ReturnType<typeof readConfig>, layer: ImportedLayer): Promise<void> {
  const db = commandFirestore(cfg);
  try {
    const r = await proposeSavedQueries(db, cfg.feedbackCollection, layer);
    console.log(`Saved queries proposed for review: ${r.proposed.join(", ") || "(none)"}`);
    if (r.already.length) console.log(`  proposed before (left as reviewed): ${r.already.join(", ")}`);
    for (const s of r.skipped) console.log(`  not proposed: ${s.name}: ${s.reason}`);
  } finally {
    await db.terminate();
  }
}

export async function importCommand(argv: string[]): Promise<number> {
  const args = parseArgs(argv);
  if ((args.source !== "dbt" && args.source !== "lookml") || !args.project) {
    console.error(USAGE);
    return 2;
  }
  const cfg = readConfig({ GOOGLE_CLOUD_PROJECT: "demo-quarry", ...process.env });
  const warehouse = await getWarehouse(cfg.warehouse);
  try {
    const layer =
      args.source === "dbt"
        ? await importDbtProject(args.project, warehouse, { map: args.map })
        : await importLookmlProject(args.project, warehouse, { map: args.map });
    const before = readActiveImport(cfg.contextDir, layer.source, layer.project);
    for (const line of summary(layer)) console.log(line);
    const changes = diffImports(before, layer);
    console.log(
      before
        ? `Changes against the active import (${before.generatedAt}): ${changes.length || "none"}`
        : "No active import: everything is new.",
    );
    if (before)
      for (const c of changes) console.log(`  ${c.kind}: ${c.item}${c.detail ? ` — ${c.detail}` : ""}`);
    if (args.dryRun) {
      console.log("--dry-run: nothing written.");
      return 0;
    }
    console.log(`Active import written: ${writeActiveImport(cfg.contextDir, layer)} (commit it and deploy)`);
    if (args.propose) await propose(cfg, layer);
    return 0;
  } catch (err) {
    if (!(err instanceof ImportError)) throw err;
    console.error(`Import refused, nothing written: ${err.message}`);
    return 1;
  } finally {
    await closeWarehouses();
  }
}

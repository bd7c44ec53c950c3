/**
 * Importing a dbt project end to end: its artifacts read (`<project>/target/manifest.json` and,
 * when present, `semantic_manifest.json`; without them, its YAML), matched to the warehouse,
 * metrics compiled and dry-run.
 * Any bad input (a truncated file, an unknown schema version, a metric naming a measure that does
 * not exist) throws ImportError naming the file and item before anything is written.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import type { Warehouse } from "../../tools/types";
import { dryRunMetrics, warehouseTables } from "./check";
import { readManifest, readSemanticManifest } from "./dbt-artifacts";
import { readDbtYaml } from "./dbt-yaml";
import { importDbt } from "./dbt";
import { ImportError } from "./errors";
import { importLookml } from "./lookml";
import type { ImportedLayer } from "./types";

/** The artifacts' folder (`<project>/target`, or the path itself), or undefined when there are none. */
function targetDir(project: string): string | undefined {
  if (!existsSync(project)) throw new ImportError(project, "no such folder; give the dbt project's folder");
  if (existsSync(path.join(project, "manifest.json"))) return project;
  const target = path.join(project, "target");
  return existsSync(path.join(target, "manifest.json")) ? target : undefined;
}

/** The compiled artifacts when there are, else the project's YAML. */
function readProject(project: string) {
  const dir = targetDir(project);
  if (!dir) return readDbtYaml(project);
  const manifestFile = path.join(dir, "manifest.json");
  const semanticFile = path.join(dir, "semantic_manifest.json");
  const texts = [readFileSync(manifestFile, "utf8")];
  const manifest = readManifest(texts[0], manifestFile);
  if (!existsSync(semanticFile)) return { manifest, texts, semantic: undefined };
  texts.push(readFileSync(semanticFile, "utf8"));
  return { manifest, texts, semantic: readSemanticManifest(texts[1], semanticFile) };
}

export interface DbtImportOptions {
  /** dbt schema (or `database.schema`) → warehouse dataset. */
  map?: Record<string, string>;
  /** Where the models are built, for a project read from its YAML (the artifacts say it themselves). */
  dataset?: string;
}

/** Reads, matches, compiles and checks a dbt project (see the file's header). */
export async function importDbtProject(
  project: string,
  warehouse: Warehouse,
  opts: DbtImportOptions = {},
): Promise<ImportedLayer> {
  const { manifest, semantic, texts } = readProject(project);
  const layer = importDbt({
    manifest,
    semantic,
    texts,
    warehouse: await warehouseTables(warehouse),
    dialect: warehouse.dialect,
    map: { ...opts.map, ...(opts.dataset ? { "*": opts.dataset } : {}) },
  });
  return dryRunMetrics(layer, warehouse);
}

/** Reads a LookML project (its model and view files), matched to the warehouse, measures dry-run. */
export async function importLookmlProject(
  project: string,
  warehouse: Warehouse,
  opts: DbtImportOptions = {},
): Promise<ImportedLayer> {
  if (!existsSync(project))
    throw new ImportError(project, "no such folder; give the LookML project's folder");
  const layer = await importLookml({
    project,
    warehouse: await warehouseTables(warehouse),
    dialect: warehouse.dialect,
    map: opts.map,
  });
  return dryRunMetrics(layer, warehouse);
}

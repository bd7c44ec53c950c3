/**
 * Quarry's context layer (below the agent, beside the tools): the team's authored context files,
 * validated against the warehouse, and what each question gets from them.
 */
import { existsSync, readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import type { Warehouse } from "../tools/types";
import { ContextFileError, loadContextFile, parseContextFile, type ContextFile } from "./authored";
import { KnowledgeBase } from "./knowledge";
import { warehouseTables, withinWarehouse } from "./imports/check";
import { ImportError } from "./imports/errors";
import { readActiveImports } from "./imports/store";
import { toContextFiles } from "./imports/to-context";
import type { ImportedLayer } from "./imports/types";

export { ContextFileError, parseContextFile, validateAgainstWarehouse } from "./authored";
export { KnowledgeBase, renderKnowledge, linkHints, KNOWLEDGE_HEADINGS } from "./knowledge";
export { buildCatalog, CatalogCache, type Catalog, type CatalogTable } from "./catalog";
export { FirestoreCatalogStore, catalogKey, warehouseCatalogKey } from "./catalog-store";
export { linkSchema, renderLinkedTables } from "./linking";
export { SemanticTables } from "./linking/semantic";

export interface LoadReport {
  loaded: string[];
  /** Files about a dataset this warehouse does not have. */
  skipped: string[];
  /** Files that failed validation: not used, each problem with its line. */
  failed: ContextFileError[];
  /** Imported semantic layers in use (`imported/*.json`), authored context winning over them. */
  imported: string[];
}

/** The authored files of `dir` that fit this warehouse, and the committed imports beside them. */
export interface TeamContextFiles {
  authored: ContextFile[];
  /** The committed imports (`imported/*.json`), read but not yet matched to the warehouse. */
  imports: { file: string; layer: ImportedLayer }[];
  report: LoadReport;
}

/**
 * Loads every `*.yaml` / `*.yml` context file in `dir` whose dataset this warehouse has. A file with
 * problems is left out and reported (the agent still answers, without it); `strict` throws instead.
 */
export async function loadKnowledge(
  dir: string,
  warehouse: Warehouse,
  opts: { strict?: boolean } = {},
): Promise<{ knowledge: KnowledgeBase; report: LoadReport }> {
  const files = await loadContextFiles(dir, warehouse, opts);
  const knowledge = await withImports(files, [], warehouse);
  return { knowledge, report: files.report };
}

/** The authored files and committed imports of `dir` (see loadKnowledge). */
export async function loadContextFiles(
  dir: string,
  warehouse: Warehouse,
  opts: { strict?: boolean } = {},
): Promise<TeamContextFiles> {
  const report: LoadReport = { loaded: [], skipped: [], failed: [], imported: [] };
  const files: ContextFile[] = [];
  if (!existsSync(dir)) return { authored: files, imports: [], report };
  const datasets = new Set(
    (await warehouse.listTables()).map((t) => t.id.split(".").slice(0, -1).join(".").toLowerCase()),
  );
  for (const name of readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort()) {
    const file = path.join(dir, name);
    try {
      const { context } = parseContextFile(readFileSync(file, "utf8"), file);
      if (!datasets.has(context.dataset.toLowerCase())) {
        report.skipped.push(file);
        continue;
      }
      files.push(await loadContextFile(file, warehouse));
      report.loaded.push(file);
    } catch (err) {
      if (!(err instanceof ContextFileError) || opts.strict) throw err;
      report.failed.push(err);
    }
  }
  let imports: { file: string; layer: ImportedLayer }[] = [];
  try {
    imports = readActiveImports(dir);
  } catch (err) {
    if (!(err instanceof ImportError) || opts.strict) throw err;
    report.failed.push(new ContextFileError([{ file: err.file, line: 1, message: err.message }]));
  }
  report.imported.push(...imports.map((i) => i.file));
  return { authored: files, imports, report };
}

/**
 * The knowledge of the authored files with the imports as context files — the committed ones and
 * `stored` (Firestore's, which win over a committed import of the same project) — as the
 * warehouse is now (drift left out), without what the authored files already say.
 */
export async function withImports(
  files: Pick<TeamContextFiles, "authored" | "imports">,
  stored: readonly ImportedLayer[],
  warehouse: Warehouse,
): Promise<KnowledgeBase> {
  const byProject = new Map<string, ImportedLayer>();
  for (const layer of [...files.imports.map((i) => i.layer), ...stored])
    byProject.set(`${layer.source}-${layer.project}`, layer);
  const layers = [...byProject.values()];
  if (!layers.length) return new KnowledgeBase(files.authored);
  // Only the tables the imports name are described (one metadata call each).
  const named = new Set(
    layers.flatMap((layer) => [
      ...layer.tables.map((t) => t.table),
      ...layer.joins.flatMap((j) => [j.from.table, j.to.table]),
      ...layer.metrics.flatMap((m) => m.tables),
    ]),
  );
  const schemas = await warehouseTables(warehouse, (id) => named.has(id));
  const out: ContextFile[] = [];
  for (const layer of layers) {
    out.push(...toContextFiles(withinWarehouse(layer, schemas), [...files.authored, ...out]));
  }
  return new KnowledgeBase([...files.authored, ...out]);
}

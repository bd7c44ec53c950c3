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

/**
 * Loads every `*.yaml` / `*.yml` context file in `dir` whose dataset this warehouse has. A file with
 * problems is left out and reported (the agent still answers, without it); `strict` throws instead.
 */
export async function loadKnowledge(
  dir: string,
  warehouse: Warehouse,
  opts: { strict?: boolean } = {},
): Promise<{ knowledge: KnowledgeBase; report: LoadReport }> {
  const report: LoadReport = { loaded: [], skipped: [], failed: [], imported: [] };
  const files: ContextFile[] = [];
  if (!existsSync(dir)) return { knowledge: new KnowledgeBase([]), report };
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
  files.push(...(await importedFiles(dir, warehouse, files, report, opts.strict)));
  return { knowledge: new KnowledgeBase(files), report };
}

/**
 * The active imports (imports/store.ts) as context files, as the warehouse is now (drift left out)
 * and without what the authored files already say. An unreadable import is reported and skipped.
 */
async function importedFiles(
  dir: string,
  warehouse: Warehouse,
  authored: ContextFile[],
  report: LoadReport,
  strict = false,
): Promise<ContextFile[]> {
  let imports;
  try {
    imports = readActiveImports(dir);
  } catch (err) {
    if (!(err instanceof ImportError) || strict) throw err;
    report.failed.push(new ContextFileError([{ file: err.file, line: 1, message: err.message }]));
    return [];
  }
  if (!imports.length) return [];
  // Only the tables the imports name are described (one metadata call each, at start-up).
  const named = new Set(
    imports.flatMap(({ layer }) => [
      ...layer.tables.map((t) => t.table),
      ...layer.joins.flatMap((j) => [j.from.table, j.to.table]),
      ...layer.metrics.flatMap((m) => m.tables),
    ]),
  );
  const schemas = await warehouseTables(warehouse, (id) => named.has(id));
  const out: ContextFile[] = [];
  for (const { file, layer } of imports) {
    out.push(...toContextFiles(withinWarehouse(layer, schemas), [...authored, ...out]));
    report.imported.push(file);
  }
  return out;
}

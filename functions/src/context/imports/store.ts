/**
 * The active imports: one JSON file per imported project in `<context dir>/imported/`
 * (`dbt-jaffle_shop.json`), versioned and deployed with the function like the authored files.
 * A new import replaces the file whole (written beside it, then renamed), so a failed or refused
 * import leaves the previous one active and intact.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { ImportError } from "./errors";
import type { ImportedLayer } from "./types";

const IMPORTED_DIR = "imported";

const fileName = (source: string, project: string) => `${source}-${project.replace(/[^\w.-]+/g, "_")}.json`;

/** The active import of a project, or undefined. */
export function readActiveImport(
  contextDir: string,
  source: string,
  project: string,
): ImportedLayer | undefined {
  const file = path.join(contextDir, IMPORTED_DIR, fileName(source, project));
  return existsSync(file) ? readImportFile(file) : undefined;
}

function readImportFile(file: string): ImportedLayer {
  try {
    const layer = JSON.parse(readFileSync(file, "utf8")) as ImportedLayer;
    if (!Array.isArray(layer.tables) || !Array.isArray(layer.metrics)) throw new Error("not an import file");
    return layer;
  } catch (err) {
    throw new ImportError(
      file,
      `cannot be read as an import (${(err as Error).message}); import the project again`,
    );
  }
}

/** Every active import in the folder (sorted by file name). */
export function readActiveImports(contextDir: string): { file: string; layer: ImportedLayer }[] {
  const dir = path.join(contextDir, IMPORTED_DIR);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => ({ file: path.join(dir, f), layer: readImportFile(path.join(dir, f)) }));
}

/** Makes `layer` the project's active import; returns the file written. */
export function writeActiveImport(contextDir: string, layer: ImportedLayer): string {
  const dir = path.join(contextDir, IMPORTED_DIR);
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, fileName(layer.source, layer.project));
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(layer, null, 2)}\n`);
  renameSync(tmp, file);
  return file;
}

/**
 * A project pushed through the API as its files (`{ "target/manifest.json": "…", … }` for dbt's
 * artifacts, `models/**.yml` for its YAML, `*.lkml` for LookML), read by the same importers as a
 * folder on disk (project.ts): the files are written to a private temporary folder, imported, and
 * the folder removed. A path that would leave the folder is refused.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Warehouse } from "../../tools/types";
import { ImportError } from "./errors";
import { importDbtProject, importLookmlProject, type DbtImportOptions } from "./project";
import type { ImportedLayer } from "./types";

export interface PushedProject {
  source: ImportedLayer["source"];
  /** The project's name (LookML has none of its own; dbt's artifacts say theirs). */
  project?: string;
  /** Path in the project → the file's text. */
  files: Record<string, string>;
  map?: Record<string, string>;
  dataset?: string;
}

/** The path as a relative one inside the project, or the error that says why it is not. */
function safePath(p: string): string {
  const norm = path.posix.normalize(p.replaceAll("\\", "/"));
  if (!p || path.posix.isAbsolute(norm) || norm.startsWith("../") || norm === ".." || norm.includes("\0")) {
    throw new ImportError(
      p || "(empty path)",
      "is not a path inside the project: send paths like target/manifest.json",
    );
  }
  return norm;
}

/** Imports a pushed project (see the file's header); throws ImportError naming the file on bad input. */
export async function importPushedProject(
  pushed: PushedProject,
  warehouse: Warehouse,
): Promise<ImportedLayer> {
  const names = Object.keys(pushed.files).map(safePath);
  if (!names.length) throw new ImportError("files", "is empty: send the project's files");
  const root = await mkdtemp(path.join(os.tmpdir(), "quarry-import-"));
  // LookML's project is named after its folder: the folder takes the name given.
  const dir = path.join(root, (pushed.project ?? pushed.source).replace(/[^\w.-]+/g, "_"));
  try {
    for (const [name, text] of Object.entries(pushed.files)) {
      const file = path.join(dir, safePath(name));
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, text);
    }
    const opts: DbtImportOptions = {
      ...(pushed.map ? { map: pushed.map } : {}),
      ...(pushed.dataset ? { dataset: pushed.dataset } : {}),
    };
    try {
      return pushed.source === "dbt"
        ? await importDbtProject(dir, warehouse, opts)
        : await importLookmlProject(dir, warehouse, opts);
    } catch (err) {
      // Name the file as it was sent, not as the temporary folder holds it.
      if (err instanceof ImportError) throw new ImportError(relative(err.file, dir), err.detail);
      throw err;
    }
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

function relative(file: string, dir: string): string {
  return file.startsWith(dir) ? path.relative(dir, file) || "." : file;
}

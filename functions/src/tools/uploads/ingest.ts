// TEMPORARY stub until the ingest helper's branch lands (replaced on merge).
import { QuarryError } from "../../errors";
import type { IngestResult, UploadLimits } from "./types";

export function tableNameFor(fileName: string): string {
  return fileName
    .toLowerCase()
    .replace(/\..*$/, "")
    .replace(/[^a-z0-9_]/g, "_");
}

export async function ingestUpload(_input: {
  srcPath: string;
  fileName: string;
  contentType?: string;
  sheet?: string;
  outDir: string;
  limits: UploadLimits;
}): Promise<IngestResult> {
  throw new QuarryError("bad_request:upload", "not built");
}

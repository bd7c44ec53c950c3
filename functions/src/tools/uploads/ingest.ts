/**
 * Files as tables (#32): one uploaded file → one Parquet file with typed columns, the same step for
 * both engines (DuckDB attaches the Parquet file, BigQuery loads it with an explicit schema).
 *
 * The reading runs in a one-shot child process under an address-space limit (like the DuckDB
 * workers, duckdb/spawn.ts): CSV sniffing, Parquet decoding and the xlsx reader all run on bytes a
 * person chose, and a file built to exhaust memory must end that child, not the function instance.
 * The child works in its own folder under `outDir`; only a finished Parquet file is moved out of
 * it, and the folder is removed whatever happened — nothing half-written is left behind.
 */
import { randomUUID } from "node:crypto";
import { mkdir, mkdtemp, rename, rm, stat } from "node:fs/promises";
import path from "node:path";
import { QuarryError } from "../../errors";
import { fromWire } from "../wire-error";
import { childEntry, probeBaseMiB, spawnUnderLimit } from "../duckdb/spawn";
import type { IngestReply } from "./ingest-child";
import { needsMoreMemory, OUT_FILE, type ReadInput } from "./read";
import { megabytes, tooBig } from "./source";
import { identifierOf } from "./table";
import type { IngestResult, UploadLimits } from "./types";

/** DuckDB's buffer pool in the child, MiB (it spills to the work folder past this). */
const DUCKDB_MEMORY_MIB = 512;
/** Room over the probed start-up address space for the JavaScript side (xlsx reader, IPC). */
const HEADROOM_MIB = 768;
/** An ingest that takes longer than this is ended. */
const INGEST_TIMEOUT_MS = 5 * 60_000;

const TABLE_EXTENSIONS = /\.(gz|csv|tsv|tab|txt|xlsx|xls|parquet|pq)$/i;

/**
 * The table name a file gets: its name without extensions as a lower-case identifier
 * ("Monthly Targets 2025.csv" → "monthly_targets_2025"; a leading digit gets `t_`).
 */
export function tableNameFor(fileName: string): string {
  let base = fileName.split(/[\\/]/).pop() ?? "";
  while (TABLE_EXTENSIONS.test(base)) base = base.replace(TABLE_EXTENSIONS, "");
  let name = identifierOf(base);
  if (/^[0-9]/.test(name)) name = `t_${name}`.slice(0, 63).replace(/_+$/, "");
  if (!name) {
    throw new QuarryError(
      "bad_request:upload",
      `"${fileName}" leaves no usable table name; rename the file with some letters or digits (e.g. targets.csv).`,
    );
  }
  return name;
}

/** One upload to ingest. */
export interface IngestInput {
  /** The bytes as received (gzip is inflated, up to `limits.maxBytes`). */
  srcPath: string;
  /** As the person named it, e.g. "targets.csv", "q.xlsx", "targets.csv.gz". */
  fileName: string;
  /** The request's Content-Type. */
  contentType?: string;
  /** xlsx: the sheet to read (default the first). */
  sheet?: string;
  /** Where the Parquet file is written (under a random name). */
  outDir: string;
  limits: UploadLimits;
  /** Tests only: the child's address-space limit in MiB, instead of the probed one. */
  addressSpaceMiB?: number;
}

/**
 * Reads an uploaded CSV/TSV (optionally gzip), xlsx or Parquet file into a Parquet file in
 * `outDir`. Refusals are QuarryErrors `bad_request:upload` (naming the line or cell) and
 * `payload_too_large:upload` (naming the QUARRY_UPLOAD_* setting).
 */
export async function ingestUpload(input: IngestInput): Promise<IngestResult> {
  const { size } = await stat(input.srcPath);
  if (size > input.limits.maxBytes) {
    throw tooBig(`The file is ${megabytes(size)} MB`, input.limits.maxBytes);
  }
  await mkdir(input.outDir, { recursive: true, mode: 0o700 });
  const workDir = await mkdtemp(path.join(input.outDir, ".ingest-"));
  try {
    const result = await runChild(
      {
        srcPath: path.resolve(input.srcPath),
        fileName: input.fileName,
        contentType: input.contentType,
        sheet: input.sheet,
        workDir: path.resolve(workDir),
        limits: input.limits,
        memoryMiB: DUCKDB_MEMORY_MIB,
      },
      input.addressSpaceMiB ?? (await probeBaseMiB(1)) + HEADROOM_MIB + DUCKDB_MEMORY_MIB,
    );
    const dest = path.join(input.outDir, `${randomUUID()}.parquet`);
    await rename(path.join(workDir, OUT_FILE), dest);
    return { ...result, parquetPath: dest };
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

/** Starts the child, hands it the input, and waits for it to answer and exit. */
function runChild(input: ReadInput, limitMiB: number): Promise<IngestResult> {
  return new Promise<IngestResult>((resolve, reject) => {
    const child = spawnUnderLimit(childEntry(__filename, "ingest-child"), limitMiB);
    let reply: IngestReply | undefined;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, INGEST_TIMEOUT_MS);
    child.on("message", (m: IngestReply) => (reply ??= m));
    child.once("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    // Settled on exit, not on the answer: the child's files are closed before the folder is removed.
    child.once("exit", () => {
      clearTimeout(timer);
      if (reply?.ok) return resolve(reply.result);
      if (reply) return reject(fromWire(reply.error));
      if (timedOut) {
        return reject(
          new QuarryError(
            "payload_too_large:upload",
            `Reading the file took longer than ${INGEST_TIMEOUT_MS / 60_000} minutes; send a smaller file.`,
          ),
        );
      }
      // No answer: the child ended under its memory limit (or was killed).
      reject(needsMoreMemory());
    });
    // A child that died before reading its input is answered by the exit handler above.
    child.send(input, () => undefined);
  });
}

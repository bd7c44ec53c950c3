/**
 * One ingest, start to end, inside the ingest child (ingest-child.ts): inflate, detect, read into
 * a fresh in-memory DuckDB that can reach only the source's folder and its own work folder, and
 * write the Parquet file there. The parent (ingest.ts) moves the file into place or removes it.
 */
import { stat } from "node:fs/promises";
import path from "node:path";
import type { DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import { QuarryError } from "../../errors";
import { csvLoad, type CsvReading } from "./csv";
import { detectFormat, gunzipCapped, headOf, isGzip, megabytes, tooBig, withoutGz } from "./source";
import { firstLine } from "./sql";
import { lit } from "../sql-text";
import { finishTable } from "./table";
import type { IngestResult, UploadFormat, UploadLimits } from "./types";
import { xlsxToCsv } from "./xlsx";

type Duck = typeof import("@duckdb/node-api");

/** What the child is given (plain data over IPC). */
export interface ReadInput {
  srcPath: string;
  fileName: string;
  contentType?: string;
  sheet?: string;
  /** The child's own folder: temp files and the Parquet file (`out.parquet`) go here. */
  workDir: string;
  limits: UploadLimits;
  /** DuckDB's buffer pool in the child, MiB. */
  memoryMiB: number;
}

/** How the source was read, before the table is finished. */
type Reading = Omit<CsvReading, "format" | "dialect"> & {
  format: UploadFormat;
  dialect?: string;
  sheets?: string[];
  sheet?: string;
};

/** The file the child writes; the parent renames it. */
export const OUT_FILE = "out.parquet";

/** Reads the upload and writes `workDir/out.parquet`. */
export async function readUpload(input: ReadInput): Promise<IngestResult> {
  const { limits, workDir } = input;
  let file = input.srcPath;
  let name = input.fileName;
  const { size } = await stat(file);
  if (size > limits.maxBytes) {
    throw tooBig(`The file is ${megabytes(size)} MB`, limits.maxBytes);
  }
  if (isGzip(await headOf(file, 2))) {
    file = path.join(workDir, "inflated");
    await gunzipCapped(input.srcPath, file, limits.maxBytes);
    name = withoutGz(name);
  }
  if ((await stat(file)).size === 0) throw new QuarryError("bad_request:upload", "The file is empty.");
  const kind = await detectFormat(file, name, input.contentType);
  const duck: Duck = await import("@duckdb/node-api");
  const instance = await openLocked(duck, input);
  const conn = await instance.connect();
  try {
    let reading: Reading;
    if (kind === "parquet") reading = await parquetLoad(conn, file, limits);
    else if (kind === "xlsx") {
      const csv = path.join(workDir, "sheet.csv");
      const x = await xlsxToCsv(file, csv, { sheet: input.sheet, maxBytes: limits.maxBytes });
      const r = await csvLoad(conn, csv, { ...limits, fixed: true });
      reading = {
        ...r,
        format: "xlsx",
        dialect: undefined,
        sheets: x.sheets,
        sheet: x.sheet,
        warnings: [...x.warnings, ...r.warnings],
      };
    } else reading = await csvLoad(conn, file, limits);
    const parquetPath = path.join(workDir, OUT_FILE);
    const table = await finishTable(duck, conn, parquetPath, reading.linesBefore, reading.header);
    return {
      format: reading.format,
      parquetPath,
      ...table,
      warnings: [...reading.warnings, ...table.warnings],
      ...(reading.sheets ? { sheets: reading.sheets, sheet: reading.sheet } : {}),
      ...(reading.dialect ? { dialect: reading.dialect } : {}),
    };
  } catch (err) {
    if (/Out of Memory/i.test(String(err))) throw needsMoreMemory();
    throw err;
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

/** The refusal for a file that needs more memory than an upload may take. */
export function needsMoreMemory(): QuarryError {
  return new QuarryError(
    "payload_too_large:upload",
    "The file needs more memory to read than an upload may take. Send a smaller file, or fewer rows or columns.",
  );
}

/**
 * A fresh in-memory instance that can read the source's folder and write its work folder only;
 * then file access beyond those, extension loading and every setting are locked.
 */
async function openLocked(duck: Duck, input: ReadInput): Promise<DuckDBInstance> {
  const instance = await duck.DuckDBInstance.create(":memory:", {
    threads: "1",
    memory_limit: `${input.memoryMiB}MB`,
    temp_directory: path.join(input.workDir, "spill"),
  });
  const conn = await instance.connect();
  try {
    const dirs = [path.dirname(input.srcPath), input.workDir].map((d) => lit(`${d}${path.sep}`));
    await conn.run(`SET allowed_directories = [${dirs.join(", ")}]`);
    await conn.run("SET enable_external_access = false");
    await conn.run("SET autoinstall_known_extensions = false");
    await conn.run("SET autoload_known_extensions = false");
    await conn.run("SET lock_configuration = true");
  } catch (err) {
    instance.closeSync();
    throw err;
  } finally {
    conn.closeSync();
  }
  return instance;
}

/** Parquet into `t`, the row and column counts checked from its metadata before reading the data. */
async function parquetLoad(conn: DuckDBConnection, file: string, limits: UploadLimits): Promise<Reading> {
  try {
    const meta = await conn.runAndReadAll(`SELECT sum(num_rows) FROM parquet_file_metadata(${lit(file)})`);
    const rows = Number(meta.getRows()[0][0] ?? 0);
    if (rows > limits.maxRows) {
      throw new QuarryError(
        "payload_too_large:upload",
        `The file has ${rows} rows; an uploaded table may have at most ${limits.maxRows} (QUARRY_UPLOAD_MAX_ROWS).`,
      );
    }
    const described = await conn.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet(${lit(file)})`);
    const columns = described.getRows().length;
    if (columns > limits.maxColumns) {
      throw new QuarryError(
        "payload_too_large:upload",
        `The file has ${columns} columns; an uploaded table may have at most ${limits.maxColumns} (QUARRY_UPLOAD_MAX_COLUMNS).`,
      );
    }
    await conn.run(`CREATE TABLE t AS SELECT * FROM read_parquet(${lit(file)})`);
  } catch (err) {
    if (err instanceof QuarryError || /Out of Memory/i.test(String(err))) throw err;
    throw new QuarryError("bad_request:upload", `The Parquet file could not be read (${firstLine(err)}).`);
  }
  // Cells are numbered as in a sheet whose first row holds the names.
  return { format: "parquet", warnings: [], linesBefore: 1 };
}

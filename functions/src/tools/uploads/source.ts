/**
 * What an uploaded file is, before any parser sees it: gzip inflated (with a cap, so a small
 * compressed file cannot fill the disk), then the format from its first bytes — the name and the
 * Content-Type only decide between formats the bytes leave open.
 */
import { createReadStream, createWriteStream } from "node:fs";
import { open } from "node:fs/promises";
import path from "node:path";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip } from "node:zlib";
import { QuarryError } from "../../errors";
import type { UploadFormat } from "./types";

/** Formats in words, for refusals. */
const FORMATS_TAKEN = "CSV or TSV (optionally gzip-compressed), Excel (.xlsx) or Parquet";

const TEXT_EXTENSIONS = new Set([".csv", ".tsv", ".tab", ".txt"]);
const TEXT_TYPES = new Set(["text/csv", "text/tab-separated-values", "text/plain", "application/csv"]);
/** How much of a text file is looked at for NUL bytes (which no CSV holds). */
const TEXT_PROBE_BYTES = 64 * 1024;

/** The first `n` bytes of a file. */
export async function headOf(file: string, n: number): Promise<Buffer> {
  const fh = await open(file, "r");
  try {
    const buf = Buffer.alloc(n);
    const { bytesRead } = await fh.read(buf, 0, n, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

export const isGzip = (head: Buffer) => head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b;

/** The file name without a trailing `.gz` (what the compressed file holds). */
export const withoutGz = (name: string) => name.replace(/\.gz$/i, "");

/** Bytes as MB with one decimal, as the setting counts them (MiB). */
export const megabytes = (bytes: number) => Math.round((bytes / (1024 * 1024)) * 10) / 10;

/** The size refusal (`what` says how big the file is), naming the setting and the limit. */
export function tooBig(what: string, maxBytes: number): QuarryError {
  return new QuarryError(
    "payload_too_large:upload",
    `${what}; a file may be at most ${megabytes(maxBytes)} MB uncompressed (QUARRY_UPLOAD_MAX_MB). Send a smaller file or fewer rows.`,
  );
}

/** Inflates a gzip file to `dest`, streaming, refusing as soon as it passes `maxBytes`. */
export async function gunzipCapped(src: string, dest: string, maxBytes: number): Promise<void> {
  let seen = 0;
  const cap = new Transform({
    transform(chunk: Buffer, _enc, done) {
      seen += chunk.length;
      if (seen > maxBytes)
        return done(tooBig(`The file inflates to more than ${megabytes(maxBytes)} MB`, maxBytes));
      done(null, chunk);
    },
  });
  try {
    await pipeline(createReadStream(src), createGunzip(), cap, createWriteStream(dest));
  } catch (err) {
    if (err instanceof QuarryError) throw err;
    throw new QuarryError(
      "bad_request:upload",
      `The file looks gzip-compressed but could not be inflated (${(err as Error).message}).`,
    );
  }
}

/**
 * The format of `file` (already inflated): Parquet and xlsx by their magic bytes, otherwise text
 * when the name or Content-Type says so (or says nothing) and the first bytes hold no NUL.
 */
export async function detectFormat(
  file: string,
  fileName: string,
  contentType: string | undefined,
): Promise<Extract<UploadFormat, "parquet" | "xlsx"> | "text"> {
  const head = await headOf(file, TEXT_PROBE_BYTES);
  if (head.subarray(0, 4).toString("latin1") === "PAR1") return "parquet";
  if (head.subarray(0, 4).equals(Buffer.from([0x50, 0x4b, 0x03, 0x04]))) return "xlsx";
  const ext = path.extname(fileName).toLowerCase();
  const type = (contentType ?? "").split(";")[0].trim().toLowerCase();
  if (ext === ".xls") {
    throw new QuarryError(
      "bad_request:upload",
      `${fileName} is an old Excel (.xls) file; save it as .xlsx or CSV and send that.`,
    );
  }
  if (ext === ".xlsx" || ext === ".parquet" || ext === ".pq") {
    throw new QuarryError(
      "bad_request:upload",
      `${fileName} is named like ${ext === ".xlsx" ? "an Excel" : "a Parquet"} file but its content is not one.`,
    );
  }
  const named = ext === "" || TEXT_EXTENSIONS.has(ext) || TEXT_TYPES.has(type);
  if (!named || head.includes(0)) {
    throw new QuarryError(
      "bad_request:upload",
      `${fileName} is not a file Quarry can read as a table; send ${FORMATS_TAKEN}.`,
    );
  }
  return "text";
}

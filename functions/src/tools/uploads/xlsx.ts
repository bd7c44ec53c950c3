/**
 * PLACEHOLDER: the Excel (.xlsx) reader is written on another branch (yauzl + saxes, zip-bomb
 * guards); the lead replaces this file with it on merge. Only its signature is fixed here.
 */
import { QuarryError } from "../../errors";

/** What reading a workbook produced: its sheets, the one read, and problems in words. */
export interface XlsxResult {
  sheets: string[];
  sheet: string;
  warnings: string[];
}

/**
 * Writes one sheet of the workbook `src` as a CSV file `dest` (header row + rows, RFC 4180, comma).
 * @param opts.sheet the sheet to read (default the first); opts.maxBytes bounds what is inflated.
 */
export async function xlsxToCsv(
  _src: string,
  _dest: string,
  _opts: { sheet?: string; maxBytes: number },
): Promise<XlsxResult> {
  throw new QuarryError("bad_request:upload", "Excel files are not read yet");
}

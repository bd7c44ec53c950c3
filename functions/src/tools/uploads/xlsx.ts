/**
 * Excel (.xlsx) uploads: one sheet of a workbook written out as an RFC 4180 CSV, so it goes
 * through the same DuckDB sniffing and typing as an uploaded CSV. Our own reader (yauzl + saxes)
 * rather than an npm spreadsheet library, because those inflate every part without limits
 * (see xlsx-zip.ts for the guards). The sheet is read twice: once to find the used range (so
 * leading blank rows/columns are dropped and every row is padded to the widest one), once to write.
 */
import { open, type FileHandle } from "node:fs/promises";
import { QuarryError } from "../../errors";
import { readSharedStrings, readStyles, readWorkbook, type SheetRef } from "./xlsx-parts";
import { readSheet, type RowCells, type SheetContext, type SheetFindings } from "./xlsx-sheet";
import { WorkbookZip, inflateBudget, notWorkbook, sizeText } from "./xlsx-zip";

const WORKBOOK = "xl/workbook.xml";
/** Written to disk once this much CSV text is pending. */
const FLUSH_AT = 64 * 1024;
/** How many cells a warning names before "and N more". */
const NAMED_CELLS = 5;

/** The rectangle of the sheet that holds values (rows 1-based, columns 0-based). */
interface UsedRange {
  firstRow: number;
  lastRow: number;
  minCol: number;
  maxCol: number;
}

/** A CSV field: quoted when it holds a comma, quote or line break; quotes doubled (RFC 4180). */
function field(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** Buffered output to `dest`, refusing more than `limit` bytes. */
class CsvOut {
  private pending: string[] = [];
  private pendingLength = 0;
  private written = 0;
  private constructor(
    private readonly handle: FileHandle,
    private readonly limit: number,
  ) {}

  static async create(dest: string, limit: number): Promise<CsvOut> {
    return new CsvOut(await open(dest, "w"), limit);
  }

  line(cells: string[]): void {
    const text = cells.map(field).join(",") + "\r\n";
    this.pending.push(text);
    this.pendingLength += text.length;
  }

  async flush(force = false): Promise<void> {
    if (!force && this.pendingLength < FLUSH_AT) return;
    const bytes = Buffer.from(this.pending.join(""), "utf8");
    this.pending = [];
    this.pendingLength = 0;
    this.written += bytes.length;
    if (this.written > this.limit) {
      throw new QuarryError(
        "payload_too_large:upload",
        `The workbook inflates to more than ${sizeText(this.limit)} as a table; save the sheet you need as CSV and upload that.`,
      );
    }
    await this.handle.write(bytes);
  }

  close(): Promise<void> {
    return this.handle.close();
  }
}

/** "B7", "B7 and C7", "B7, C7, D7, E7, F7 and 3 more cells". */
function cellList(cells: string[]): string {
  const named = cells.slice(0, NAMED_CELLS);
  const rest = cells.length - named.length;
  if (rest > 0) return `${named.join(", ")} and ${rest} more cell${rest === 1 ? "" : "s"}`;
  if (named.length === 1) return named[0]!;
  return `${named.slice(0, -1).join(", ")} and ${named.at(-1)}`;
}

function warningsOf(found: SheetFindings, sheet: string): string[] {
  const warnings: string[] = [];
  const { formulas, errors } = found;
  if (formulas.length === 1) {
    warnings.push(`${formulas[0]} is a formula; its last computed value was loaded.`);
  } else if (formulas.length > 1) {
    warnings.push(`${cellList(formulas)} are formulas; their last computed values were loaded.`);
  }
  if (errors.length) {
    const one = errors.length === 1;
    warnings.push(
      `${cellList(errors)} of sheet "${sheet}" ${one ? "holds an error" : "hold errors"} (like #DIV/0!); ` +
        `${one ? "it was" : "they were"} loaded as empty.`,
    );
  }
  return warnings;
}

/** Refuses formats that look like a spreadsheet but are not .xlsx, naming them. */
function requireXlsx(zip: WorkbookZip): void {
  if (zip.has(WORKBOOK)) return;
  const names = zip.names();
  const saveAs = "save it as .xlsx or CSV and upload that.";
  if (names.includes("mimetype") || names.includes("content.xml")) {
    throw new QuarryError(
      "bad_request:upload",
      `The file is an OpenDocument spreadsheet (.ods), not an .xlsx; ${saveAs}`,
    );
  }
  if (names.includes("xl/workbook.bin")) {
    throw new QuarryError(
      "bad_request:upload",
      `The file is a binary Excel workbook (.xlsb), not an .xlsx; ${saveAs}`,
    );
  }
  throw notWorkbook(`it has no ${WORKBOOK}; ${saveAs}`);
}

function pickSheet(sheets: SheetRef[], wanted: string | undefined): SheetRef {
  if (wanted === undefined) return sheets[0]!;
  const found = sheets.find((s) => s.name.toLowerCase() === wanted.toLowerCase());
  if (found) return found;
  throw new QuarryError(
    "bad_request:upload",
    `The workbook has no sheet "${wanted}"; its sheets are: ${sheets.map((s) => s.name).join(", ")}.`,
  );
}

/** Pass 1: where the values are, and what to warn about (a never-computed formula throws here). */
async function usedRange(zip: WorkbookZip, sheet: SheetRef, ctx: SheetContext) {
  const range: UsedRange = { firstRow: 0, lastRow: 0, minCol: Infinity, maxCol: -1 };
  const found = await readSheet(zip, sheet.path, ctx, (row, cells) => {
    if (!range.firstRow) range.firstRow = row;
    range.lastRow = row;
    range.minCol = Math.min(range.minCol, cells[0]!.col);
    range.maxCol = Math.max(range.maxCol, cells.at(-1)!.col);
  });
  return { range, found };
}

/** Pass 2: every row from the first to the last with values, gaps as empty rows, all one width. */
async function writeCsv(zip: WorkbookZip, sheet: SheetRef, ctx: SheetContext, range: UsedRange, out: CsvOut) {
  const width = range.maxCol - range.minCol + 1;
  const empty = () => new Array<string>(width).fill("");
  let next = range.firstRow;
  const onRow = (row: number, cells: RowCells) => {
    for (; next < row; next++) out.line(empty());
    const line = empty();
    for (const { col, text } of cells) line[col - range.minCol] = text;
    out.line(line);
    next = row + 1;
  };
  await readSheet(zip, sheet.path, ctx, onRow, () => out.flush());
  await out.flush(true);
}

/**
 * Writes one sheet of the workbook at `src` to `dest` as CSV (header = its first row with values).
 * `opts.sheet` picks a sheet by name (case-insensitive); the default is the first in workbook order.
 * Refuses non-.xlsx files, damaged or unsafe ones (bad_request:upload) and ones that inflate past
 * 10 × `opts.maxBytes` (payload_too_large:upload). Returns the workbook's sheets, the one read, and
 * warnings naming cells (formulas loaded from their cached values, error cells loaded as empty).
 */
export async function xlsxToCsv(
  src: string,
  dest: string,
  opts: { sheet?: string; maxBytes: number },
): Promise<{ sheets: string[]; sheet: string; warnings: string[] }> {
  const zip = await WorkbookZip.open(src, opts.maxBytes);
  try {
    requireXlsx(zip);
    const book = await readWorkbook(zip, WORKBOOK);
    const sheet = pickSheet(book.sheets, opts.sheet);
    const ctx: SheetContext = {
      sheetName: sheet.name,
      strings: await readSharedStrings(zip, book.sharedStringsPath),
      styles: await readStyles(zip, book.stylesPath),
      date1904: book.date1904,
    };
    const { range, found } = await usedRange(zip, sheet, ctx);
    const limit = inflateBudget(opts.maxBytes);
    const out = await CsvOut.create(dest, limit);
    try {
      if (range.firstRow) {
        // Padding alone (one comma per empty cell) can be a bomb: a value at XFD1048576 is 16 GB of commas.
        if ((range.lastRow - range.firstRow + 1) * (range.maxCol - range.minCol + 1) > limit) {
          throw new QuarryError(
            "payload_too_large:upload",
            `The workbook inflates to more than ${sizeText(limit)} as a table (sheet "${sheet.name}" spans ` +
              `${range.lastRow - range.firstRow + 1} rows × ${range.maxCol - range.minCol + 1} columns); ` +
              "save the cells you need as CSV and upload that.",
          );
        }
        await writeCsv(zip, sheet, ctx, range, out);
      }
    } finally {
      await out.close();
    }
    return {
      sheets: book.sheets.map((s) => s.name),
      sheet: sheet.name,
      warnings: warningsOf(found, sheet.name),
    };
  } finally {
    zip.close();
  }
}

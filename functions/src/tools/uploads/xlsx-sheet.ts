/**
 * One worksheet's cells as text: walks `<sheetData>` with saxes and hands each row (1-based row
 * number, cells by 0-based column) to a callback, with every value already in the text a CSV
 * reader types well: shared/inline strings, `true`/`false`, ISO dates from date-styled serials,
 * numbers as Excel stored them. Formula cells keep their cached value; errors become empty.
 */
import type { SaxesParser, SaxesTagNS } from "saxes";
import { QuarryError } from "../../errors";
import { attr, unescapeText, type NumberKind } from "./xlsx-parts";
import { notWorkbook, type WorkbookZip } from "./xlsx-zip";

/** Excel's grid: XFD is column 16,384 and the last row is 1,048,576. */
const MAX_COLUMNS = 16_384;
const MAX_ROWS = 1_048_576;

export interface SheetContext {
  sheetName: string;
  strings: string[];
  styles: NumberKind[];
  date1904: boolean;
}

/** A row's cells, ordered by column; only cells that hold something are listed. */
export type RowCells = { col: number; text: string }[];

/** What reading a sheet found besides its values (for warnings). */
export interface SheetFindings {
  formulas: string[];
  errors: string[];
}

/** "B7" → { col: 1, row: 7 } (0-based column, 1-based row). */
function parseRef(ref: string): { col: number; row: number } | null {
  const m = /^([A-Z]{1,3})(\d+)$/.exec(ref.toUpperCase());
  if (!m) return null;
  let col = 0;
  for (const ch of m[1]!) col = col * 26 + (ch.charCodeAt(0) - 64);
  return { col: col - 1, row: Number(m[2]) };
}

/** 0-based column → letters (0 → "A", 27 → "AB"). */
function columnName(col: number): string {
  let name = "";
  for (let n = col + 1; n > 0; n = Math.floor((n - 1) / 26))
    name = String.fromCharCode(65 + ((n - 1) % 26)) + name;
  return name;
}

const pad = (n: number, width = 2) => String(n).padStart(width, "0");

/**
 * An Excel serial date as ISO text. The 1900 system counts 1900-02-29, a day that never was
 * (Lotus 1-2-3's leap-year bug, kept for compatibility), so serials from 61 on are one day
 * ahead of a plain count from 1899-12-31; the 1904 system counts from 1904-01-01.
 */
function serialToIso(serial: number, kind: Exclude<NumberKind, "number">, date1904: boolean): string {
  const totalSeconds = Math.round(serial * 86_400);
  let days = Math.floor(totalSeconds / 86_400);
  const seconds = totalSeconds - days * 86_400;
  const time = `${pad(Math.floor(seconds / 3600))}:${pad(Math.floor(seconds / 60) % 60)}:${pad(seconds % 60)}`;
  if (kind === "time" && days === 0) return time;
  if (!date1904 && days < 61) days += 1;
  const epoch = date1904 ? Date.UTC(1904, 0, 1) : Date.UTC(1899, 11, 30);
  const date = new Date(epoch + days * 86_400_000);
  const iso = `${pad(date.getUTCFullYear(), 4)}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}`;
  // A date-only style keeps a time it does not show; a date-and-time style always writes one, so
  // a column of them reads as one type even where a value falls on midnight.
  return seconds === 0 && kind === "date" ? iso : `${iso}T${time}`;
}

/** The cell being read: its position, type, style and what its children held. */
interface OpenCell {
  ref: string;
  col: number;
  type: string;
  style: number;
  value: string[] | null;
  inline: string[] | null;
  formula: boolean;
}

function cellText(cell: OpenCell, ctx: SheetContext, found: SheetFindings): string | null {
  const v = cell.value?.join("") ?? null;
  if (cell.formula && v === null && cell.type !== "inlineStr") {
    throw new QuarryError(
      "bad_request:upload",
      `Cell ${cell.ref} of sheet "${ctx.sheetName}" is a formula that was never computed; open the file ` +
        "in Excel and save it again, or paste values.",
    );
  }
  if (cell.formula) found.formulas.push(cell.ref);
  switch (cell.type) {
    case "s": {
      const s = ctx.strings[Number(v)];
      if (s === undefined)
        throw notWorkbook(`cell ${cell.ref} points to shared string ${v}, which does not exist.`);
      return s;
    }
    case "inlineStr":
      return cell.inline ? unescapeText(cell.inline.join("")) : (v ?? null);
    case "str":
      return v === null ? null : unescapeText(v);
    case "b":
      return v === null ? null : v === "1" || v === "true" ? "true" : "false";
    case "e":
      found.errors.push(v ? `${cell.ref} (${v})` : cell.ref);
      return null;
    case "d":
      return v;
    default: {
      if (v === null || v === "") return null;
      const kind = ctx.styles[cell.style] ?? "number";
      const n = Number(v);
      return kind !== "number" && Number.isFinite(n) && n >= 0 ? serialToIso(n, kind, ctx.date1904) : v;
    }
  }
}

/** The walk through `<sheetData>`: which row and cell are open, and where text goes. */
class SheetWalker {
  readonly found: SheetFindings = { formulas: [], errors: [] };
  private rowNumber = 0;
  private cells: RowCells = [];
  private cell: OpenCell | null = null;
  private target: string[] | null = null;
  private phonetic = 0;

  constructor(
    private readonly ctx: SheetContext,
    private readonly onRow: (row: number, cells: RowCells) => void,
  ) {}

  attach(p: SaxesParser<{ xmlns: true }>): void {
    p.on("opentag", (tag) => this.open(tag));
    p.on("closetag", (tag) => this.close(tag.local));
    const take = (text: string) => this.target?.push(text);
    p.on("text", take);
    p.on("cdata", take);
  }

  private openRow(tag: SaxesTagNS): void {
    const r = Number(attr(tag, "r") ?? this.rowNumber + 1);
    if (!Number.isInteger(r) || r <= this.rowNumber || r > MAX_ROWS) {
      throw notWorkbook(`row ${attr(tag, "r")} of sheet "${this.ctx.sheetName}" is out of order.`);
    }
    this.rowNumber = r;
    this.cells = [];
  }

  private openCell(tag: SaxesTagNS): void {
    const ref = attr(tag, "r");
    const at = ref ? parseRef(ref) : null;
    const col = at ? at.col : (this.cells.at(-1)?.col ?? -1) + 1;
    if (col >= MAX_COLUMNS || (ref && !at)) throw notWorkbook(`cell reference "${ref}" is not valid.`);
    this.cell = {
      ref: ref ?? `${columnName(col)}${this.rowNumber}`,
      col,
      type: attr(tag, "t") ?? "n",
      style: Number(attr(tag, "s") ?? 0),
      value: null,
      inline: null,
      formula: false,
    };
  }

  private open(tag: SaxesTagNS): void {
    const cell = this.cell;
    switch (tag.local) {
      case "row":
        return this.openRow(tag);
      case "c":
        return this.openCell(tag);
      case "v":
        if (cell) this.target = cell.value = [];
        return;
      case "f":
        if (cell) cell.formula = true;
        return;
      case "is":
        if (cell) cell.inline = [];
        return;
      case "rPh":
        this.phonetic++;
        return;
      case "t":
        if (cell?.inline && this.phonetic === 0) this.target = cell.inline;
        return;
    }
  }

  private closeCell(cell: OpenCell): void {
    const text = cellText(cell, this.ctx, this.found);
    if (text === null || text === "") return;
    if (this.cells.length && this.cells.at(-1)!.col >= cell.col) {
      throw notWorkbook(`cell ${cell.ref} of sheet "${this.ctx.sheetName}" is out of order.`);
    }
    this.cells.push({ col: cell.col, text });
  }

  private close(local: string): void {
    switch (local) {
      case "c":
        if (this.cell) this.closeCell(this.cell);
        this.cell = null;
        return;
      case "row":
        if (this.cells.length) this.onRow(this.rowNumber, this.cells);
        this.cells = [];
        return;
      case "v":
      case "t":
        this.target = null;
        return;
      case "rPh":
        this.phonetic--;
        return;
    }
  }
}

/**
 * Streams the sheet at `sheetPath`, calling `onRow` for every `<row>` that holds a value, in
 * order. `drain` runs between inflated chunks so the caller can write what it has.
 */
export async function readSheet(
  zip: WorkbookZip,
  sheetPath: string,
  ctx: SheetContext,
  onRow: (row: number, cells: RowCells) => void,
  drain?: () => Promise<void>,
): Promise<SheetFindings> {
  const walker = new SheetWalker(ctx, onRow);
  await zip.parseXml(sheetPath, (p) => walker.attach(p), drain);
  return walker.found;
}

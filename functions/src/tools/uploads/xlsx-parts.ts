/**
 * The workbook-level parts of an .xlsx: the sheet list (workbook.xml and its rels), the shared
 * strings table and the number formats that say which numbers are dates (styles.xml). Parsed
 * namespace-aware by local name, so prefixed documents from other writers read the same.
 */
import path from "node:path/posix";
import type { SaxesParser, SaxesTagNS } from "saxes";
import { notWorkbook, type WorkbookZip } from "./xlsx-zip";

type Parser = SaxesParser<{ xmlns: true }>;

/** One sheet, in workbook order, with the zip path of its XML. */
export interface SheetRef {
  name: string;
  path: string;
}

export interface WorkbookInfo {
  sheets: SheetRef[];
  /** Serial 0 is 1904-01-01 (old Mac workbooks) instead of 1899-12-31. */
  date1904: boolean;
  sharedStringsPath?: string;
  stylesPath?: string;
}

/** How a cell style shows a number: plainly, as a date, a date and time, or a time of day. */
export type NumberKind = "number" | "date" | "datetime" | "time";

/** The value of an attribute by its local name, whatever its prefix (`r:id` → "id"). */
export function attr(tag: SaxesTagNS, local: string): string | undefined {
  for (const a of Object.values(tag.attributes)) if (a.local === local) return a.value;
  return undefined;
}

/** Excel escapes control characters in text as `_xHHHH_` (e.g. `_x000D_` for a carriage return). */
export function unescapeText(text: string): string {
  return text.includes("_x")
    ? text.replace(/_x([0-9A-Fa-f]{4})_/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))
    : text;
}

/** Resolves a relationship target against the part that owns it (`xl/workbook.xml`). */
function resolveTarget(owner: string, target: string): string {
  if (target.startsWith("/")) return target.slice(1);
  return path.normalize(path.join(path.dirname(owner), target));
}

async function readRels(
  zip: WorkbookZip,
  owner: string,
): Promise<Map<string, { type: string; target: string }>> {
  const relsPath = `${path.dirname(owner)}/_rels/${path.basename(owner)}.rels`;
  const rels = new Map<string, { type: string; target: string }>();
  if (!zip.has(relsPath)) return rels;
  await zip.parseXml(relsPath, (p: Parser) => {
    p.on("opentag", (tag) => {
      if (tag.local !== "Relationship") return;
      const id = attr(tag, "Id");
      const target = attr(tag, "Target");
      if (id && target && attr(tag, "TargetMode") !== "External") {
        rels.set(id, { type: attr(tag, "Type") ?? "", target: resolveTarget(owner, target) });
      }
    });
  });
  return rels;
}

/** Reads the sheet list (names, order, paths), the date system and where strings and styles live. */
export async function readWorkbook(zip: WorkbookZip, workbookPath: string): Promise<WorkbookInfo> {
  const rels = await readRels(zip, workbookPath);
  const declared: { name: string; rid: string }[] = [];
  let date1904 = false;
  await zip.parseXml(workbookPath, (p: Parser) => {
    p.on("opentag", (tag) => {
      if (tag.local === "workbookPr") {
        const v = attr(tag, "date1904");
        date1904 = v === "1" || v === "true";
      } else if (tag.local === "sheet") {
        declared.push({ name: attr(tag, "name") ?? "", rid: attr(tag, "id") ?? "" });
      }
    });
  });
  const sheets: SheetRef[] = [];
  for (const { name, rid } of declared) {
    const rel = rels.get(rid);
    // Chart sheets and dialog sheets have no cells; only worksheets are tables.
    if (rel && /\/worksheet$/.test(rel.type) && zip.has(rel.target)) sheets.push({ name, path: rel.target });
  }
  if (sheets.length === 0) throw notWorkbook("it has no worksheets.");
  const byType = (suffix: string, fallback: string) => {
    for (const rel of rels.values()) if (rel.type.endsWith(suffix) && zip.has(rel.target)) return rel.target;
    return zip.has(fallback) ? fallback : undefined;
  };
  return {
    sheets,
    date1904,
    sharedStringsPath: byType("/sharedStrings", "xl/sharedStrings.xml"),
    stylesPath: byType("/styles", "xl/styles.xml"),
  };
}

/**
 * Reads the shared strings table: one string per `<si>`, the concatenation of its `<t>` and rich
 * text runs `<r><t>`, without phonetic guides (`<rPh>`, furigana shown above Japanese text).
 */
export async function readSharedStrings(
  zip: WorkbookZip,
  stringsPath: string | undefined,
): Promise<string[]> {
  const strings: string[] = [];
  if (!stringsPath) return strings;
  let current: string[] | null = null;
  let inText = false;
  let phonetic = 0;
  await zip.parseXml(stringsPath, (p: Parser) => {
    p.on("opentag", (tag) => {
      if (tag.local === "si") current = [];
      else if (tag.local === "rPh") phonetic++;
      else if (tag.local === "t" && current && phonetic === 0) inText = !tag.isSelfClosing;
    });
    p.on("closetag", (tag) => {
      if (tag.local === "si" && current) {
        strings.push(unescapeText(current.join("")));
        current = null;
      } else if (tag.local === "rPh") phonetic--;
      else if (tag.local === "t") inText = false;
    });
    const take = (text: string) => {
      if (inText && current) current.push(text);
    };
    p.on("text", take);
    p.on("cdata", take);
  });
  return strings;
}

/** Built-in number formats that show a date or time (ECMA-376 §18.8.30). */
const BUILTIN_DATES = new Set([14, 15, 16, 17]);
const BUILTIN_TIMES = new Set([18, 19, 20, 21, 45, 46, 47]);

/** Whether a custom format code shows a date, a time of day, or a plain number. */
function kindOfFormat(code: string): NumberKind {
  // Only the first section (positive numbers) decides; quoted text, [colours]/[$-locale] and
  // escaped (\x), padding (_x) and fill (*x) characters are not date tokens.
  const first = code.split(";")[0] ?? "";
  const bare = first
    .replace(/"[^"]*"/g, "")
    .replace(/\[[^\]]*\]/g, "")
    .replace(/[\\_*]./g, "");
  const date = /[dy]/i.test(bare);
  const time = /[hs]/i.test(bare);
  if (date) return time ? "datetime" : "date";
  if (time) return "time";
  if (/m/i.test(bare.replace(/AM\/PM|A\/P/gi, ""))) return "date";
  return "number";
}

/** Reads styles.xml into one NumberKind per cell style index (`s` on a cell, into `cellXfs`). */
export async function readStyles(zip: WorkbookZip, stylesPath: string | undefined): Promise<NumberKind[]> {
  const kinds: NumberKind[] = [];
  if (!stylesPath) return kinds;
  const custom = new Map<number, NumberKind>();
  const xfFormats: number[] = [];
  let inCellXfs = false;
  await zip.parseXml(stylesPath, (p: Parser) => {
    p.on("opentag", (tag) => {
      if (tag.local === "numFmt") {
        custom.set(Number(attr(tag, "numFmtId")), kindOfFormat(attr(tag, "formatCode") ?? ""));
      } else if (tag.local === "cellXfs") inCellXfs = true;
      else if (tag.local === "xf" && inCellXfs) xfFormats.push(Number(attr(tag, "numFmtId") ?? 0));
    });
    p.on("closetag", (tag) => {
      if (tag.local === "cellXfs") inCellXfs = false;
    });
  });
  for (const id of xfFormats) {
    const builtin =
      id === 22 ? "datetime" : BUILTIN_DATES.has(id) ? "date" : BUILTIN_TIMES.has(id) ? "time" : "number";
    kinds.push(custom.get(id) ?? builtin);
  }
  return kinds;
}

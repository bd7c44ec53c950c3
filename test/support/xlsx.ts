/**
 * Real .xlsx files for tests: a minimal zip writer (stored or deflated entries, node:zlib) and the
 * OOXML parts Excel writes for plain sheets — content types, package and workbook rels,
 * workbook.xml (sheet order, date1904), styles.xml (date and custom number formats),
 * sharedStrings.xml and one worksheet per sheet. Also the entries a hostile upload is made of: a
 * deflated run of zeros that inflates to hundreds of MB, with an honest or a lying header.
 */
import { writeFileSync } from "node:fs";
import zlib from "node:zlib";

/** A cell as a test writes it; null leaves the cell out (a skipped column). */
type XlsxCell =
  | string
  | number
  | boolean
  | Date
  | null
  | { formula: string; value?: string | number | boolean }
  | { inline: string }
  | { rich: string[] }
  | { error: string }
  | { serial: number; format: string };

export interface XlsxSpec {
  sheets: { name: string; rows: XlsxCell[][] }[];
  date1904?: boolean;
}

/** One zip entry; `raw` gives the compressed bytes and the header's values directly (bombs, lies). */
export interface ZipEntry {
  name: string;
  data?: Buffer;
  method?: "stored" | "deflate";
  raw?: { compressed: Buffer; crc: number; size: number };
}

const esc = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/** Writes `entries` as a zip file (no zip64, no data descriptors: what yauzl reads from the central directory). */
export function writeZip(file: string, entries: ZipEntry[]): void {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name, "utf8");
    const deflate = entry.raw !== undefined || entry.method !== "stored";
    const data = entry.data ?? Buffer.alloc(0);
    const compressed = entry.raw?.compressed ?? (deflate ? zlib.deflateRawSync(data) : data);
    const crc = entry.raw?.crc ?? zlib.crc32(data);
    const size = entry.raw?.size ?? data.length;
    const common = (b: Buffer, at: number) => {
      b.writeUInt16LE(20, at); // version needed
      b.writeUInt16LE(0x0800, at + 2); // UTF-8 names
      b.writeUInt16LE(deflate ? 8 : 0, at + 4);
      b.writeUInt16LE(0, at + 6); // time
      b.writeUInt16LE(0x21, at + 8); // date: 1980-01-01
      b.writeUInt32LE(crc >>> 0, at + 10);
      b.writeUInt32LE(compressed.length, at + 14);
      b.writeUInt32LE(size, at + 18);
      b.writeUInt16LE(name.length, at + 22);
      b.writeUInt16LE(0, at + 24); // extra
    };
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    common(local, 4);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4); // version made by
    common(central, 6);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, compressed);
    centrals.push(central, name);
    offset += local.length + name.length + compressed.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  writeFileSync(file, Buffer.concat([...locals, cd, end]));
}

const MIB = 1024 * 1024;

/**
 * A deflated entry of `mib` MiB of zeros, built from one full-flushed 1 MiB block repeated (a
 * few hundred KB, made in milliseconds). `declared` sets the header's size: honest by default.
 */
export function zerosEntry(name: string, mib: number, declared = mib * MIB): ZipEntry {
  const block = zlib.deflateRawSync(Buffer.alloc(MIB), {
    finishFlush: zlib.constants.Z_FULL_FLUSH,
    level: 9,
  });
  const zeros = Buffer.alloc(MIB);
  let crc = 0;
  for (let i = 0; i < mib; i++) crc = zlib.crc32(zeros, crc);
  // 0x03 0x00: an empty final block with fixed Huffman codes, which ends the deflate stream.
  const compressed = Buffer.concat([...Array<Buffer>(mib).fill(block), Buffer.from([0x03, 0x00])]);
  return { name, raw: { compressed, crc, size: declared } };
}

const col = (i: number) => {
  let s = "";
  for (let n = i + 1; n > 0; n = Math.floor((n - 1) / 26)) s = String.fromCharCode(65 + ((n - 1) % 26)) + s;
  return s;
};

/** Builds the XML parts of a workbook as zip entries (a test may alter or add some before writing). */
export function workbookEntries(spec: XlsxSpec): ZipEntry[] {
  const strings: string[] = [];
  const stringIndex = new Map<string, number>();
  const shared = (s: string) => {
    if (!stringIndex.has(s))
      stringIndex.set(s, strings.push(`<si><t xml:space="preserve">${esc(s)}</t></si>`) - 1);
    return stringIndex.get(s)!;
  };
  // cellXfs: 0 General, 1 a date (numFmt 14), 2 a date and time (22), then one per custom format.
  const customs: string[] = [];
  const styleOf = (format: string) => {
    const at = customs.indexOf(format);
    return 3 + (at >= 0 ? at : customs.push(format) - 1);
  };
  const epoch = spec.date1904 ? Date.UTC(1904, 0, 1) : Date.UTC(1899, 11, 30);
  const cellXml = (ref: string, cell: Exclude<XlsxCell, null>): string => {
    if (typeof cell === "string") return `<c r="${ref}" t="s"><v>${shared(cell)}</v></c>`;
    if (typeof cell === "number") return `<c r="${ref}"><v>${cell}</v></c>`;
    if (typeof cell === "boolean") return `<c r="${ref}" t="b"><v>${cell ? 1 : 0}</v></c>`;
    if (cell instanceof Date) {
      const serial = (cell.getTime() - epoch) / 86_400_000;
      return `<c r="${ref}" s="${Number.isInteger(serial) ? 1 : 2}"><v>${serial}</v></c>`;
    }
    if ("formula" in cell) {
      const v = cell.value;
      const t = typeof v === "string" ? ' t="str"' : typeof v === "boolean" ? ' t="b"' : "";
      const cached = v === undefined ? "" : `<v>${typeof v === "boolean" ? (v ? 1 : 0) : esc(String(v))}</v>`;
      return `<c r="${ref}"${t}><f>${esc(cell.formula)}</f>${cached}</c>`;
    }
    if ("inline" in cell) return `<c r="${ref}" t="inlineStr"><is><t>${esc(cell.inline)}</t></is></c>`;
    if ("rich" in cell) {
      const runs = cell.rich.map(
        (t, i) => `<r>${i ? "<rPr><b/></rPr>" : ""}<t xml:space="preserve">${esc(t)}</t></r>`,
      );
      const at = strings.push(`<si>${runs.join("")}<rPh sb="0" eb="1"><t>フリガナ</t></rPh></si>`) - 1;
      return `<c r="${ref}" t="s"><v>${at}</v></c>`;
    }
    if ("error" in cell) return `<c r="${ref}" t="e"><v>${esc(cell.error)}</v></c>`;
    return `<c r="${ref}" s="${styleOf(cell.format)}"><v>${cell.serial}</v></c>`;
  };
  const sheetXml = (rows: XlsxCell[][]) => {
    const body = rows
      .map((row, r) => {
        const cells = row
          .map((cell, c) => (cell === null ? "" : cellXml(`${col(c)}${r + 1}`, cell)))
          .join("");
        return row.length ? `<row r="${r + 1}">${cells}</row>` : "";
      })
      .join("\n");
    return `${XML}<worksheet xmlns="${MAIN}" xmlns:r="${REL}"><sheetData>\n${body}\n</sheetData></worksheet>`;
  };
  const sheets = spec.sheets.map((s, i) => ({ ...s, xml: sheetXml(s.rows), file: `sheet${i + 1}.xml` }));
  const numFmts = customs.map((f, i) => `<numFmt numFmtId="${164 + i}" formatCode="${esc(f)}"/>`).join("");
  const xfs = [0, 14, 22, ...customs.map((_, i) => 164 + i)].map(
    (id) => `<xf numFmtId="${id}" applyNumberFormat="1"/>`,
  );
  const parts: [string, string][] = [
    ["[Content_Types].xml", contentTypes(sheets.map((s) => s.file))],
    [
      "_rels/.rels",
      `${XML}<Relationships xmlns="${PKG}"><Relationship Id="rId1" Type="${REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
    ],
    [
      "xl/workbook.xml",
      `${XML}<workbook xmlns="${MAIN}" xmlns:r="${REL}"><workbookPr${spec.date1904 ? ' date1904="1"' : ""}/><sheets>` +
        sheets
          .map((s, i) => `<sheet name="${esc(s.name)}" sheetId="${i + 1}" r:id="rId${i + 1}"/>`)
          .join("") +
        "</sheets></workbook>",
    ],
    [
      "xl/_rels/workbook.xml.rels",
      `${XML}<Relationships xmlns="${PKG}">` +
        sheets
          .map(
            (s, i) =>
              `<Relationship Id="rId${i + 1}" Type="${REL}/worksheet" Target="worksheets/${s.file}"/>`,
          )
          .join("") +
        `<Relationship Id="rIdS" Type="${REL}/styles" Target="styles.xml"/>` +
        `<Relationship Id="rIdT" Type="${REL}/sharedStrings" Target="sharedStrings.xml"/></Relationships>`,
    ],
    ...sheets.map((s): [string, string] => [`xl/worksheets/${s.file}`, s.xml]),
    [
      "xl/styles.xml",
      `${XML}<styleSheet xmlns="${MAIN}"><numFmts count="${customs.length}">${numFmts}</numFmts>` +
        `<cellStyleXfs count="1"><xf numFmtId="0"/></cellStyleXfs><cellXfs count="${xfs.length}">${xfs.join("")}</cellXfs></styleSheet>`,
    ],
    [
      "xl/sharedStrings.xml",
      `${XML}<sst xmlns="${MAIN}" count="${strings.length}">${strings.join("")}</sst>`,
    ],
  ];
  return parts.map(([name, xml]) => ({ name, data: Buffer.from(xml, "utf8") }));
}

/** Writes a workbook built from `spec` to `file`. */
export function writeXlsx(file: string, spec: XlsxSpec): void {
  writeZip(file, workbookEntries(spec));
}

const XML = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
const MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";
const REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
const PKG = "http://schemas.openxmlformats.org/package/2006/relationships";

function contentTypes(sheetFiles: string[]): string {
  const ct = "application/vnd.openxmlformats-officedocument.spreadsheetml";
  return (
    `${XML}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
    `<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>` +
    `<Default Extension="xml" ContentType="application/xml"/>` +
    `<Override PartName="/xl/workbook.xml" ContentType="${ct}.sheet.main+xml"/>` +
    sheetFiles
      .map((f) => `<Override PartName="/xl/worksheets/${f}" ContentType="${ct}.worksheet+xml"/>`)
      .join("") +
    `<Override PartName="/xl/styles.xml" ContentType="${ct}.styles+xml"/>` +
    `<Override PartName="/xl/sharedStrings.xml" ContentType="${ct}.sharedStrings+xml"/></Types>`
  );
}

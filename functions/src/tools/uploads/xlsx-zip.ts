/**
 * Bounded reading of an .xlsx file's zip entries. A workbook is a zip of XML parts, so an upload
 * can be a zip bomb (a few KB that inflate to GB) or an XML bomb (entity expansion); every guard
 * here runs before or while inflating, never after: the central directory is read first (entry
 * count, declared sizes, compression ratio), each stream is counted against its declared size,
 * and any DTD is refused because nothing in OOXML needs one.
 */
import { open } from "node:fs/promises";
import { SaxesParser } from "saxes";
import yauzl, { type Entry, type ZipFile } from "yauzl";
import { QuarryError } from "../../errors";

/** More entries than any real workbook has (a sheet, its rels, drawings, comments …). */
const MAX_ENTRIES = 2_000;
/** How much larger than the upload limit the parts we read may inflate to, in total. */
const INFLATE_FACTOR = 10;
/** XML compresses well, but never this well unless it is mostly one repeated byte. */
const MAX_RATIO = 200;
/** Entries under this size are not ratio-checked: a tiny part may compress oddly. */
const RATIO_FLOOR = 1024 * 1024;
/** Only these parts are ever inflated; media, embedded objects and the rest are skipped. */
const READABLE = /^(xl\/|_rels\/|\[Content_Types\]\.xml$)/;

/** What a workbook may inflate to, in total, for an upload limit of `maxBytes` (also caps the CSV). */
export function inflateBudget(maxBytes: number): number {
  return INFLATE_FACTOR * maxBytes;
}

/** A refusal for the file's structure ("… is not an Excel workbook (.xlsx): <why>"). */
export function notWorkbook(why: string): QuarryError {
  return new QuarryError("bad_request:upload", `The file is not an Excel workbook (.xlsx): ${why}`);
}

/** Bytes in words, for messages ("12 MB", "900 KB"). */
export function sizeText(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${Math.round(bytes / (1024 * 1024))} MB`;
  return `${Math.max(1, Math.round(bytes / 1024))} KB`;
}

function tooLarge(detail: string): QuarryError {
  return new QuarryError("payload_too_large:upload", detail);
}

/** What the first bytes say the file is, before any zip parsing. */
async function sniffMagic(src: string): Promise<void> {
  const handle = await open(src, "r");
  const head = Buffer.alloc(8);
  try {
    await handle.read(head, 0, 8, 0);
  } finally {
    await handle.close();
  }
  if (head.subarray(0, 4).equals(Buffer.from([0xd0, 0xcf, 0x11, 0xe0]))) {
    // Old binary Excel and password-protected .xlsx are both OLE compound files.
    throw new QuarryError(
      "bad_request:upload",
      "The file is an old Excel workbook (.xls) or a password-protected one, not an .xlsx; " +
        "save it as .xlsx (without a password) or CSV and upload that.",
    );
  }
  if (head.readUInt32LE(0) !== 0x04034b50) {
    throw notWorkbook("it is not a zip archive. Save it as .xlsx or CSV and upload that.");
  }
}

/** One workbook's zip, open for bounded reads of its XML parts. Close it in every path. */
export class WorkbookZip {
  /** Bytes inflated so far over every read (a test can see a refusal stopped early). */
  bytesInflated = 0;
  private declaredTotal = 0;
  private readonly counted = new Set<string>();

  private constructor(
    private readonly zip: ZipFile,
    private readonly entries: Map<string, Entry>,
    private readonly budget: number,
  ) {}

  /** Opens `src`, checking its type and its central directory; refuses before inflating anything. */
  static async open(src: string, maxBytes: number): Promise<WorkbookZip> {
    await sniffMagic(src);
    let zip: ZipFile;
    try {
      zip = await yauzl.openPromise(src, { lazyEntries: true, validateEntrySizes: true, autoClose: false });
    } catch (err) {
      throw notWorkbook(`its zip structure is damaged (${(err as Error).message}).`);
    }
    try {
      if (zip.entryCount > MAX_ENTRIES) {
        throw notWorkbook(
          `it has ${zip.entryCount} parts; a workbook has far fewer than ${MAX_ENTRIES.toLocaleString("en")}.`,
        );
      }
      const entries = new Map<string, Entry>();
      for await (const entry of zip.eachEntry()) {
        if (!entries.has(entry.fileName)) entries.set(entry.fileName, entry);
      }
      return new WorkbookZip(zip, entries, inflateBudget(maxBytes));
    } catch (err) {
      zip.close();
      if (err instanceof QuarryError) throw err;
      throw notWorkbook(`its zip structure is damaged (${(err as Error).message}).`);
    }
  }

  /** Every entry name (only names: nothing is inflated). */
  names(): string[] {
    return [...this.entries.keys()];
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  close(): void {
    this.zip.close();
  }

  /** Refuses an entry whose declared size, running total or compression ratio is out of bounds. */
  private admit(name: string, entry: Entry): void {
    if (!READABLE.test(name)) throw notWorkbook(`${name} is not a part a workbook reader may open.`);
    const size = entry.uncompressedSize;
    const limit = `The workbook inflates to more than ${sizeText(this.budget)}`;
    const advice = "save the sheet you need as CSV and upload that.";
    if (size > this.budget) throw tooLarge(`${limit} (${name} alone is ${sizeText(size)}); ${advice}`);
    if (size > RATIO_FLOOR && size > MAX_RATIO * Math.max(1, entry.compressedSize)) {
      throw tooLarge(
        `${limit} of its kind: ${name} inflates from ${sizeText(entry.compressedSize)} to ` +
          `${sizeText(size)}, more than ${MAX_RATIO} times, which no real sheet does; ${advice}`,
      );
    }
    if (!this.counted.has(name)) {
      this.counted.add(name);
      this.declaredTotal += size;
      if (this.declaredTotal > this.budget) throw tooLarge(`${limit} in the parts needed; ${advice}`);
    }
  }

  /**
   * Streams one entry as text through `onText`, awaiting `drain` between chunks (the caller's
   * chance to write output). Aborts as soon as more bytes arrive than the entry declared.
   */
  async readText(name: string, onText: (text: string) => void, drain?: () => Promise<void>): Promise<void> {
    const entry = this.entries.get(name);
    if (!entry) throw notWorkbook(`it has no ${name}.`);
    this.admit(name, entry);
    let stream;
    try {
      stream = await this.zip.openReadStreamPromise(entry);
    } catch (err) {
      throw notWorkbook(`${name} cannot be read (${(err as Error).message}).`);
    }
    const decoder = new TextDecoder("utf-8", { fatal: true });
    let seen = 0;
    try {
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        seen += chunk.length;
        this.bytesInflated += chunk.length;
        if (seen > entry.uncompressedSize) throw lied(name);
        onText(decoder.decode(chunk, { stream: true }));
        if (drain) await drain();
      }
      onText(decoder.decode());
    } catch (err) {
      stream.destroy();
      if (err instanceof QuarryError) throw err;
      const message = (err as Error).message;
      if (/too many bytes|too few bytes/.test(message)) throw lied(name);
      if ((err as { code?: string }).code === "ERR_ENCODING_INVALID_ENCODED_DATA") {
        throw notWorkbook(`${name} is not UTF-8 text.`);
      }
      throw notWorkbook(`${name} cannot be read (${message}).`);
    }
  }

  /**
   * Parses one XML entry with saxes (namespace-aware, so prefixed OOXML reads the same), calling
   * `setup` to attach handlers. Any DOCTYPE is refused: without a DTD there are no entities to expand.
   */
  async parseXml(
    name: string,
    setup: (parser: SaxesParser<{ xmlns: true }>) => void,
    drain?: () => Promise<void>,
  ): Promise<void> {
    const parser = new SaxesParser({ xmlns: true });
    parser.on("doctype", () => {
      throw notWorkbook(`${name} declares a DOCTYPE, which no workbook part has; it was refused as unsafe.`);
    });
    setup(parser);
    const write = (text: string) => {
      if (/<!(DOCTYPE|ENTITY)/i.test(text)) {
        throw notWorkbook(
          `${name} declares a DOCTYPE or ENTITY, which no workbook part has; it was refused as unsafe.`,
        );
      }
      wrap(name, () => parser.write(text));
    };
    await this.readText(name, write, drain);
    wrap(name, () => parser.close());
  }
}

function lied(name: string): QuarryError {
  return notWorkbook(
    `${name} holds more data than its zip header declares (the file is damaged or crafted).`,
  );
}

/** Saxes throws plain Errors for malformed XML; ours (QuarryError) and any other kind pass through. */
function wrap(name: string, step: () => void): void {
  try {
    step();
  } catch (err) {
    if (!(err instanceof Error) || err.constructor !== Error) throw err;
    throw notWorkbook(`${name} is not well-formed XML (${(err as Error).message.split("\n")[0]}).`);
  }
}

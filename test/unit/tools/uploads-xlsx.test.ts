/**
 * The .xlsx reader on real workbooks written by test/support/xlsx.ts: which sheet is read, what
 * each kind of cell becomes in the CSV, the warnings and refusals, and the zip/XML bomb guards
 * (measured by the bytes the reader inflated, not by time).
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { afterAll, describe, expect, it } from "vitest";
import { QuarryError } from "../../../functions/src/errors";
import { xlsxToCsv } from "../../../functions/src/tools/uploads/xlsx";
import { WorkbookZip } from "../../../functions/src/tools/uploads/xlsx-zip";
import { parseCsv } from "../../support/csv";
import {
  workbookEntries,
  writeXlsx,
  writeZip,
  zerosEntry,
  type XlsxSpec,
  type ZipEntry,
} from "../../support/xlsx";

const dir = mkdtempSync(path.join(os.tmpdir(), "quarry-xlsx-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const MB = 1024 * 1024;
let n = 0;
const file = (ext: string) => path.join(dir, `f${++n}.${ext}`);

/** Writes the workbook, reads it to CSV and returns the cells parsed back with the result. */
async function read(spec: XlsxSpec, opts: { sheet?: string; maxBytes?: number } = {}) {
  const src = file("xlsx");
  writeXlsx(src, spec);
  return readFile(src, opts);
}

async function readFile(src: string, opts: { sheet?: string; maxBytes?: number } = {}) {
  const dest = file("csv");
  const result = await xlsxToCsv(src, dest, { sheet: opts.sheet, maxBytes: opts.maxBytes ?? 10 * MB });
  const text = readFileSync(dest, "utf8");
  return { ...result, text, cells: parseCsv(text) };
}

/** The QuarryError a read ends with (fails the test if it succeeds). */
async function refusal(src: string, maxBytes = 10 * MB, sheet?: string): Promise<QuarryError> {
  const err = await xlsxToCsv(src, file("csv"), { maxBytes, sheet }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(QuarryError);
  return err as QuarryError;
}

function zipWith(entries: ZipEntry[]): string {
  const src = file("xlsx");
  writeZip(src, entries);
  return src;
}

/** The workbook's entries with one part's XML replaced. */
function alter(spec: XlsxSpec, name: string, edit: (xml: string) => string): ZipEntry[] {
  return workbookEntries(spec).map((e) =>
    e.name === name ? { ...e, data: Buffer.from(edit(e.data!.toString("utf8")), "utf8") } : e,
  );
}

const twoSheets: XlsxSpec = {
  sheets: [
    {
      name: "Targets",
      rows: [
        ["month", "target"],
        [new Date(Date.UTC(2026, 0, 1)), 1000],
        [new Date(Date.UTC(2026, 1, 1)), 1250],
      ],
    },
    { name: "Notes", rows: [["note"], ["first"], ["second"]] },
  ],
};

describe("xlsxToCsv: which sheet", () => {
  it("reads the first sheet in workbook order by default and lists every sheet", async () => {
    const out = await read(twoSheets);
    expect(out.sheets).toEqual(["Targets", "Notes"]);
    expect(out.sheet).toBe("Targets");
    expect(out.cells).toEqual([
      ["month", "target"],
      ["2026-01-01", "1000"],
      ["2026-02-01", "1250"],
    ]);
    expect(out.warnings).toEqual([]);
  });

  it("picks a sheet by name, in any case", async () => {
    const out = await read(twoSheets, { sheet: "notes" });
    expect(out.sheet).toBe("Notes");
    expect(out.cells).toEqual([["note"], ["first"], ["second"]]);
  });

  it("refuses a sheet the workbook does not have, naming the ones it has", async () => {
    const src = file("xlsx");
    writeXlsx(src, twoSheets);
    const err = await refusal(src, 10 * MB, "Budget");
    expect(err.code).toBe("bad_request:upload");
    expect(err.message).toBe('The workbook has no sheet "Budget"; its sheets are: Targets, Notes.');
  });
});

describe("xlsxToCsv: cells", () => {
  it("reads shared, inline and rich-text strings (without phonetic guides), and CSV-quotes what needs it", async () => {
    const awkward = 'He said "hi", then left\nfor good';
    const out = await read({
      sheets: [
        {
          name: "S",
          rows: [
            ["name", "text"],
            ["shared", awkward],
            [{ inline: "inline, with comma" }, { rich: ["bold ", "and plain"] }],
            ["=SUM(A1)", "+1"],
            ["-5 apples", "@home"],
          ],
        },
      ],
    });
    expect(out.cells).toEqual([
      ["name", "text"],
      ["shared", awkward],
      ["inline, with comma", "bold and plain"],
      ["=SUM(A1)", "+1"],
      ["-5 apples", "@home"],
    ]);
    expect(out.text).toContain('"He said ""hi"", then left\nfor good"');
    expect(out.warnings).toEqual([]);
  });

  it("writes numbers as stored, booleans as true/false, skipped cells and rows as empty, every row as wide", async () => {
    const out = await read({
      sheets: [
        {
          name: "S",
          rows: [["a", "b", "c"], [1, null, 2.5], [], [true, false], [-0.125, 1e21, null, "wide"]],
        },
      ],
    });
    expect(out.cells).toEqual([
      ["a", "b", "c", ""],
      ["1", "", "2.5", ""],
      ["", "", "", ""],
      ["true", "false", "", ""],
      ["-0.125", "1e+21", "", "wide"],
    ]);
  });

  it("reads namespace-prefixed parts, cells without references and Excel's _xHHHH_ escapes", async () => {
    const spec: XlsxSpec = { sheets: [{ name: "S", rows: [["a", "b"]] }] };
    const sheet =
      '<?xml version="1.0"?><x:worksheet xmlns:x="http://schemas.openxmlformats.org/spreadsheetml/2006/main">' +
      '<x:sheetData><x:row><x:c t="s"><x:v>0</x:v></x:c><x:c t="s"><x:v>1</x:v></x:c></x:row>' +
      '<x:row><x:c t="inlineStr"><x:is><x:t>line_x000D_\nbreak</x:t></x:is></x:c><x:c><x:v>7</x:v></x:c></x:row>' +
      "</x:sheetData></x:worksheet>";
    const src = zipWith(alter(spec, "xl/worksheets/sheet1.xml", () => sheet));
    const out = await readFile(src);
    expect(out.cells).toEqual([
      ["a", "b"],
      ["line\r\nbreak", "7"],
    ]);
  });

  it("drops blank rows and columns before the data, and trailing ones after it", async () => {
    const out = await read({
      sheets: [
        { name: "S", rows: [[], [null, null, "x", "y"], [null, null, 1, 2], [], [null, null, null, null]] },
      ],
    });
    expect(out.cells).toEqual([
      ["x", "y"],
      ["1", "2"],
    ]);
  });

  it("writes date-styled serials as ISO dates and datetimes (1900 system, custom dd/mm/yyyy, a time)", async () => {
    const out = await read({
      sheets: [
        {
          name: "S",
          rows: [
            ["when", "custom", "time", "plain"],
            [
              new Date(Date.UTC(2026, 2, 15)),
              { serial: 46096, format: "dd/mm/yyyy" },
              { serial: 0.75, format: "hh:mm" },
              46096,
            ],
            [
              new Date(Date.UTC(2026, 2, 15, 13, 30, 5)),
              { serial: 1, format: "d-mmm-yy" },
              { serial: 0.5, format: '0.00 "h"' },
              0,
            ],
            [{ serial: 59, format: "yyyy-mm-dd" }, { serial: 61, format: "[$-409]mmmm d, yyyy" }, null, null],
            [
              { serial: 46096, format: "yyyy-mm-dd hh:mm" },
              { serial: 46096.999999, format: "dd/mm/yyyy" },
              null,
              null,
            ],
          ],
        },
      ],
    });
    expect(out.cells).toEqual([
      ["when", "custom", "time", "plain"],
      ["2026-03-15", "2026-03-15", "18:00:00", "46096"],
      ["2026-03-15T13:30:05", "1900-01-01", "0.5", "0"],
      // Serial 59 is 1900-02-28; 61 is 1900-03-01 because Excel counts a 1900-02-29 that never was.
      ["1900-02-28", "1900-03-01", "", ""],
      // A date-and-time style writes midnight too; a time a second short of midnight rounds into the next day.
      ["2026-03-15T00:00:00", "2026-03-16", "", ""],
    ]);
  });

  it("counts dates from 1904-01-01 in a 1904 workbook", async () => {
    const out = await read({
      date1904: true,
      sheets: [
        {
          name: "S",
          rows: [["d"], [new Date(Date.UTC(2026, 2, 15))], [{ serial: 0, format: "yyyy-mm-dd" }]],
        },
      ],
    });
    expect(out.cells).toEqual([["d"], ["2026-03-15"], ["1904-01-01"]]);
  });

  it("loads formulas' cached values with one warning naming at most five cells", async () => {
    const f = (v: number) => ({ formula: `A${v}*2`, value: v * 2 });
    const out = await read({
      sheets: [
        {
          name: "S",
          rows: [
            ["n", "double", "label", "ok"],
            [1, f(1), { formula: 'IF(A2>0,"up","down")', value: "up" }, { formula: "A2>0", value: true }],
            [2, f(2)],
            [3, f(3)],
            [4, f(4)],
          ],
        },
      ],
    });
    expect(out.cells).toEqual([
      ["n", "double", "label", "ok"],
      ["1", "2", "up", "true"],
      ["2", "4", "", ""],
      ["3", "6", "", ""],
      ["4", "8", "", ""],
    ]);
    expect(out.warnings).toEqual([
      "B2, C2, D2, B3, B4 and 1 more cell are formulas; their last computed values were loaded.",
    ]);

    const one = await read({ sheets: [{ name: "S", rows: [["x"], [{ formula: "1+1", value: 2 }]] }] });
    expect(one.warnings).toEqual(["A2 is a formula; its last computed value was loaded."]);
  });

  it("refuses a formula that was never computed, naming the cell and the sheet", async () => {
    const src = file("xlsx");
    writeXlsx(src, {
      sheets: [
        {
          name: "Targets",
          rows: [
            ["a", "b"],
            [1, 2],
            [3, 4],
            [5, 6],
            [7, 6],
            [8, 9],
            [0, { formula: "A7*2" }],
          ],
        },
      ],
    });
    const err = await refusal(src);
    expect(err.code).toBe("bad_request:upload");
    expect(err.message).toBe(
      'Cell B7 of sheet "Targets" is a formula that was never computed; open the file in Excel and save it again, or paste values.',
    );
  });

  it("loads error cells as empty and names them in a warning", async () => {
    const out = await read({
      sheets: [
        {
          name: "S",
          rows: [
            ["a", "b"],
            [1, { error: "#DIV/0!" }],
            [2, 3],
          ],
        },
      ],
    });
    expect(out.cells).toEqual([
      ["a", "b"],
      ["1", ""],
      ["2", "3"],
    ]);
    expect(out.warnings).toEqual([
      'B2 (#DIV/0!) of sheet "S" holds an error (like #DIV/0!); it was loaded as empty.',
    ]);
  });

  it("produces a CSV that DuckDB types as the sheet meant: dates, integers, decimals, booleans, text, timestamps", async () => {
    const out = await read({
      sheets: [
        {
          name: "S",
          rows: [
            ["month", "target", "rate", "active", "note", "at"],
            [
              new Date(Date.UTC(2026, 0, 1)),
              1000,
              0.5,
              true,
              "first, with comma",
              new Date(Date.UTC(2026, 0, 1, 9, 30)),
            ],
            [
              new Date(Date.UTC(2026, 1, 1)),
              1250,
              0.25,
              false,
              "=not a formula",
              { serial: 46023, format: "yyyy-mm-dd hh:mm" },
            ],
          ],
        },
      ],
    });
    const csv = path.join(dir, "typed.csv");
    writeFileSync(csv, out.text);
    const instance = await DuckDBInstance.create(":memory:");
    const conn = await instance.connect();
    try {
      const res = await conn.runAndReadAll(`SELECT * FROM read_csv('${csv}')`);
      expect(res.columnNames()).toEqual(["month", "target", "rate", "active", "note", "at"]);
      expect(res.columnTypes().map(String)).toEqual([
        "DATE",
        "BIGINT",
        "DOUBLE",
        "BOOLEAN",
        "VARCHAR",
        "TIMESTAMP",
      ]);
      expect(res.getRowsJson()).toEqual([
        ["2026-01-01", "1000", 0.5, true, "first, with comma", "2026-01-01 09:30:00"],
        ["2026-02-01", "1250", 0.25, false, "=not a formula", "2026-01-01 00:00:00"],
      ]);
    } finally {
      conn.closeSync();
      instance.closeSync();
    }
  });
});

describe("xlsxToCsv: what is not an .xlsx", () => {
  it("refuses an old .xls (OLE) file, naming the format", async () => {
    const src = file("xls");
    writeFileSync(
      src,
      Buffer.concat([Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]), Buffer.alloc(504)]),
    );
    const err = await refusal(src);
    expect(err.code).toBe("bad_request:upload");
    expect(err.message).toMatch(/old Excel workbook \(\.xls\).*save it as \.xlsx .*or CSV/);
  });

  it("refuses a text file and an empty file as not zip archives", async () => {
    const src = file("xlsx");
    writeFileSync(src, "month,target\n2026-01,1000\n");
    const err = await refusal(src);
    expect(err.code).toBe("bad_request:upload");
    expect(err.message).toBe(
      "The file is not an Excel workbook (.xlsx): it is not a zip archive. Save it as .xlsx or CSV and upload that.",
    );
    const empty = file("xlsx");
    writeFileSync(empty, "");
    expect((await refusal(empty)).code).toBe("bad_request:upload");
  });

  it("refuses an OpenDocument spreadsheet, naming it", async () => {
    const src = zipWith([
      {
        name: "mimetype",
        data: Buffer.from("application/vnd.oasis.opendocument.spreadsheet"),
        method: "stored",
      },
      { name: "content.xml", data: Buffer.from("<office:document-content/>") },
    ]);
    const err = await refusal(src);
    expect(err.code).toBe("bad_request:upload");
    expect(err.message).toMatch(/OpenDocument spreadsheet \(\.ods\).*save it as \.xlsx or CSV/);
  });

  it("refuses a zip that is not a workbook, and a damaged one", async () => {
    const other = zipWith([{ name: "readme.txt", data: Buffer.from("hello") }]);
    expect((await refusal(other)).message).toMatch(
      /^The file is not an Excel workbook \(\.xlsx\): it has no xl\/workbook\.xml/,
    );
    const good = file("xlsx");
    writeXlsx(good, twoSheets);
    const cut = file("xlsx");
    writeFileSync(cut, readFileSync(good).subarray(0, 400));
    expect((await refusal(cut)).message).toMatch(
      /^The file is not an Excel workbook \(\.xlsx\): its zip structure is damaged/,
    );
  });

  it("refuses malformed sheet XML", async () => {
    const src = zipWith(
      alter(twoSheets, "xl/worksheets/sheet1.xml", (xml) => xml.replace("</sheetData>", "")),
    );
    expect((await refusal(src)).message).toMatch(/xl\/worksheets\/sheet1\.xml is not well-formed XML/);
  });
});

describe("xlsxToCsv: bombs", () => {
  it("refuses an entry whose honest size is over ten times the limit before inflating any of it", async () => {
    const entries = workbookEntries(twoSheets).filter((e) => e.name !== "xl/worksheets/sheet1.xml");
    const src = zipWith([...entries, zerosEntry("xl/worksheets/sheet1.xml", 200)]);
    const err = await refusal(src, 1 * MB);
    expect(err.code).toBe("payload_too_large:upload");
    expect(err.message).toMatch(
      /^The workbook inflates to more than 10 MB \(xl\/worksheets\/sheet1\.xml alone is 200 MB\)/,
    );

    const zip = await WorkbookZip.open(src, 1 * MB);
    try {
      await expect(zip.readText("xl/worksheets/sheet1.xml", () => undefined)).rejects.toThrow(
        /inflates to more than/,
      );
      expect(zip.bytesInflated).toBe(0);
    } finally {
      zip.close();
    }
  });

  it("refuses an entry that compresses more than 200:1 even within the size limit, before inflating it", async () => {
    const entries = workbookEntries(twoSheets).filter((e) => e.name !== "xl/sharedStrings.xml");
    const src = zipWith([...entries, zerosEntry("xl/sharedStrings.xml", 20)]);
    const err = await refusal(src, 100 * MB);
    expect(err.code).toBe("payload_too_large:upload");
    expect(err.message).toMatch(/xl\/sharedStrings\.xml inflates from \d+ KB to 20 MB, more than 200 times/);

    const zip = await WorkbookZip.open(src, 100 * MB);
    try {
      await expect(zip.readText("xl/sharedStrings.xml", () => undefined)).rejects.toThrow(
        /more than 200 times/,
      );
      expect(zip.bytesInflated).toBe(0);
    } finally {
      zip.close();
    }
  });

  it("refuses the parts needed when together they inflate past the limit", async () => {
    const big = "x".repeat(400 * 1024);
    const spec: XlsxSpec = { sheets: [{ name: "S", rows: [["a"], [big], [{ inline: big }]] }] };
    const src = file("xlsx");
    writeXlsx(src, spec);
    // The shared strings and the sheet (400 KB each) each fit in 10 × 70 KB; together they do not.
    const err = await refusal(src, 70 * 1024);
    expect(err.code).toBe("payload_too_large:upload");
    expect(err.message).toBe(
      "The workbook inflates to more than 700 KB in the parts needed; save the sheet you need as CSV and upload that.",
    );
    expect(await readFile(src, { maxBytes: 90 * 1024 })).toMatchObject({ cells: [["a"], [big], [big]] });
  });

  it("refuses a sheet whose used range would pad out to more than the limit", async () => {
    const rows: XlsxSpec["sheets"][0]["rows"] = [
      ["a"],
      ...Array.from({ length: 1998 }, () => []),
      [...Array(25).fill(null), "z"],
    ];
    const src = file("xlsx");
    writeXlsx(src, { sheets: [{ name: "Wide", rows }] });
    const err = await refusal(src, 4 * 1024);
    expect(err.code).toBe("payload_too_large:upload");
    expect(err.message).toMatch(
      /^The workbook inflates to more than 40 KB as a table \(sheet "Wide" spans 2000 rows × 26 columns\)/,
    );
    const out = await readFile(src, { maxBytes: 10 * 1024 });
    expect(out.cells).toHaveLength(2000);
    expect(out.cells.every((row) => row.length === 26)).toBe(true);
    expect(out.cells[1999]![25]).toBe("z");
  });

  it("stops inflating an entry that lies about its size, as soon as it passes the declared size", async () => {
    const entries = workbookEntries(twoSheets).filter((e) => e.name !== "xl/worksheets/sheet1.xml");
    const src = zipWith([...entries, zerosEntry("xl/worksheets/sheet1.xml", 200, 1000)]);
    const err = await refusal(src);
    expect(err.code).toBe("bad_request:upload");
    expect(err.message).toMatch(/xl\/worksheets\/sheet1\.xml holds more data than its zip header declares/);

    const zip = await WorkbookZip.open(src, 10 * MB);
    try {
      await expect(zip.readText("xl/worksheets/sheet1.xml", () => undefined)).rejects.toThrow(
        /more data than/,
      );
      expect(zip.bytesInflated).toBeLessThanOrEqual(1000);
    } finally {
      zip.close();
    }
  });

  it("refuses a DOCTYPE (no entity is ever expanded), in any part it reads", async () => {
    const laughs =
      '<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>';
    const inStrings = zipWith(
      alter(twoSheets, "xl/sharedStrings.xml", (xml) =>
        xml.replace("<sst", `${laughs}<sst`).replace("month", "&lol2;"),
      ),
    );
    const err = await refusal(inStrings);
    expect(err.code).toBe("bad_request:upload");
    expect(err.message).toMatch(/xl\/sharedStrings\.xml declares a DOCTYPE/);
    const inSheet = zipWith(
      alter(twoSheets, "xl/worksheets/sheet1.xml", (xml) =>
        xml.replace("<worksheet", '<!DOCTYPE worksheet SYSTEM "x.dtd"><worksheet'),
      ),
    );
    expect((await refusal(inSheet)).message).toMatch(/sheet1\.xml declares a DOCTYPE/);
  });

  it("refuses a zip with more than 2,000 entries without reading them", async () => {
    const many = Array.from({ length: 2001 }, (_, i) => ({
      name: `xl/media/m${i}.bin`,
      data: Buffer.from("x"),
      method: "stored" as const,
    }));
    const src = zipWith([...workbookEntries(twoSheets), ...many]);
    const err = await refusal(src);
    expect(err.code).toBe("bad_request:upload");
    expect(err.message).toMatch(/it has 2009 parts; a workbook has far fewer than 2,000\./);
  });

  it("closes the zip file after every refusal and every success", async () => {
    const fds = () => readdirSync("/proc/self/fd").length;
    const bomb = zipWith([
      ...workbookEntries(twoSheets).filter((e) => e.name !== "xl/worksheets/sheet1.xml"),
      zerosEntry("xl/worksheets/sheet1.xml", 200, 1000),
    ]);
    const formula = file("xlsx");
    writeXlsx(formula, { sheets: [{ name: "S", rows: [["a"], [{ formula: "1+1" }]] }] });
    const good = file("xlsx");
    writeXlsx(good, twoSheets);
    const before = fds();
    for (let i = 0; i < 5; i++) {
      await refusal(bomb);
      await refusal(formula);
      await refusal(good, 10 * MB, "nope");
      await readFile(good);
    }
    // yauzl closes its descriptor once the last stream on it ends, which is a moment after the refusal.
    await expect.poll(fds).toBeLessThanOrEqual(before);
  });
});

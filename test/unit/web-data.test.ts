import { describe, expect, it } from "vitest";
import { columnKind, toNumber } from "../../functions/src/contract/chart/columns";
import { csvFileName, toCsv } from "../../web/src/data/csv";
import { nextSort, paginate, sortRows } from "../../web/src/data/table";
import { errorInWords, formatBytes, parseApiError } from "../../web/src/data/format";
import type { ColumnInfo, Row } from "../../functions/src/contract/events";
import { parseCsv } from "../support/csv";

describe("columnKind and toNumber", () => {
  it.each([
    ["INT64", "quantitative"],
    ["NUMERIC", "quantitative"],
    ["DECIMAL(18,3)", "quantitative"],
    ["double", "quantitative"],
    ["DATE", "temporal"],
    ["TIMESTAMP WITH TIME ZONE", "temporal"],
    ["STRING", "nominal"],
    ["VARCHAR", "nominal"],
    ["BOOLEAN", "nominal"],
    ["STRUCT<a INT64>", "other"],
    ["BYTES", "other"],
  ])("%s is %s", (type, kind) => {
    expect(columnKind({ type })).toBe(kind);
  });

  it("a REPEATED column is not charted or compared as a number", () => {
    expect(columnKind({ type: "INT64", mode: "REPEATED" })).toBe("other");
  });

  it("reads numeric strings (INT64 beyond 2^53, NUMERIC) and rejects the rest", () => {
    expect(toNumber("9007199254740993")).toBe(9007199254740992);
    expect(toNumber("-12.5")).toBe(-12.5);
    expect(toNumber("1e3")).toBe(1000);
    expect(toNumber(3)).toBe(3);
    expect(toNumber("12 apples")).toBeNull();
    expect(toNumber("")).toBeNull();
    expect(toNumber(null)).toBeNull();
    expect(toNumber(Number.NaN)).toBeNull();
  });
});

describe("toCsv", () => {
  const columns = [{ name: "name" }, { name: "note" }, { name: "n" }];

  it("round-trips commas, quotes, line breaks, nulls, objects and unicode", () => {
    const rows: Row[] = [
      { name: "Ada, Countess", note: 'says "hi"', n: 1 },
      { name: "multi\nline", note: null, n: -2.5 },
      { name: "Zoë 🚀", note: { a: [1, 2] }, n: "12345678901234567890" },
    ];
    const parsed = parseCsv(toCsv(columns, rows));
    expect(parsed).toEqual([
      ["name", "note", "n"],
      ["Ada, Countess", 'says "hi"', "1"],
      ["multi\nline", "", "-2.5"],
      ["Zoë 🚀", '{"a":[1,2]}', "12345678901234567890"],
    ]);
  });

  it("defuses text that a spreadsheet would run as a formula, but not negative numbers", () => {
    const parsed = parseCsv(
      toCsv([{ name: "v" }], [{ v: "=HYPERLINK(1)" }, { v: "@SUM(A1)" }, { v: "-42" }, { v: -7 }]),
    );
    expect(parsed.slice(1).map((r) => r[0])).toEqual(["'=HYPERLINK(1)", "'@SUM(A1)", "-42", "-7"]);
  });

  it("writes the header even with no rows, and one line per row", () => {
    expect(toCsv(columns, [])).toBe("name,note,n\r\n");
    const many = Array.from({ length: 250 }, (_, i) => ({ name: `r${i}`, note: "", n: i }));
    expect(parseCsv(toCsv(columns, many))).toHaveLength(251);
  });

  it("names the file after the question", () => {
    expect(csvFileName("Revenue by month, 2024?", new Date("2025-03-04T10:00:00Z"))).toBe(
      "revenue-by-month-2024-2025-03-04.csv",
    );
    expect(csvFileName("???", new Date("2025-03-04T10:00:00Z"))).toBe("result-2025-03-04.csv");
  });
});

describe("sortRows, nextSort, paginate", () => {
  const columns: ColumnInfo[] = [
    { name: "city", type: "STRING" },
    { name: "total", type: "INT64" },
    { name: "day", type: "DATE" },
  ];
  const rows: Row[] = [
    { city: "b2", total: "9007199254740993", day: "2024-03-01" },
    { city: "B10", total: 5, day: null },
    { city: "a", total: null, day: "2024-01-15" },
    { city: "c", total: -3, day: "2023-12-31" },
  ];

  it("sorts numbers numerically (numeric strings too), empty cells last either way", () => {
    const asc = sortRows(rows, columns, { column: "total", direction: "ascending" }).map((r) => r.total);
    expect(asc).toEqual([-3, 5, "9007199254740993", null]);
    const desc = sortRows(rows, columns, { column: "total", direction: "descending" }).map((r) => r.total);
    expect(desc).toEqual(["9007199254740993", 5, -3, null]);
  });

  it("sorts text naturally and case-insensitively, dates chronologically", () => {
    expect(sortRows(rows, columns, { column: "city", direction: "ascending" }).map((r) => r.city)).toEqual([
      "a",
      "b2",
      "B10",
      "c",
    ]);
    expect(sortRows(rows, columns, { column: "day", direction: "ascending" }).map((r) => r.day)).toEqual([
      "2023-12-31",
      "2024-01-15",
      "2024-03-01",
      null,
    ]);
  });

  it("keeps the original order of ties and does not mutate the input", () => {
    const tied: Row[] = [
      { k: 1, id: "x" },
      { k: 1, id: "y" },
      { k: 0, id: "z" },
    ];
    const cols: ColumnInfo[] = [{ name: "k", type: "INT64" }];
    expect(sortRows(tied, cols, { column: "k", direction: "descending" }).map((r) => r.id)).toEqual([
      "x",
      "y",
      "z",
    ]);
    expect(tied.map((r) => r.id)).toEqual(["x", "y", "z"]);
  });

  it("cycles ascending → descending → unsorted, and restarts on another column", () => {
    const s1 = nextSort(null, "a");
    const s2 = nextSort(s1, "a");
    expect(s1).toEqual({ column: "a", direction: "ascending" });
    expect(s2).toEqual({ column: "a", direction: "descending" });
    expect(nextSort(s2, "a")).toBeNull();
    expect(nextSort(s2, "b")).toEqual({ column: "b", direction: "ascending" });
  });

  it("pages rows and clamps out-of-range pages", () => {
    const many = Array.from({ length: 23 }, (_, i) => ({ i }));
    const p = paginate(many, 2, 10);
    expect(p).toMatchObject({ page: 2, pageCount: 3, from: 21, to: 23, total: 23 });
    expect(p.rows.map((r) => r.i)).toEqual([20, 21, 22]);
    expect(paginate(many, 99, 10).page).toBe(2);
    expect(paginate(many, -1, 10).from).toBe(1);
    expect(paginate([], 0, 10)).toMatchObject({ page: 0, pageCount: 1, from: 0, to: 0 });
  });
});

describe("formatBytes and errors in words", () => {
  it("uses binary units", () => {
    expect(formatBytes(0)).toBe("0 B");
    expect(formatBytes(1023)).toBe("1023 B");
    expect(formatBytes(1536)).toBe("1.50 KiB");
    expect(formatBytes(10 * 1024 ** 2)).toBe("10.0 MiB");
    expect(formatBytes(1.5 * 1024 ** 4)).toBe("1.50 TiB");
    expect(formatBytes(undefined)).toBe("—");
  });

  it("reads the API's JSON error body out of an SDK HTTPError", () => {
    const err = Object.assign(
      new Error('HTTP 409: {"error":"conflict:run","message":"A run is in progress."}'),
      {
        status: 409,
      },
    );
    expect(parseApiError(err)).toEqual({
      status: 409,
      code: "conflict:run",
      message: "A run is in progress.",
    });
  });

  it("says what to do for each kind of failure", () => {
    const http = (status: number, body: object) =>
      Object.assign(new Error(`HTTP ${status}: ${JSON.stringify(body)}`), { status });
    expect(errorInWords(http(401, { error: "unauthorized:token", message: "expired" }))).toMatch(
      /sign in again/i,
    );
    expect(errorInWords(http(409, { error: "conflict:run", message: "busy" }))).toMatch(/press Stop/);
    expect(errorInWords(http(404, { error: "not_found:thread", message: "x" }))).toMatch(/Start a new one/);
    expect(errorInWords(http(400, { error: "bad_request:body", message: "content must not be empty" }))).toBe(
      "content must not be empty",
    );
    expect(errorInWords(new TypeError("Failed to fetch"))).toMatch(/could not be reached/);
    expect(errorInWords({ error: "internal", message: "Internal error." })).toMatch(/Try again/);
    expect(
      errorInWords({ error: "model:unavailable", message: "The model is overloaded; try again shortly." }),
    ).toBe("The model is overloaded; try again shortly.");
    // A model message that mentions the network or a quota is still the model's, shown as it is.
    const network =
      "Quarry could not reach Gemini Developer API. Check the network connection, then ask again.";
    expect(errorInWords({ error: "model:network", message: network })).toBe(network);
    const quota = "Gemini Developer API says the quota for gemini-2.5-flash is used up. Wait a minute.";
    expect(errorInWords({ error: "model:quota", message: quota })).toBe(quota);
    // A person's own quota (429 at run start): the server's message says what was used, the limit and when.
    const mine = "You have asked 1 questions in the last minute; the limit is 1. Ask again in 42 s.";
    expect(errorInWords(http(429, { error: "quota:questions", message: mine }))).toBe(mine);
    // A 429 without a worded code is still advice.
    expect(errorInWords(http(429, { message: "" }))).toMatch(/Wait a minute/);
  });
});

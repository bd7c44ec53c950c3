/**
 * Appending a verified query to a context file's text (approve, `npm run feedback -- export`): the
 * rest of the file stays byte for byte as it was, so the change to review and commit is the new
 * entry alone; where an insertion as text would read differently, the file is written out again.
 */
import { describe, it, expect } from "vitest";
import { readFileSync } from "node:fs";
import path from "node:path";
import { parseContextFile } from "../../functions/src/context/authored";
import { appendVerifiedQuery } from "../../functions/src/context/proposals";

const entry = {
  question: "How many customers are there?",
  sql: "SELECT COUNT(*) AS customers FROM shop.customers",
};
const queries = (text: string) => parseContextFile(text, "test.yaml").context.verified_queries;

describe("appendVerifiedQuery", () => {
  it("adds the entry after the last one of the shipped file, leaving every other byte alone", () => {
    const shipped = readFileSync(path.resolve(__dirname, "../../functions/context/shop.yaml"), "utf8");
    const after = appendVerifiedQuery(shipped, entry);
    expect(after).toBe(`${shipped.trimEnd()}\n  - question: ${entry.question}\n    sql: ${entry.sql}\n`);
    expect(queries(after)).toEqual([...queries(shipped), entry]);
  });

  it("keeps what follows the list (other keys, comments) and matches the list's indentation", () => {
    const text =
      "dataset: x\nverified_queries:\n- question: a\n  sql: SELECT 1 # one\n# the end of the examples\nrules: []\n";
    expect(appendVerifiedQuery(text, { question: "b", sql: "SELECT 2" })).toBe(
      "dataset: x\nverified_queries:\n- question: a\n  sql: SELECT 1 # one\n- question: b\n  sql: SELECT 2\n# the end of the examples\nrules: []\n",
    );
  });

  it("writes multi-line SQL as a block that reads back the same", () => {
    const text = "dataset: x\nverified_queries:\n  - question: a\n    sql: SELECT 1\n";
    const sql = "SELECT a,\n  b\nFROM t";
    expect(queries(appendVerifiedQuery(text, { question: "q", sql }))).toEqual([
      { question: "a", sql: "SELECT 1" },
      { question: "q", sql },
    ]);
  });

  it.each([
    ["no list yet", "dataset: x\n"],
    ["an empty flow list", "dataset: x\nverified_queries: []\n"],
    [
      "a last value that keeps its trailing blank lines",
      "dataset: x\nverified_queries:\n  - question: a\n    sql: |+\n      SELECT 1\n\n",
    ],
  ])("with %s, writes the file out again with the entry", (_label, text) => {
    const before = queries(text);
    expect(queries(appendVerifiedQuery(text, entry))).toEqual([...before, entry]);
  });
});

/**
 * The second dataset of the test stacks: `finance.salaries`, a CSV beside the sample's `shop`
 * (QUARRY_DUCKDB_FILES). Its names and values are distinctive, so a test can tell for certain that
 * none of them reached a prompt, a tool result or a page of a person who may not see it.
 */
import path from "node:path";

export const FINANCE_SALARIES_CSV = path.resolve(__dirname, "../fixtures/salaries.csv");

/** Words that only `finance.salaries` holds: its name, columns and stored values. */
export const FINANCE_WORDS = ["finance", "salaries", "salary", "grade", "Principal", "Quentin", "Ysolde"];

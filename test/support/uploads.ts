/**
 * Data for the files-as-tables tests: a CSV of 2025's monthly revenue targets, and our own DuckDB
 * join of it with the sample warehouse — what Quarry's answer to "revenue against target by month
 * in 2025" must equal, computed here independently of Quarry's upload path.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { ensureSampleDb } from "../../functions/src/tools/duckdb/sample-db";
import { createNormalizer } from "../../functions/src/tools/duckdb/values";

/** Twelve months of 2025 with a revenue target each. */
export const TARGETS_CSV =
  "month,target\n" +
  Array.from({ length: 12 }, (_, i) => `2025-${String(i + 1).padStart(2, "0")},${550_000 + i * 10_000}`).join(
    "\n",
  ) +
  "\n";

/** The targets joined with 2025's revenue by month, as JSON rows (month, revenue, target). */
export async function ownJoin(csv: string): Promise<Record<string, unknown>[]> {
  const duck = await import("@duckdb/node-api");
  const dir = await mkdtemp(path.join(os.tmpdir(), "own-join-"));
  const instance = await duck.DuckDBInstance.create(":memory:");
  try {
    const file = path.join(dir, "targets.csv");
    await writeFile(file, csv);
    const conn = await instance.connect();
    await conn.run(`ATTACH '${await ensureSampleDb()}' AS shop (READ_ONLY)`);
    const res = await conn.runAndReadAll(
      `WITH t AS (SELECT * FROM read_csv('${file}', header = true, columns = {'month': 'VARCHAR', 'target': 'BIGINT'})),
       r AS (SELECT strftime(o.order_date, '%Y-%m') AS month, ROUND(SUM(oi.quantity * oi.unit_price), 2) AS revenue
             FROM shop.orders o JOIN shop.order_items oi ON oi.order_id = o.order_id
             WHERE o.status NOT IN ('cancelled', 'returned') AND extract(year FROM o.order_date) = 2025 GROUP BY 1)
       SELECT t.month, r.revenue, t.target FROM t LEFT JOIN r ON r.month = t.month ORDER BY t.month`,
    );
    const norm = createNormalizer(duck);
    const names = res.columnNames();
    conn.closeSync();
    return res.getRows().map((row) => Object.fromEntries(row.map((v, i) => [names[i], norm(v)])));
  } finally {
    instance.closeSync();
    await rm(dir, { recursive: true, force: true });
  }
}

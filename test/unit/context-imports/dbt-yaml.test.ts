/**
 * A held-out dbt project from another domain, imported from its YAML (no artifacts): MetricFlow's
 * own tutorial (test/fixtures/dbt/metricflow-tutorial, Apache-2.0), its public seeds loaded into
 * real DuckDB as its models' tables. Each metric's numbers against SQL written by hand for its
 * definition, a filter two entities away included.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync, cpSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { importDbtProject } from "../../../functions/src/context/imports/project";
import type { ImportedLayer } from "../../../functions/src/context/imports/types";
import { closeWarehouses, getWarehouse } from "../../../functions/src/tools";
import type { Warehouse } from "../../../functions/src/tools/types";
import { testConfig } from "../agent/harness";
import { firstNumber } from "./jaffle";

const TUTORIAL = path.resolve(__dirname, "../../fixtures/dbt/metricflow-tutorial");
const FILES = ["transactions", "customers", "countries"]
  .map((t) => `tutorial.${t}=${path.join(TUTORIAL, "seeds", `${t}_seed.csv`)}`)
  .join(",");

let warehouse: Warehouse;
let layer: ImportedLayer;
beforeAll(async () => {
  warehouse = await getWarehouse(testConfig({ QUARRY_DUCKDB_FILES: FILES }).warehouse);
  layer = await importDbtProject(TUTORIAL, warehouse, { dataset: "tutorial" });
}, 60_000);
afterAll(() => closeWarehouses());

const one = (sql: string) => firstNumber(warehouse, sql);
const sqlOf = (name: string) => {
  const m = layer.metrics.find((x) => x.name === name);
  if (!m?.sql) throw new Error(`${name}: ${m?.noSql ?? "not imported"}`);
  return m.sql;
};
const T = "tutorial.transactions";

describe("a dbt project read from its YAML (MetricFlow's tutorial)", () => {
  it("finds its three models in the dataset named, with their semantic models' joins", () => {
    expect(layer.project).toBe("mf_tutorial_project");
    expect(layer.tables).toEqual([]); // the tutorial documents no models: its context is the semantic layer
    expect(
      layer.joins.map((j) => `${j.from.table}.${j.from.column}>${j.to.table}.${j.to.column}`).sort(),
    ).toEqual([
      "tutorial.customers.country>tutorial.countries.country",
      "tutorial.transactions.id_customer>tutorial.customers.id_customer",
    ]);
    expect(layer.metrics.find((m) => m.name === "cancellations_mx")!.origin).toEqual({
      id: "metric.mf_tutorial_project.cancellations_mx",
      file: "models/metrics.yml",
    });
  });

  it("simple metrics: a count as SUM(1), SUM_BOOLEAN, an expression", async () => {
    expect(await one(sqlOf("transactions"))).toBe(await one(`SELECT COUNT(*) FROM ${T}`));
    expect(await one(sqlOf("quick_buy_transactions"))).toBe(
      await one(`SELECT COUNT(*) FROM ${T} WHERE transaction_type_name = 'quick-buy'`),
    );
    expect(await one(sqlOf("cancellations"))).toBeCloseTo(
      await one(`SELECT SUM(transaction_amount_usd) FROM ${T} WHERE transaction_type_name = 'cancellation'`),
      6,
    );
  });

  it("the ratio and the derived metric", async () => {
    const amount = await one(`SELECT SUM(transaction_amount_usd) FROM ${T}`);
    const cancelled = await one(
      `SELECT SUM(transaction_amount_usd) FROM ${T} WHERE transaction_type_name = 'cancellation'`,
    );
    const altered = await one(
      `SELECT SUM(transaction_amount_usd) FROM ${T} WHERE transaction_type_name = 'alteration'`,
    );
    expect(await one(sqlOf("cancellation_rate"))).toBeCloseTo(cancelled / amount, 9);
    expect(await one(sqlOf("revenue_usd"))).toBeCloseTo(amount - cancelled + altered, 6);
  });

  it("filters one entity away (the customer's country) and two (the country's region, through the customer)", async () => {
    expect(await one(sqlOf("cancellations_mx"))).toBeCloseTo(
      await one(
        `SELECT SUM(t.transaction_amount_usd) FROM ${T} t JOIN tutorial.customers c USING (id_customer)
         WHERE t.transaction_type_name = 'cancellation' AND c.country = 'MX'`,
      ),
      6,
    );
    const na = await one(
      `SELECT SUM(t.transaction_amount_usd) FROM ${T} t JOIN tutorial.customers c USING (id_customer)
       JOIN tutorial.countries k ON k.country = c.country WHERE k.region = 'NA'`,
    );
    expect(await one(sqlOf("transaction_usd_na"))).toBeCloseTo(na, 6);
    expect(na).toBeLessThan(await one(`SELECT SUM(transaction_amount_usd) FROM ${T}`));
  });

  it("imports the cumulative metrics without SQL, saying why, and proposes the saved queries", () => {
    expect(layer.metrics.find((m) => m.name === "cumulative_transactions")!.noSql).toMatch(/cumulative/);
    expect(layer.queries.map((q) => [q.name, q.question])).toEqual([
      ["core_transaction_metrics", "Important transaction metrics."],
      ["cumulative_transaction_metrics", "Cumulative metrics related to transactions."],
    ]);
  });

  it("without --dataset, says the YAML does not name where the models are built", async () => {
    const bare = await importDbtProject(TUTORIAL, warehouse);
    expect(bare.metrics.filter((m) => m.sql)).toEqual([]);
    expect(bare.metrics.find((m) => m.name === "transactions")!.noSql).toBe(
      'its semantic model "transactions" has no table in the warehouse (its YAML does not say the dataset: name it with --dataset)',
    );
  });

  it("a YAML syntax error is refused naming the file and line", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "quarry-dbt-yaml-"));
    try {
      cpSync(TUTORIAL, dir, { recursive: true });
      const file = path.join(dir, "models/metrics.yml");
      writeFileSync(
        file,
        readFileSync(file, "utf8").replace("  - name: cancellation_rate\n", "  - name: [cancellation_rate\n"),
      );
      const err = await importDbtProject(dir, warehouse, { dataset: "tutorial" }).catch((e: unknown) => e);
      expect((err as Error).message).toMatch(/^models\/metrics\.yml:\d+: not valid YAML/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

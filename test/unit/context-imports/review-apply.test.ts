/**
 * A re-import reviewed and applied item by item (imports/apply.ts), a project pushed as files
 * (imports/pushed.ts, the API's way in), and the live context taking an applied import without a
 * restart (context/live.ts). Real DuckDB and the real public fixture, changed as a team would.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildCatalog, CatalogCache, loadContextFiles } from "../../../functions/src/context";
import { applyChanges, StaleReviewError } from "../../../functions/src/context/imports/apply";
import { diffImports } from "../../../functions/src/context/imports/diff";
import { ImportError } from "../../../functions/src/context/imports/errors";
import { importDbtProject } from "../../../functions/src/context/imports/project";
import { importPushedProject } from "../../../functions/src/context/imports/pushed";
import type { ImportedLayer } from "../../../functions/src/context/imports/types";
import { LiveContext } from "../../../functions/src/context/live";
import { closeWarehouses, getWarehouse } from "../../../functions/src/tools";
import type { Warehouse } from "../../../functions/src/tools/types";
import { testConfig } from "../agent/harness";
import { JAFFLE, MAP, changedJaffle, jaffleFiles } from "./jaffle";

let warehouse: Warehouse;
let before: ImportedLayer;
let after: ImportedLayer;
let tmp: string;

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), "quarry-review-"));
  warehouse = await getWarehouse(testConfig({ QUARRY_DUCKDB_FILES: jaffleFiles() }).warehouse);
  before = await importDbtProject(JAFFLE, warehouse, { map: MAP });
  const changed = await changedJaffle(tmp);
  after = await importDbtProject(changed.project, changed.warehouse, { map: MAP });
}, 60_000);
afterAll(async () => {
  rmSync(tmp, { recursive: true, force: true });
  await closeWarehouses();
});

const metric = (l: ImportedLayer, name: string) => l.metrics.find((m) => m.name === name)!;
const ordersColumns = (l: ImportedLayer) =>
  l.tables.find((t) => t.table === "jaffle.orders")!.columns.map((c) => c.name);

describe("applying a re-import's diff item by item", () => {
  it("takes only the changes picked; the rest stay to review, and applying them too gives the pushed layer", () => {
    const changes = diffImports(before, after);
    expect(changes.map((c) => c.id).sort()).toEqual([
      "column renamed:jaffle.orders.order_cost",
      "metric broken:order_cost",
      "metric broken:order_gross_profit",
      "metric changed:large_orders",
    ]);

    const first = applyChanges(before, after, ["metric changed:large_orders"]);
    expect(first.applied.map((c) => c.id)).toEqual(["metric changed:large_orders"]);
    expect(metric(first.layer, "large_orders").sql).toMatch(/>= 50/);
    // Not picked: the column keeps its old name and order_cost keeps its working SQL.
    expect(ordersColumns(first.layer)).toContain("order_cost");
    expect(ordersColumns(first.layer)).not.toContain("order_cost_usd");
    expect(metric(first.layer, "order_cost").sql).toBe(metric(before, "order_cost").sql);
    expect(first.left.map((c) => c.id).sort()).toEqual([
      "column renamed:jaffle.orders.order_cost",
      "metric broken:order_cost",
      "metric broken:order_gross_profit",
    ]);
    expect(first.layer.checksum).toBe(`partial:${after.checksum}`);

    const rest = applyChanges(
      first.layer,
      after,
      first.left.map((c) => c.id),
    );
    expect(rest.left).toEqual([]);
    expect(rest.layer).toEqual(after);
    expect(diffImports(rest.layer, after)).toEqual([]);
  });

  it("applies the whole diff when no change is named, and a first import as every table and metric added", () => {
    expect(applyChanges(before, after).layer).toEqual(after);
    const first = applyChanges(undefined, before, ["table added:jaffle.orders", "metric added:order_total"]);
    expect(first.layer.tables.map((t) => t.table)).toEqual(["jaffle.orders"]);
    expect(first.layer.metrics.map((m) => m.name)).toEqual(["order_total"]);
    expect(first.left.length).toBe(diffImports(undefined, before).length - 2);
  });

  it("refuses a change that is not of this diff (a review of another push)", () => {
    expect(() => applyChanges(before, after, ["metric changed:revenue_of_mars"])).toThrow(StaleReviewError);
    expect(() => applyChanges(before, after, ["metric changed:revenue_of_mars"])).toThrow(
      /reload the review/,
    );
  });
});

/** The fixture's artifacts as the API's body has them: path → text. */
function artifactFiles(): Record<string, string> {
  const target = path.join(JAFFLE, "target");
  return Object.fromEntries(
    readdirSync(target)
      .filter((f) => f.endsWith(".json"))
      .map((f) => [`target/${f}`, readFileSync(path.join(target, f), "utf8")]),
  );
}

describe("a project pushed as files", () => {
  it("imports as the same folder on disk does", async () => {
    const pushed = await importPushedProject({ source: "dbt", files: artifactFiles(), map: MAP }, warehouse);
    expect(pushed).toEqual(before);
  });

  it("refuses a truncated manifest naming the file as sent, and a path that leaves the project", async () => {
    const files = artifactFiles();
    files["target/manifest.json"] = files["target/manifest.json"].slice(0, 5_000);
    const refused = importPushedProject({ source: "dbt", files, map: MAP }, warehouse);
    await expect(refused).rejects.toThrow(ImportError);
    await expect(refused).rejects.toThrow(/^target\/manifest\.json/);
    await expect(
      importPushedProject({ source: "dbt", files: { "../../etc/x.json": "{}" } }, warehouse),
    ).rejects.toThrow(/is not a path inside the project/);
    await expect(
      importPushedProject({ source: "lookml", files: { "/etc/passwd.lkml": "" } }, warehouse),
    ).rejects.toThrow(/is not a path inside the project/);
  });
});

describe("the live context", () => {
  it("takes an import applied since start-up when the stored version changes, and keeps it while it does not", async () => {
    const files = await loadContextFiles(path.join(tmp, "no-context"), warehouse);
    let stored = { version: "", layers: [] as ImportedLayer[] };
    let reads = 0;
    const catalogs: CatalogCache[] = [];
    const live = new LiveContext(
      files,
      warehouse,
      (k) => {
        const c = new CatalogCache(() => buildCatalog(warehouse, k.allNotes(), { joins: k.declaredJoins() }));
        catalogs.push(c);
        return c;
      },
      () => {
        reads++;
        return Promise.resolve(stored);
      },
    );
    const empty = await live.current();
    expect(empty.knowledge.forQuestion("what is the order total?").glossary).toEqual([]);

    stored = { version: "dbt-jaffle_shop=v1", layers: [before] };
    const now = await live.current();
    const terms = now.knowledge.forQuestion("what is the order total?").glossary.map((g) => g.term);
    expect(terms).toContain("order total");
    expect(now.knowledge.declaredJoins().length).toBeGreaterThan(0);
    // Same version: the same knowledge, not rebuilt.
    expect(await live.current()).toBe(now);
    expect(catalogs).toHaveLength(2);
    expect(reads).toBe(3);
  });

  it("serves the last context when the stored imports cannot be read", async () => {
    const files = await loadContextFiles(path.join(tmp, "no-context"), warehouse);
    let fail = false;
    const live = new LiveContext(
      files,
      warehouse,
      (k) => new CatalogCache(() => buildCatalog(warehouse, k.allNotes())),
      () =>
        fail
          ? Promise.reject(new Error("Firestore unavailable"))
          : Promise.resolve({ version: "v1", layers: [before] }),
    );
    const first = await live.current();
    fail = true;
    expect(await live.current()).toBe(first);
  });
});

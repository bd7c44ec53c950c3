/**
 * Schema linking's join steps (functions/src/context/linking/joins.ts) on synthetic catalogs: how
 * far a table is from the chosen ones, the bridge between two parts when hundreds of tables share a
 * key, and linking over a person's scoped catalog (functions/src/context/scoped.ts).
 */
import { describe, expect, it } from "vitest";
import { linkSchema, type Catalog, type CatalogTable } from "../../functions/src/context";
import { joinDistance, tablesById, withBridges } from "../../functions/src/context/linking/joins";
import { scopedCatalog } from "../../functions/src/context/scoped";
import { limitedScope } from "../../functions/src/tools/scope";

const table = (id: string, keys: string[], extra: CatalogTable["columns"] = []): CatalogTable => ({
  id,
  rowCount: 1_000,
  columns: [...keys.map((name) => ({ name, type: "INTEGER" })), ...extra],
});

const shop = [
  table("shop.customers", ["customer_id"], [{ name: "country", type: "VARCHAR", values: ["DE", "FR"] }]),
  table("shop.orders", ["order_id", "customer_id"]),
  table("shop.order_items", ["order_id", "product_id"], [{ name: "line_total", type: "DECIMAL(10,2)" }]),
  table("shop.products", ["product_id"], [{ name: "category", type: "VARCHAR", values: ["Books", "Toys"] }]),
];

/** `n` tables in datasets of their own that all hold `customer_id` (and a key of their own). */
const sharers = (n: number) =>
  Array.from({ length: n }, (_, i) => table(`noise${i}.events`, ["event_id", "customer_id"]));

describe("join distance", () => {
  const catalog: Catalog = {
    tables: [
      ...shop,
      table("shop.regions", ["region_id"]),
      table("shop.stores", ["store_id"]),
      table("crm.accounts", ["customer_id", "region_id"]),
      table("crm.regions", ["region_id"]),
      table("hr.regions", ["region_id"]),
    ],
    builtAt: 0,
  };
  const byId = tablesById(catalog);
  const distance = joinDistance(catalog, [byId.get("shop.orders")!]);
  const at = (id: string) => distance(byId.get(id)!);

  it("is 0 for a chosen table and 1 for a table sharing a key with one", () => {
    expect(at("shop.orders")).toBe(0);
    expect([at("shop.customers"), at("shop.order_items"), at("crm.accounts")]).toEqual([1, 1, 1]);
  });

  it("is 2 through a table of the same dataset one join away, and Infinity otherwise", () => {
    expect(at("crm.regions")).toBe(2); // crm.accounts shares customer_id with orders, region_id with it
    expect(at("shop.regions")).toBe(Infinity); // no shop table one join away holds region_id
    expect(at("hr.regions")).toBe(Infinity); // hr has no table one join away
    expect(at("shop.stores")).toBe(Infinity);
  });
});

describe("bridging chosen tables", () => {
  it("joins two parts through the chosen tables' dataset while 2,000 other tables share a key", () => {
    const catalog: Catalog = { tables: [...sharers(2_000), ...shop], builtAt: 0 };
    const out = withBridges(catalog, ["shop.customers", "shop.products"], new Map());
    expect(out).toEqual(["shop.customers", "shop.products", "shop.order_items", "shop.orders"]);
  });
});

describe("linking a person's scoped catalog", () => {
  const copies = ["archive", "staging", "eu"].flatMap((ds) =>
    shop.map((t) => ({ ...t, id: t.id.replace(/^shop\./, `${ds}.`), rowCount: 50_000 })),
  );
  const catalog: Catalog = { tables: [...copies, ...sharers(20), ...shop], builtAt: 0 };

  it("gives only tables and values inside the scope, as linking those tables alone does", () => {
    const question = "Revenue from Books in DE by order";
    const scoped = linkSchema(scopedCatalog(catalog, limitedScope(["shop"])), question);
    expect(scoped.tables.map((t) => t.id).sort()).toEqual(shop.map((t) => t.id).sort());
    expect(scoped.values.map((v) => v.table)).toEqual(expect.arrayContaining(["shop.products"]));
    expect(scoped.values.every((v) => v.table.startsWith("shop."))).toBe(true);
    expect(scoped).toEqual(linkSchema({ ...catalog, tables: [...shop] }, question));
  });
});

/**
 * Schema linking (functions/src/context/linking/) and the catalog it reads: value matching on the
 * real sample catalog (DuckDB metadata and distinct values), and table choice among look-alikes on a
 * catalog too big to give whole.
 */
import { afterAll, describe, expect, it } from "vitest";
import {
  buildCatalog,
  linkSchema,
  renderLinkedTables,
  type Catalog,
  type CatalogTable,
} from "../../functions/src/context";
import { closeWarehouses, getWarehouse } from "../../functions/src/tools";
import { testConfig } from "./agent/harness";

afterAll(async () => {
  await closeWarehouses();
});

describe("the catalog of the sample warehouse", () => {
  it("has every table with columns, types, descriptions and the values of low-cardinality text columns", async () => {
    const catalog = await buildCatalog(await getWarehouse(testConfig().warehouse), {
      "shop.orders.status": "note",
    });
    expect(catalog.tables.map((t) => t.id).sort()).toEqual([
      "shop.customers",
      "shop.order_items",
      "shop.orders",
      "shop.products",
      "shop.web_events",
    ]);
    const orders = catalog.tables.find((t) => t.id === "shop.orders")!;
    expect(orders.rowCount).toBe(43_491);
    expect(orders.columns.find((c) => c.name === "status")).toEqual({
      name: "status",
      type: "VARCHAR",
      description: "note", // the authored note overrides the warehouse's
      values: ["cancelled", "delivered", "processing", "returned", "shipped"],
    });
    // High-cardinality text keeps no value list.
    expect(
      catalog.tables.find((t) => t.id === "shop.customers")!.columns.find((c) => c.name === "email")!.values,
    ).toBeUndefined();
    // The first test opens the DuckDB worker and reads every table: seconds on a loaded machine.
  }, 60_000);

  it("matches literals in the question to stored values", async () => {
    const catalog = await buildCatalog(await getWarehouse(testConfig().warehouse));
    const linked = linkSchema(catalog, "Revenue from Germany via paid search on the mobile app?");
    expect(linked.values.map((v) => `${v.text}→${v.table}.${v.column}=${v.value}`)).toEqual(
      expect.arrayContaining([
        "Germany→shop.customers.country=DE",
        "paid search→shop.web_events.traffic_source=paid_search",
        "mobile app→shop.orders.channel=mobile_app",
      ]),
    );
    expect(linked.all).toBe(true); // 5 tables: given whole
    expect(renderLinkedTables(catalog, linked).at(-1)).toMatch(
      /"Germany" is shop\.customers\.country = 'DE'/,
    );
  });
});

/** A catalog with the shop and look-alikes (copies, archives, other datasets) around it. */
function bigCatalog(): Catalog {
  const col = (name: string, type = "INTEGER", values?: string[]) => ({
    name,
    type,
    ...(values ? { values } : {}),
  });
  const shop: CatalogTable[] = [
    {
      id: "shop.orders",
      rowCount: 43_000,
      columns: [
        col("order_id"),
        col("customer_id"),
        col("status", "VARCHAR", ["cancelled", "delivered"]),
        col("order_date", "DATE"),
      ],
    },
    {
      id: "shop.order_items",
      rowCount: 100_000,
      columns: [col("order_id"), col("product_id"), col("line_total", "DECIMAL")],
    },
    {
      id: "shop.products",
      rowCount: 210,
      columns: [col("product_id"), col("category", "VARCHAR", ["Books", "Toys"]), col("name", "VARCHAR")],
    },
    {
      id: "shop.customers",
      rowCount: 6000,
      columns: [col("customer_id"), col("country", "VARCHAR", ["DE", "US"])],
    },
  ];
  const tables = [...shop];
  for (const ds of ["archive", "staging", "sales_eu", "legacy", "tmp"]) {
    for (const t of shop) {
      for (const suffix of ["", "_2019", "_raw"]) {
        tables.push({ ...t, id: `${ds}.${t.id.split(".")[1]}${suffix}`, rowCount: 50 });
      }
    }
  }
  return { tables, builtAt: Date.now() };
}

describe("linking on a catalog too big to give whole", () => {
  const catalog = bigCatalog();
  it("prefers the real tables over look-alikes and adds the table that joins the chosen ones", () => {
    const linked = linkSchema(catalog, "Revenue by product category", {
      hints: ["SUM(oi.line_total) FROM shop.order_items oi JOIN shop.orders o ON o.order_id = oi.order_id"],
    });
    expect(linked.all).toBe(false);
    const ids = linked.tables.map((t) => t.id);
    expect(ids).toEqual(expect.arrayContaining(["shop.products", "shop.order_items", "shop.orders"]));
    expect(ids.length).toBeLessThanOrEqual(8);
    expect(renderLinkedTables(catalog, linked).join("\n")).toMatch(/more tables are not shown: list_tables/);
  });

  it("bridges two chosen tables through the table that shares their keys", () => {
    const linked = linkSchema(catalog, "Which category do customers in Germany buy most?", { maxTables: 2 });
    const ids = linked.tables.map((t) => t.id);
    expect(ids).toEqual(expect.arrayContaining(["shop.customers", "shop.products"]));
    // customers —customer_id— orders —order_id— order_items —product_id— products
    expect(ids).toEqual(expect.arrayContaining(["shop.orders", "shop.order_items"]));
  });

  it("uses the conversation's earlier questions for a follow-up", () => {
    const alone = linkSchema(catalog, "and by country?").tables.map((t) => t.id);
    const followUp = linkSchema(catalog, "and by country?", {
      recent: ["Revenue by product category in shop"],
    }).tables.map((t) => t.id);
    expect(followUp).toContain("shop.products");
    expect(followUp.indexOf("shop.customers")).toBeGreaterThanOrEqual(0);
    expect(alone).not.toContain("shop.products");
  });
});

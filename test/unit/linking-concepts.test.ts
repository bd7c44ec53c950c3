/**
 * The column-vote and join-aware steps of schema linking (functions/src/context/linking/evidence.ts,
 * linking.ts, joins.ts) on small synthetic catalogs: how specific a column's term is across the
 * catalog, which of two look-alike `customers` tables a column concept resolves to (the one that
 * joins to the chosen `orders`), measures that bring their fact table and its header, the home
 * dataset of the authored context, and the join chain in the prompt.
 */
import { describe, expect, it } from "vitest";
import { linkSchema, renderLinkedTables, type Catalog, type CatalogTable } from "../../functions/src/context";
import { evidenceOf, questionTerms, specificity, votes } from "../../functions/src/context/linking/evidence";

const col = (name: string, type = "INTEGER", extra: { description?: string; values?: string[] } = {}) => ({
  name,
  type,
  ...extra,
});
const table = (id: string, rowCount: number, columns: CatalogTable["columns"]): CatalogTable => ({
  id,
  rowCount,
  columns,
});

/** Tables of other kinds that share `country` and `created_at`, so that the catalog is not given whole. */
function filler(n: number): CatalogTable[] {
  return Array.from({ length: n }, (_, i) =>
    table(`misc${i}.things`, 500, [
      col("thing_id"),
      col("country", "VARCHAR", { values: ["DE", "US"] }),
      col("created_at", "TIMESTAMP"),
    ]),
  );
}

/**
 * Orders in `sales`; two `customers` tables in other datasets with the same columns except the
 * key: `joined` has `customer_id` (it joins `sales.orders`), the other has `client_id` and more rows.
 */
function twoCustomers(joined: "a" | "b"): Catalog {
  const customers = (ds: "a" | "b") =>
    table(`${ds}.customers`, ds === joined ? 1_000 : 50_000, [
      col(ds === joined ? "customer_id" : "client_id"),
      col("country", "VARCHAR", { values: ["DE", "FR", "US"] }),
      col("segment", "VARCHAR", { values: ["business", "consumer"] }),
      col("signup_date", "DATE"),
    ]);
  return {
    tables: [
      table("sales.orders", 40_000, [
        col("order_id"),
        col("customer_id"),
        col("order_date", "DATE"),
        col("channel", "VARCHAR", { values: ["web", "mobile_app"] }),
      ]),
      customers("a"),
      customers("b"),
      ...filler(20),
    ],
    builtAt: 0,
  };
}

describe("column votes weighted by how specific a term is across the catalog", () => {
  const catalog = twoCustomers("a");
  const ev = evidenceOf(catalog);

  it("counts a column name held by many tables as weak evidence, a rare one as strong", () => {
    // `country` is in 22 tables, `signup_date` in 2 of the 23.
    expect(ev.df.get("country")).toBe(22);
    expect(ev.df.get("signup")).toBe(2);
    expect(specificity(ev, "signup")).toBeGreaterThan(3 * specificity(ev, "country"));
    const v = votes(ev, questionTerms(ev, "customers by country and signup date"));
    const id = (i: number) => catalog.tables[i].id;
    const byTable = new Map([...v].map(([i, s]) => [id(i), s]));
    // Both customers tables hold all three terms; a filler table only the common one.
    expect(byTable.get("a.customers")).toBeCloseTo(byTable.get("b.customers")!);
    expect(byTable.get("a.customers")!).toBeGreaterThan(5 * byTable.get("misc0.things")!);
  });

  it("joins two question words into the column they name (`signed up` → signup_date)", () => {
    expect(questionTerms(ev, "How many people signed up last year?")).toContain("signup");
    expect(questionTerms(ev, "new sign-ups per month")).toContain("signup");
  });
});

describe("join-aware resolution of a column concept", () => {
  it.each(["a", "b"] as const)(
    "resolves `by country` to the customers table that joins orders (%s), not the bigger look-alike",
    (joined) => {
      const other = joined === "a" ? "b" : "a";
      const linked = linkSchema(twoCustomers(joined), "Number of orders by country");
      const ids = linked.tables.map((t) => t.id);
      expect(linked.all).toBe(false);
      expect(ids).toContain("sales.orders");
      expect(ids).toContain(`${joined}.customers`);
      expect(ids).not.toContain(`${other}.customers`);
      expect(linked.joins).toEqual([`sales.orders.customer_id = ${joined}.customers.customer_id`]);
    },
  );

  it("does not bring a table elsewhere for a word only its column notes hold", () => {
    const catalog: Catalog = {
      tables: [
        table("sales.orders", 40_000, [col("order_id"), col("customer_id"), col("total", "DECIMAL(10,2)")]),
        table("sales.customers", 5_000, [col("customer_id"), col("signup_date", "DATE")]),
        // Joins sales.orders by key name, and its notes say "people".
        table("hr.badges", 900, [
          col("badge_id"),
          col("customer_id", "INTEGER", {
            description: "Visiting people, by the customer they came for; they sign in and go up.",
          }),
        ]),
        ...filler(20),
      ],
      builtAt: 0,
    };
    const ids = linkSchema(catalog, "Order total for people who signed up in 2025", {
      home: ["sales"],
    }).tables.map((t) => t.id);
    expect(ids).toEqual(expect.arrayContaining(["sales.orders", "sales.customers"]));
    expect(ids).not.toContain("hr.badges");
    // Two words read as one (signed up → signup) count as that, not as each word of the notes.
    const terms = questionTerms(evidenceOf(catalog), "people who signed up");
    expect(terms).toContain("signup");
    expect(terms).not.toContain("sign");
    expect(terms).not.toContain("up");
  });

  it("resolves a value filter (business customers) the same way", () => {
    const ids = linkSchema(
      twoCustomers("b"),
      "How many orders did business customers place on the web?",
    ).tables.map((t) => t.id);
    expect(ids).toEqual(expect.arrayContaining(["sales.orders", "b.customers"]));
    expect(ids).not.toContain("a.customers");
  });
});

/** A shop and a look-alike shop in another dataset, plus filler. */
function twoShops(): Catalog {
  const shop = (ds: string, rows: number): CatalogTable[] => [
    table(`${ds}.orders`, rows, [
      col("order_id"),
      col("customer_id"),
      col("order_date", "DATE"),
      col("status", "VARCHAR", { values: ["delivered", "cancelled"] }),
      col("channel", "VARCHAR", { values: ["web", "marketplace"] }),
      col("shipping_cost", "DECIMAL(10,2)"),
    ]),
    table(`${ds}.order_items`, rows * 2, [
      col("order_id"),
      col("product_id"),
      col("quantity"),
      col("unit_price", "DECIMAL(10,2)"),
      col("line_total", "DECIMAL(10,2)"),
    ]),
    table(`${ds}.products`, 200, [
      col("product_id"),
      col("category", "VARCHAR", { values: ["Books", "Toys"] }),
      col("unit_cost", "DECIMAL(10,2)"),
    ]),
    table(`${ds}.customers`, 5_000, [
      col("customer_id"),
      col("country", "VARCHAR", { values: ["DE", "US"] }),
    ]),
  ];
  return { tables: [...shop("shop", 40_000), ...shop("wholesale", 60_000), ...filler(10)], builtAt: 0 };
}

describe("measures bring their fact tables", () => {
  it("pulls the table whose money columns compute `spend`, and the header a line table references", () => {
    // No glossary: "spend" is a money measure; order_items has the most money columns at home.
    const linked = linkSchema(twoShops(), "Spend per category", { home: ["shop"] });
    const ids = linked.tables.map((t) => t.id);
    expect(ids).toEqual(expect.arrayContaining(["shop.products", "shop.order_items", "shop.orders"]));
    expect(ids.filter((id) => id.startsWith("wholesale."))).toEqual([]);
    expect(linked.joins).toEqual(
      expect.arrayContaining([
        "shop.order_items.order_id = shop.orders.order_id",
        "shop.order_items.product_id = shop.products.product_id",
      ]),
    );
  });

  it("pulls the table with unit counts for `units`", () => {
    const ids = linkSchema(twoShops(), "Units sold per channel", { home: ["shop"] }).tables.map((t) => t.id);
    expect(ids).toEqual(expect.arrayContaining(["shop.orders", "shop.order_items"]));
  });
});

describe("the home dataset", () => {
  it("follows the authored context's dataset over a bigger look-alike", () => {
    const q = "How many customers are in Germany?";
    expect(linkSchema(twoShops(), q).tables[0].id).toBe("wholesale.customers");
    const linked = linkSchema(twoShops(), q, { home: ["shop"] });
    expect(linked.tables.map((t) => t.id)).toContain("shop.customers");
    expect(linked.tables.map((t) => t.id)).not.toContain("wholesale.customers");
    expect(linked.values).toEqual([
      { text: "Germany", table: "shop.customers", column: "country", value: "DE" },
    ]);
  });

  it("puts the chosen tables' join chain in the prompt", () => {
    const catalog = twoShops();
    const lines = renderLinkedTables(catalog, linkSchema(catalog, "Revenue by country", { home: ["shop"] }));
    expect(lines.join("\n")).toMatch(
      /Joins between these tables: .*shop\.orders\.customer_id = shop\.customers\.customer_id/,
    );
  });
});

/**
 * A shop, and three regional copies of a CRM (the same tables and columns) whose words fit the
 * question at least as well, plus filler.
 */
function shopAndCrms(): Catalog {
  const crm = (ds: string): CatalogTable[] => [
    table(`${ds}.accounts`, 80_000, [col("account_id"), col("country", "VARCHAR", { values: ["DE", "US"] })]),
    table(`${ds}.deals`, 90_000, [col("deal_id"), col("account_id"), col("revenue", "DECIMAL(12,2)")]),
  ];
  return {
    tables: [
      table("shop.orders", 40_000, [
        col("order_id"),
        col("customer_id"),
        col("order_date", "DATE"),
        col("revenue", "DECIMAL(10,2)"),
      ]),
      table("shop.customers", 5_000, [
        col("customer_id"),
        col("country", "VARCHAR", { values: ["DE", "US"] }),
      ]),
      ...crm("crm_us"),
      ...crm("crm_eu"),
      ...crm("crm_apac"),
      ...filler(10),
    ],
    builtAt: 0,
  };
}

describe("when the words do not settle the dataset", () => {
  const q = "Which country brings the most revenue?";

  it("shows the closest datasets' tables too, copies of one dataset counted once, and says so", () => {
    const catalog = shopAndCrms();
    const linked = linkSchema(catalog, q);
    const ids = linked.tables.map((t) => t.id);
    // Without the copies counted once, the CRM's three regions would fill the places.
    expect(ids).toEqual(expect.arrayContaining(["shop.orders", "shop.customers"]));
    const crms = new Set(ids.filter((id) => id.startsWith("crm_")).map((id) => id.split(".")[0]));
    expect(crms.size).toBe(1);
    expect(linked.datasets).toHaveLength(2);
    expect(linked.datasets).toContain("shop");
    const prompt = renderLinkedTables(catalog, linked).join("\n");
    expect(prompt).toContain(`The question's words fit tables in 2 datasets (${linked.datasets.join(", ")})`);
    // The other dataset's tables in brief: columns and types on the table's line, no values.
    const other = linked.tables.filter((t) => !t.id.startsWith(`${linked.datasets[0]}.`));
    expect(other.length).toBeGreaterThan(0);
    expect(other.every((t) => t.brief)).toBe(true);
    expect(linked.tables.filter((t) => t.id.startsWith(`${linked.datasets[0]}.`)).some((t) => t.brief)).toBe(
      false,
    );
    for (const t of other)
      expect(prompt).toMatch(new RegExp(`^- ${t.id.replace(".", "\\.")}, \\d+ rows: \\w+_id INTEGER, `, "m"));
  });

  it("shows the authored context's dataset alone", () => {
    const linked = linkSchema(shopAndCrms(), q, { home: ["shop"] });
    expect(linked.tables.map((t) => t.id).sort()).toEqual(["shop.customers", "shop.orders"]);
    expect(linked.datasets).toEqual([]);
  });
});

describe("a dataset's fit", () => {
  it("ranks a dataset whose matching tables join up before one whose matches are scattered", () => {
    // Both hold `customers` with `country` and a table with `revenue`; in `joined` they share
    // customer_id, in `scattered` they share no key (and are bigger, which would rank it first).
    const ds = (name: string, rows: number, key: string): CatalogTable[] => [
      table(`${name}.customers`, rows, [col("customer_id"), col("country", "VARCHAR")]),
      table(`${name}.invoices`, rows, [col("invoice_id"), col(key), col("revenue", "DECIMAL(12,2)")]),
    ];
    const catalog: Catalog = {
      tables: [
        ...ds("joined", 1_000, "customer_id"),
        ...ds("scattered", 900_000, "vendor_id"),
        ...filler(10),
      ],
      builtAt: 0,
    };
    const linked = linkSchema(catalog, "Revenue of customers by country");
    expect(linked.datasets[0]).toBe("joined");
    expect(linked.tables[0].id.startsWith("joined.")).toBe(true);
  });
});

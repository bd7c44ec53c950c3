/**
 * Tables, columns and descriptions of the sample shop dataset, as data: the writer creates them
 * with `COMMENT ON`, so `list_tables` and `describe_table` show the model what each column means.
 */
import type { SampleData } from "./sample-data";

export interface SampleColumn {
  name: string;
  /** DuckDB type; the appender writes values in this type. */
  type: "INTEGER" | "BIGINT" | "VARCHAR" | "BOOLEAN" | "DATE" | "TIMESTAMP" | "DECIMAL(10,2)";
  description: string;
}
export interface SampleTable {
  name: keyof SampleData;
  description: string;
  columns: SampleColumn[];
}

/** Schema (catalog alias) the sample dataset is attached under: tables are `shop.<table>`. */
export const SAMPLE_SCHEMA = "shop";

export const SAMPLE_TABLES: SampleTable[] = [
  {
    name: "customers",
    description: "One row per registered customer of the online shop.",
    columns: [
      { name: "customer_id", type: "INTEGER", description: "Primary key." },
      { name: "name", type: "VARCHAR", description: "Full name." },
      { name: "email", type: "VARCHAR", description: "Email address (synthetic, example.com)." },
      { name: "country", type: "VARCHAR", description: "ISO 3166-1 alpha-2 country code, e.g. US, GB, DE." },
      { name: "segment", type: "VARCHAR", description: "'consumer' or 'business'." },
      { name: "signup_date", type: "DATE", description: "Day the customer registered." },
      { name: "marketing_opt_in", type: "BOOLEAN", description: "Agreed to marketing email." },
    ],
  },
  {
    name: "products",
    description: "Product catalogue: 210 products in 7 categories.",
    columns: [
      { name: "product_id", type: "INTEGER", description: "Primary key." },
      { name: "name", type: "VARCHAR", description: "Product name." },
      {
        name: "category",
        type: "VARCHAR",
        description: "One of Electronics, Home & Kitchen, Books, Clothing, Sports & Outdoors, Beauty, Toys.",
      },
      { name: "brand", type: "VARCHAR", description: "Brand name." },
      { name: "unit_price", type: "DECIMAL(10,2)", description: "List price in USD." },
      {
        name: "unit_cost",
        type: "DECIMAL(10,2)",
        description: "Cost to the shop in USD (margin = price - cost).",
      },
      { name: "launched_on", type: "DATE", description: "Day the product was first sold." },
    ],
  },
  {
    name: "orders",
    description: "One row per order, 2024-01-01 to 2025-12-31. Revenue lives in order_items.",
    columns: [
      { name: "order_id", type: "INTEGER", description: "Primary key." },
      { name: "customer_id", type: "INTEGER", description: "References customers.customer_id." },
      { name: "order_ts", type: "TIMESTAMP", description: "When the order was placed (UTC)." },
      { name: "order_date", type: "DATE", description: "Day the order was placed (UTC)." },
      {
        name: "status",
        type: "VARCHAR",
        description:
          "'delivered', 'shipped', 'processing', 'cancelled' or 'returned'. Exclude cancelled and returned orders from revenue.",
      },
      { name: "channel", type: "VARCHAR", description: "'web', 'mobile_app' or 'marketplace'." },
      { name: "discount_code", type: "VARCHAR", description: "Promotion code used, NULL when none." },
      {
        name: "shipping_cost",
        type: "DECIMAL(10,2)",
        description: "Shipping charged in USD (free from 50 USD).",
      },
    ],
  },
  {
    name: "order_items",
    description: "Order lines (about 100k): one row per product in an order.",
    columns: [
      { name: "order_id", type: "INTEGER", description: "References orders.order_id." },
      { name: "line_number", type: "INTEGER", description: "1-based line within the order." },
      { name: "product_id", type: "INTEGER", description: "References products.product_id." },
      { name: "quantity", type: "INTEGER", description: "Units ordered." },
      { name: "unit_price", type: "DECIMAL(10,2)", description: "Price per unit in USD at order time." },
      { name: "discount", type: "DECIMAL(10,2)", description: "Discount on the whole line in USD." },
      {
        name: "line_total",
        type: "DECIMAL(10,2)",
        description: "quantity * unit_price - discount, in USD: the line's revenue.",
      },
    ],
  },
  {
    name: "web_events",
    description:
      "Clickstream of browsing sessions: page_view → product_view → add_to_cart → checkout → purchase.",
    columns: [
      { name: "event_id", type: "BIGINT", description: "Primary key." },
      { name: "session_id", type: "VARCHAR", description: "Browsing session." },
      {
        name: "customer_id",
        type: "INTEGER",
        description: "Signed-in customer, NULL for anonymous visitors.",
      },
      { name: "event_ts", type: "TIMESTAMP", description: "When the event happened (UTC)." },
      {
        name: "event_type",
        type: "VARCHAR",
        description: "'page_view', 'product_view', 'add_to_cart', 'checkout' or 'purchase'.",
      },
      { name: "product_id", type: "INTEGER", description: "Product involved, NULL for page_view." },
      { name: "device", type: "VARCHAR", description: "'desktop', 'mobile' or 'tablet'." },
      {
        name: "traffic_source",
        type: "VARCHAR",
        description: "'direct', 'organic', 'paid_search', 'email' or 'social'.",
      },
    ],
  },
];

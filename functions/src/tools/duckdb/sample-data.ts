/**
 * The deterministic sample dataset: an online shop over two years (2024-01-01 … 2025-12-31).
 *
 * Pure JavaScript with its own seeded PRNG, so the same seed gives byte-identical data on every
 * machine and DuckDB version, and tests can compute expected answers from these arrays without
 * trusting the SQL engine they are testing. Money is kept in integer cents to avoid float drift.
 */

export const SAMPLE_SEED = 20240101;
/** Bump when the generator's output changes, so cached database files are rebuilt. */
export const SAMPLE_VERSION = 1;

const FIRST_DAY = Date.UTC(2024, 0, 1) / 86_400_000;
const DAYS = 731; // 2024 is a leap year: 366 + 365

interface Customer {
  customer_id: number;
  name: string;
  email: string;
  country: string;
  segment: "consumer" | "business";
  signup_date: number; // days since epoch
  marketing_opt_in: boolean;
}
interface Product {
  product_id: number;
  name: string;
  category: string;
  brand: string;
  unit_price: number; // cents
  unit_cost: number; // cents
  launched_on: number; // days since epoch
}
interface Order {
  order_id: number;
  customer_id: number;
  order_ts: number; // microseconds since epoch
  order_date: number; // days since epoch
  status: "delivered" | "shipped" | "processing" | "cancelled" | "returned";
  channel: "web" | "mobile_app" | "marketplace";
  discount_code: string | null;
  shipping_cost: number; // cents
}
interface OrderItem {
  order_id: number;
  line_number: number;
  product_id: number;
  quantity: number;
  unit_price: number; // cents
  discount: number; // cents, for the whole line
  line_total: number; // cents = quantity * unit_price - discount
}
interface WebEvent {
  event_id: number;
  session_id: string;
  customer_id: number | null;
  event_ts: number; // microseconds since epoch
  event_type: "page_view" | "product_view" | "add_to_cart" | "checkout" | "purchase";
  product_id: number | null;
  device: "desktop" | "mobile" | "tablet";
  traffic_source: "direct" | "organic" | "paid_search" | "email" | "social";
}
export interface SampleData {
  customers: Customer[];
  products: Product[];
  orders: Order[];
  order_items: OrderItem[];
  web_events: WebEvent[];
}

/** mulberry32: tiny, fast, and identical everywhere. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

type Weighted<T> = ReadonlyArray<readonly [T, number]>;

function picker(rand: () => number) {
  const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
  const one = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)];
  const weighted = <T>(items: Weighted<T>): T => {
    const total = items.reduce((s, [, w]) => s + w, 0);
    let r = rand() * total;
    for (const [v, w] of items) {
      r -= w;
      if (r < 0) return v;
    }
    return items[items.length - 1][0];
  };
  return { rand, int, one, weighted };
}

const COUNTRIES: Weighted<string> = [
  ["US", 35],
  ["GB", 12],
  ["DE", 12],
  ["FR", 10],
  ["CA", 8],
  ["AU", 6],
  ["NL", 5],
  ["ES", 5],
  ["IT", 4],
  ["JP", 3],
];
const FIRST = [
  "Ada",
  "Ben",
  "Chloe",
  "Dev",
  "Elena",
  "Farid",
  "Grace",
  "Hiro",
  "Ines",
  "Jon",
  "Kara",
  "Liam",
];
const LAST = ["Smith", "Garcia", "Müller", "Martin", "Rossi", "Tanaka", "Brown", "Dubois", "Novak", "Silva"];
const CATEGORIES: ReadonlyArray<readonly [string, number, number, readonly string[]]> = [
  // name, min price, max price (whole currency units), nouns
  ["Electronics", 15, 900, ["Headphones", "Speaker", "Charger", "Monitor", "Keyboard", "Camera"]],
  ["Home & Kitchen", 8, 250, ["Kettle", "Pan", "Lamp", "Blender", "Knife Set", "Towel Set"]],
  ["Books", 6, 45, ["Cookbook", "Novel", "Atlas", "Biography", "Guide", "Anthology"]],
  ["Clothing", 10, 180, ["Jacket", "T-Shirt", "Sneakers", "Scarf", "Jeans", "Hoodie"]],
  ["Sports & Outdoors", 12, 400, ["Tent", "Yoga Mat", "Bike Light", "Backpack", "Dumbbells", "Bottle"]],
  ["Beauty", 5, 90, ["Serum", "Shampoo", "Lip Balm", "Perfume", "Face Mask", "Sunscreen"]],
  ["Toys", 7, 120, ["Puzzle", "Robot Kit", "Board Game", "Plush Bear", "Train Set", "Kite"]],
];
const BRANDS = ["Acme", "Northwind", "Globex", "Initech", "Umbrella", "Stark", "Wayne", "Hooli"];
const ADJECTIVES = ["Classic", "Pro", "Eco", "Mini", "Ultra", "Smart", "Travel", "Deluxe"];
const CODES: Weighted<readonly [string, number]> = [
  [["WELCOME10", 10], 5],
  [["SPRING15", 15], 3],
  [["LOYAL20", 20], 2],
];

type Pick = ReturnType<typeof picker>;

/**
 * Generates the whole dataset in memory (about 40k orders, 100k order lines, 130k web events). The
 * parts draw from one random sequence in a fixed order (products, customers, then each day's orders
 * and sessions), so a seed always gives the same data.
 */
export function generateSampleData(seed: number = SAMPLE_SEED): SampleData {
  const pick = picker(prng(seed));
  const products = sampleProducts(pick);
  const customers = sampleCustomers(pick);
  const data: SampleData = { customers, products, orders: [], order_items: [], web_events: [] };
  const next = { eventId: 1, sessionNo: 1 };
  let existing = 0;
  for (let d = 0; d < DAYS; d++) {
    const day = FIRST_DAY + d;
    while (existing < customers.length && customers[existing].signup_date <= day) existing++;
    const count = sampleDayOrders(pick, data, d, existing);
    sampleDaySessions(pick, data, { day, orders: count, customers: existing }, next);
  }
  return data;
}

function sampleProducts({ rand, int, one }: Pick): Product[] {
  const products: Product[] = [];
  for (let id = 1; id <= 210; id++) {
    const [category, lo, hi, nouns] = CATEGORIES[(id - 1) % CATEGORIES.length];
    const price = Math.round((lo + (hi - lo) * rand() ** 2) * 100) - 1; // x.99 prices, skewed cheap
    products.push({
      product_id: id,
      name: `${one(BRANDS)} ${one(ADJECTIVES)} ${one(nouns)}`,
      category,
      brand: one(BRANDS),
      unit_price: Math.max(price, 99),
      unit_cost: Math.round(Math.max(price, 99) * (0.35 + 0.35 * rand())),
      launched_on: FIRST_DAY - 400 + int(0, 900),
    });
  }
  return products;
}

/** Sorted by signup date so "customers who existed on day d" is a prefix of the array. */
function sampleCustomers({ rand, int, one, weighted }: Pick): Customer[] {
  const signups: number[] = [];
  for (let i = 0; i < 6000; i++) signups.push(FIRST_DAY - 540 + int(0, 540 + DAYS - 30));
  signups.sort((a, b) => a - b);
  return signups.map((signup_date, i) => {
    const first = one(FIRST);
    const last = one(LAST);
    return {
      customer_id: i + 1,
      name: `${first} ${last}`,
      email: `${first.toLowerCase()}.${last.toLowerCase().replace("ü", "ue")}${i + 1}@example.com`,
      country: weighted(COUNTRIES),
      segment: rand() < 0.15 ? "business" : "consumer",
      signup_date,
      marketing_opt_in: rand() < 0.55,
    };
  });
}

const SEASONAL = [0.85, 0.8, 0.95, 0.95, 1.0, 0.95, 0.9, 0.95, 1.0, 1.1, 1.45, 1.6];

/** Day `d`'s orders and their lines, from the first `existing` customers; returns how many orders. */
function sampleDayOrders(pick: Pick, data: SampleData, d: number, existing: number): number {
  const { rand, int, weighted } = pick;
  const { orders, order_items, products } = data;
  const day = FIRST_DAY + d;
  const date = new Date(day * 86_400_000);
  const weekend = date.getUTCDay() === 0 || date.getUTCDay() === 6 ? 1.15 : 1;
  const expected = 46 * (1 + (0.35 * d) / DAYS) * SEASONAL[date.getUTCMonth()] * weekend;
  const count = Math.round(expected * (0.85 + 0.3 * rand()));
  for (let k = 0; k < count; k++) {
    const order_id = orders.length + 1;
    const customer_id = int(1, Math.max(existing, 1));
    const coded = rand() < 0.14 ? weighted(CODES) : null;
    const lines = weighted([
      [1, 30],
      [2, 30],
      [3, 20],
      [4, 12],
      [5, 8],
    ] as const);
    let subtotal = 0;
    for (let n = 1; n <= lines; n++) {
      const product = products[Math.floor(rand() ** 1.6 * products.length)];
      const quantity = weighted([
        [1, 70],
        [2, 20],
        [3, 7],
        [4, 3],
      ] as const);
      const gross = quantity * product.unit_price;
      const discount = coded ? Math.round((gross * coded[1]) / 100) : 0;
      subtotal += gross - discount;
      order_items.push({
        order_id,
        line_number: n,
        product_id: product.product_id,
        quantity,
        unit_price: product.unit_price,
        discount,
        line_total: gross - discount,
      });
    }
    const recent = d >= DAYS - 7;
    const r = rand();
    const status =
      r < 0.05
        ? "cancelled"
        : r < 0.11
          ? "returned"
          : recent
            ? d >= DAYS - 2
              ? "processing"
              : "shipped"
            : "delivered";
    const seconds = int(0, 86_399);
    orders.push({
      order_id,
      customer_id,
      order_ts: (day * 86_400 + seconds) * 1_000_000,
      order_date: day,
      status,
      channel: weighted([
        ["web", 55],
        ["mobile_app", 35],
        ["marketplace", 10],
      ] as const),
      discount_code: coded ? coded[0] : null,
      shipping_cost: subtotal >= 5000 ? 0 : 499,
    });
  }
  return count;
}

/** A day's browsing sessions (about 1.5 per order): a funnel that mostly stops early. */
function sampleDaySessions(
  { rand, int, weighted }: Pick,
  data: SampleData,
  on: { day: number; orders: number; customers: number },
  next: { eventId: number; sessionNo: number },
): void {
  const { products, web_events } = data;
  const sessions = Math.round(on.orders * 1.5 * (0.9 + 0.2 * rand()));
  for (let s = 0; s < sessions; s++) {
    const session_id = `s${(next.sessionNo++).toString(36).padStart(6, "0")}`;
    const customer_id = rand() < 0.4 ? int(1, Math.max(on.customers, 1)) : null;
    const device = weighted([
      ["desktop", 45],
      ["mobile", 48],
      ["tablet", 7],
    ] as const);
    const traffic_source = weighted([
      ["direct", 30],
      ["organic", 30],
      ["paid_search", 18],
      ["email", 12],
      ["social", 10],
    ] as const);
    let t = (on.day * 86_400 + int(0, 86_000)) * 1_000_000;
    const emit = (event_type: WebEvent["event_type"], product_id: number | null) => {
      web_events.push({
        event_id: next.eventId++,
        session_id,
        customer_id,
        event_ts: t,
        event_type,
        product_id,
        device,
        traffic_source,
      });
      t += int(5, 240) * 1_000_000;
    };
    emit("page_view", null);
    const product = products[Math.floor(rand() ** 1.6 * products.length)].product_id;
    if (rand() < 0.7) emit("product_view", product);
    else continue;
    if (rand() < 0.3) emit("add_to_cart", product);
    else continue;
    if (rand() < 0.55) emit("checkout", product);
    else continue;
    if (rand() < 0.7) emit("purchase", product);
  }
}

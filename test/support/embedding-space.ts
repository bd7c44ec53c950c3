/**
 * The embedding model the stand-ins serve: a small, fixed "meaning" space in which words of one
 * concept land together ("clients", "customers", "shoppers" → customer; "purchases", "orders" →
 * order), hashed into 64 dimensions. Deterministic, so tests can say which tables must come out
 * closest; a real model's neighbourhoods are richer, the protocol around it is the same.
 */
const CONCEPTS: Record<string, string[]> = {
  customer: [
    "customer",
    "customers",
    "client",
    "clients",
    "shopper",
    "shoppers",
    "buyer",
    "buyers",
    "signup",
    "signed",
  ],
  order: ["order", "orders", "purchase", "purchases", "bought", "checkout", "checkouts"],
  product: ["product", "products", "merchandise", "item", "items", "sku", "catalogue", "category"],
  event: ["event", "events", "visit", "visits", "session", "sessions", "click", "clicks", "traffic"],
  money: ["revenue", "sales", "turnover", "amount", "price", "total", "line_total", "unit_price"],
};
const CONCEPT_OF = new Map(Object.entries(CONCEPTS).flatMap(([c, ws]) => ws.map((w) => [w, c] as const)));

const EMBEDDING_DIMS = 64;

function bucket(word: string): number {
  let h = 2166136261;
  for (const ch of word) h = Math.imul(h ^ ch.charCodeAt(0), 16777619);
  return (h >>> 0) % EMBEDDING_DIMS;
}

/** The vector of a text: its concepts weigh 3, other words 1 (so unrelated texts are not all alike). */
export function embedText(text: string): number[] {
  const v = new Array<number>(EMBEDDING_DIMS).fill(0);
  for (const w of text
    .toLowerCase()
    .split(/[^a-z0-9_]+/)
    .filter(Boolean)) {
    const concept = CONCEPT_OF.get(w) ?? CONCEPT_OF.get(w.replace(/_id$/, ""));
    if (concept) v[bucket(`concept:${concept}`)] += 3;
    else v[bucket(w)] += 1;
  }
  return v;
}

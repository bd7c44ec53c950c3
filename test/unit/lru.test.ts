import { describe, expect, it } from "vitest";
import { Lru } from "../../functions/src/lru";

describe("Lru", () => {
  it("keeps at most its bound, dropping the entry used least recently", () => {
    const lru = new Lru<string, number>(3);
    lru.set("a", 1);
    lru.set("b", 2);
    lru.set("c", 3);
    expect(lru.get("a")).toBe(1); // a is now the most recently used
    lru.set("d", 4);
    expect(lru.size).toBe(3);
    expect(lru.get("b")).toBeUndefined();
    expect([...lru.keys()]).toEqual(["c", "a", "d"]);
    for (let i = 0; i < 10_000; i++) lru.set(`k${i}`, i);
    expect(lru.size).toBe(3);
    expect([...lru.keys()]).toEqual(["k9997", "k9998", "k9999"]);
  });

  it("replacing or deleting an entry keeps the count exact", () => {
    const lru = new Lru<string, number>(2);
    lru.set("a", 1);
    lru.set("a", 2);
    expect(lru.size).toBe(1);
    expect(lru.get("a")).toBe(2);
    lru.delete("a");
    expect(lru.size).toBe(0);
    expect(lru.get("a")).toBeUndefined();
  });
});

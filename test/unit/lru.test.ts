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

describe("TtlCache", () => {
  it("shares a load under way, keeps its value for the time, then loads again", async () => {
    const { TtlCache } = await import("../../functions/src/lru");
    let ttl = 60_000;
    const cache = new TtlCache<string, number>(10, () => ttl);
    let loads = 0;
    let release!: (n: number) => void;
    const load = () => {
      loads++;
      return new Promise<number>((r) => (release = r));
    };
    const first = cache.get("a", load);
    const second = cache.get("a", load);
    expect(loads).toBe(1);
    release(7);
    expect(await Promise.all([first, second])).toEqual([7, 7]);
    expect(await cache.get("a", async () => 8)).toBe(7);
    // Expired: a ttl of zero makes the next entry stale at once.
    ttl = 0;
    expect(await cache.get("b", async () => 1)).toBe(1);
    expect(await cache.get("b", async () => 2)).toBe(2);
  });

  it("drops a failed load, reads past the cache when asked fresh, and stays bounded", async () => {
    const { TtlCache } = await import("../../functions/src/lru");
    const cache = new TtlCache<string, number>(2, () => 60_000);
    await expect(cache.get("a", () => Promise.reject(new Error("down")))).rejects.toThrow("down");
    expect(await cache.get("a", async () => 1)).toBe(1);
    expect(await cache.get("a", async () => 2, { fresh: true })).toBe(2);
    expect(await cache.get("a", async () => 3)).toBe(2);
    cache.set("b", 10);
    await cache.get("c", async () => 20);
    // "a" was the least recently used of three in a cache of two.
    expect(await cache.get("a", async () => 4)).toBe(4);
    cache.delete("c");
    expect(await cache.get("c", async () => 30)).toBe(30);
  });
});

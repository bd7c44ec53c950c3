/**
 * The schema catalog shared across instances through Firestore (the Java emulator): a round trip
 * keeps it exactly, a catalog larger than a Firestore document is split into parts, a second
 * instance reads it instead of describing the warehouse, and a stale one is rebuilt and shared.
 */
import { randomUUID } from "node:crypto";
import path from "node:path";
import { Firestore } from "@google-cloud/firestore";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CatalogCache,
  FirestoreCatalogStore,
  buildCatalog,
  catalogKey,
  loadKnowledge,
  warehouseCatalogKey,
  type Catalog,
} from "../../functions/src/context";
import { closeWarehouses, getWarehouse } from "../../functions/src/tools";
import { readConfig } from "../../functions/src/config";
import { stackEnv } from "../support/stack-env";

let db: Firestore;
const collection = `catalogs-test-${Date.now()}`;

beforeAll(() => {
  const { env } = stackEnv();
  db = new Firestore({ projectId: env.GCLOUD_PROJECT, host: env.FIRESTORE_EMULATOR_HOST, ssl: false });
});
afterAll(async () => {
  await db?.terminate();
  await closeWarehouses();
});

/** A catalog of `n` tables with long descriptions (about 1.5 KB of JSON per table). */
function bigCatalog(n: number): Catalog {
  return {
    builtAt: Date.now(),
    tables: Array.from({ length: n }, (_, i) => ({
      id: `ds${i % 7}.table_${i}`,
      rowCount: i,
      description: `Table ${i}: ${"a description that goes on ".repeat(20)}`,
      columns: Array.from({ length: 12 }, (_, j) => ({
        name: `col_${j}`,
        type: j % 2 ? "VARCHAR" : "BIGINT",
        // Random values: the gzip'd JSON stays big, as a real catalog's would.
        ...(j % 2 ? { values: [randomUUID(), `w${j}`] } : {}),
      })),
    })),
  };
}

describe("the shared schema catalog", () => {
  it("round-trips the sample warehouse's catalog exactly", async () => {
    const store = new FirestoreCatalogStore(db, collection);
    const catalog = await buildCatalog(
      await getWarehouse(readConfig({ GOOGLE_CLOUD_PROJECT: "p" }).warehouse),
    );
    await store.write("sample", catalog);
    expect(await store.read("sample")).toEqual(catalog);
    expect(await store.read("missing")).toBeUndefined();
  });

  it("splits a catalog larger than a Firestore document into parts", async () => {
    const store = new FirestoreCatalogStore(db, collection);
    const catalog = bigCatalog(20_000);
    expect(JSON.stringify(catalog).length).toBeGreaterThan(20_000_000);
    await store.write("big", catalog);
    const head = (await db.collection(collection).doc("big").get()).data()!;
    expect(head.parts).toBeGreaterThanOrEqual(2);
    expect(await store.read("big")).toEqual(catalog);
  });

  it("lets a second instance read the catalog instead of building it; a stale one is rebuilt and shared", async () => {
    const store = new FirestoreCatalogStore(db, collection);
    const key = catalogKey({ test: collection });
    let builds = 0;
    const build = async (): Promise<Catalog> => {
      builds++;
      return bigCatalog(3);
    };
    const first = new CatalogCache(build, { store, key, maxAgeMs: 60_000 });
    const a = await first.get();
    const second = new CatalogCache(build, { store, key, maxAgeMs: 60_000 });
    expect(await second.get()).toEqual(a);
    expect(builds).toBe(1);
    // An instance that finds the shared catalog too old rebuilds it, and shares the new one.
    await store.write(key, { ...a, builtAt: Date.now() - 120_000 });
    const third = new CatalogCache(build, { store, key, maxAgeMs: 60_000 });
    const c = await third.get();
    expect(builds).toBe(2);
    expect((await store.read(key))!.builtAt).toBe(c.builtAt);
  });

  it("serves a stale catalog while its replacement loads, then the new one", async () => {
    let builds = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const cache = new CatalogCache(
      async () => {
        builds++;
        if (builds === 2) await gate; // the rebuild is held until the test lets it finish
        return { ...bigCatalog(builds), builtAt: builds === 1 ? Date.now() - 120_000 : Date.now() };
      },
      { maxAgeMs: 60_000 },
    );
    expect((await cache.refresh()).tables).toHaveLength(1); // already stale
    expect((await cache.get()).tables).toHaveLength(1); // served as is; the rebuild started
    expect(builds).toBe(2);
    expect((await cache.get()).tables).toHaveLength(1); // still loading: no second rebuild
    expect(builds).toBe(2);
    release();
    await expect.poll(async () => (await cache.get()).tables.length).toBe(2);
  });

  it("npm run catalog -- refresh stores it under the key the function reads; show prints it", async () => {
    const { execFile } = await import("node:child_process");
    const { env } = stackEnv();
    const own = `${collection}-cmd`;
    const run = (cmd: string) =>
      new Promise<string>((resolve, reject) =>
        execFile(
          process.execPath,
          ["--import", "tsx", "scripts/catalog.ts", cmd],
          {
            cwd: path.resolve(__dirname, "../.."),
            env: {
              ...process.env,
              ...env,
              QUARRY_CATALOGS_COLLECTION: own,
              GOOGLE_CLOUD_PROJECT: env.GCLOUD_PROJECT,
            },
            timeout: 60_000,
          },
          (err, out, errOut) => (err ? reject(new Error(`${err.message}\n${errOut}`)) : resolve(out)),
        ),
      );
    expect(await run("refresh")).toMatch(/^Stored the catalog of 5 tables as /);
    // What an instance of the function would read: same settings, same notes, same key.
    const cfg = readConfig({ GOOGLE_CLOUD_PROJECT: "p" });
    const warehouse = await getWarehouse(cfg.warehouse);
    const { knowledge } = await loadKnowledge(cfg.contextDir, warehouse);
    const key = warehouseCatalogKey(cfg.warehouse, knowledge.allNotes());
    let builds = 0;
    const cache = new CatalogCache(
      async () => {
        builds++;
        return bigCatalog(1);
      },
      { store: new FirestoreCatalogStore(db, own), key, maxAgeMs: 60_000 },
    );
    expect((await cache.get()).tables.map((t) => t.id)).toContain("shop.orders");
    expect(builds).toBe(0);
    expect(await run("show")).toMatch(/: 5 tables, built .*\n- shop\./);
  });

  it("builds the catalog when the store cannot be reached, and says so", async () => {
    const broken = {
      read: () => Promise.reject(new Error("down")),
      write: () => Promise.reject(new Error("down")),
    };
    const errors: unknown[] = [];
    const cache = new CatalogCache(async () => bigCatalog(2), {
      store: broken,
      key: "k",
      onStoreError: (e) => errors.push(e),
    });
    expect((await cache.get()).tables).toHaveLength(2);
    expect(errors.map(String)).toEqual(["Error: down", "Error: down"]);
  });
});

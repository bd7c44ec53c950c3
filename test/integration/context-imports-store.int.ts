/**
 * The imported context's active layers as every run reads them (ImportStore.current, on the
 * Firestore emulator): read once per `maxAgeMs`, also after a re-read that found nothing new, and
 * that age counted from when the read started.
 */
import { Firestore } from "@google-cloud/firestore";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { ImportStore } from "../../functions/src/context/imports/firestore-store";
import { stackEnv } from "../support/stack-env";

let db: Firestore;

beforeAll(() => {
  const { env } = stackEnv();
  db = new Firestore({ projectId: env.GCLOUD_PROJECT, host: env.FIRESTORE_EMULATOR_HOST, ssl: false });
});
afterAll(async () => {
  await db?.terminate();
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe("the active imports, cached per instance", () => {
  it("re-reads the versions once per maxAge, counted from the last read, not the first", async () => {
    let now = 1_000_000;
    vi.spyOn(Date, "now").mockImplementation(() => now);
    const reads = vi.spyOn(db, "collection");
    const store = new ImportStore(db, 5_000);
    const first = await store.current();
    // The versions, then (nothing cached yet) the layers.
    const base = reads.mock.calls.length;
    expect(base).toBeGreaterThan(0);
    now += 4_000;
    expect(await store.current()).toMatchObject({ version: first.version, layers: first.layers });
    expect(reads).toHaveBeenCalledTimes(base);
    // Past maxAge: the versions read again; nothing changed, so the same layers.
    now += 2_000;
    expect(await store.current()).toMatchObject({ version: first.version, layers: first.layers });
    expect(reads).toHaveBeenCalledTimes(base + 1);
    // Within maxAge of that read: served from memory.
    now += 2_000;
    await store.current();
    now += 2_000;
    await store.current();
    expect(reads).toHaveBeenCalledTimes(base + 1);
    // maxAge after it: read again.
    now += 2_000;
    await store.current();
    expect(reads).toHaveBeenCalledTimes(base + 2);
  });

  it("counts a copy's age from when its read started, so a slow read is not served past maxAge", async () => {
    let now = 2_000_000;
    vi.spyOn(Date, "now").mockImplementation(() => now);
    const collection = db.collection.bind(db);
    // Each read the store makes takes 2 s of the clock (the versions, then the layers): a read begun
    // before an apply that finished after it.
    const reads = vi.spyOn(db, "collection").mockImplementation((p: string) => {
      now += 2_000;
      return collection(p);
    });
    const store = new ImportStore(db, 5_000);
    await store.current();
    const base = reads.mock.calls.length;
    expect(now - 2_000_000).toBe(base * 2_000);
    // 5 s after the read started (1–3 s after it ended): the copy is too old; read again.
    now = 2_000_000 + 5_000;
    await store.current();
    expect(reads).toHaveBeenCalledTimes(base + 1);
    // That read started at 5 s: served from memory until 10 s, then read again.
    const after = reads.mock.calls.length;
    now = 2_000_000 + 9_999;
    await store.current();
    expect(reads).toHaveBeenCalledTimes(after);
    now = 2_000_000 + 10_000;
    await store.current();
    expect(reads.mock.calls.length).toBeGreaterThan(after);
  });
});

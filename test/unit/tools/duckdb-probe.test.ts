/**
 * The DuckDB probe's figure (functions/src/tools/duckdb/spawn.ts): measured once per runtime and
 * kept in the temporary directory, so a fresh instance starts its first worker without a probe
 * first; an unreadable figure is measured again, and a kept one a worker cannot start under is
 * forgotten, measured again, and the worker started under the new limit.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { readConfig, type WarehouseConfig } from "../../../functions/src/config";
import { FULL_SCOPE } from "../../../functions/src/tools/scope";

type Spawn = typeof import("../../../functions/src/tools/duckdb/spawn");
type Pool = typeof import("../../../functions/src/tools/duckdb/pool");

let dir: string;
const savedTmp = process.env.TMPDIR;

/** The spawn module as a fresh process loads it (nothing measured in memory yet). */
async function fresh(): Promise<{ spawn: Spawn; pool: Pool }> {
  vi.resetModules();
  return {
    spawn: await import("../../../functions/src/tools/duckdb/spawn"),
    pool: await import("../../../functions/src/tools/duckdb/pool"),
  };
}

const kept = () => readdirSync(dir).filter((f) => f.startsWith("quarry-duckdb-base-") && f.endsWith(".json"));
const keptValue = () => JSON.parse(readFileSync(path.join(dir, kept()[0]), "utf8")).baseMiB as unknown;

describe("the DuckDB probe's kept figure", () => {
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "quarry-probe-"));
    process.env.TMPDIR = dir; // os.tmpdir() reads it on every call
  });
  afterAll(() => {
    if (savedTmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = savedTmp;
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    for (const f of kept()) rmSync(path.join(dir, f), { force: true });
  });

  it("is measured once, kept, and read (not measured) by a fresh process", async () => {
    const first = await fresh();
    const measured = await first.spawn.probeBaseMiB(1);
    expect(measured).toBeGreaterThan(100); // Node and DuckDB's address space, MiB
    expect(kept()).toHaveLength(1);
    expect(keptValue()).toBe(measured);
    // A figure no probe could give: a fresh process that answers it read the file.
    writeFileSync(path.join(dir, kept()[0]), JSON.stringify({ baseMiB: 4242 }));
    const second = await fresh();
    await expect(second.spawn.probeBaseMiB(1)).resolves.toBe(4242);
    // Another thread count is another runtime shape: measured for itself.
    const other = await second.spawn.probeBaseMiB(2);
    expect(other).toBeGreaterThan(100);
    expect(other).not.toBe(4242);
    expect(kept()).toHaveLength(2);
  }, 60_000);

  it("measures again when the kept figure is unreadable, and keeps the new one", async () => {
    await (await fresh()).spawn.probeBaseMiB(1);
    writeFileSync(path.join(dir, kept()[0]), "{not json");
    const again = await (await fresh()).spawn.probeBaseMiB(1);
    expect(again).toBeGreaterThan(100);
    expect(keptValue()).toBe(again);
  }, 60_000);

  it("forgets a kept figure a worker cannot start under, measures again and starts", async () => {
    const cfg: WarehouseConfig = structuredClone(
      readConfig({ GOOGLE_CLOUD_PROJECT: "demo-test", QUARRY_QUERY_TIMEOUT_MS: "30000" }).warehouse,
    );
    const { spawn } = await fresh();
    const threads = cfg.duckdb.threads;
    const measured = await spawn.probeBaseMiB(threads);
    // A kept figure far below what Node and DuckDB take: a limit made from it cannot hold them.
    writeFileSync(path.join(dir, kept()[0]), JSON.stringify({ baseMiB: 1 }));
    const { pool } = await fresh();
    const opened = await pool.DuckDbPool.open(cfg);
    try {
      const r = await opened.query("SELECT 41 + 1 AS n", {
        userId: "u1",
        threadId: "t1",
        runId: "r1",
        bytesBilledSoFar: 0,
        scope: FULL_SCOPE,
      });
      expect(r.rows).toEqual([{ n: 42 }]);
      // Measured again and kept: the figure of a real probe, not the one that failed.
      expect(keptValue()).toBeGreaterThan(100);
      expect(Math.abs((keptValue() as number) - measured)).toBeLessThan(measured / 2);
    } finally {
      await opened.close();
    }
  }, 90_000);
});

import { describe, it, expect } from "vitest";
import { ConfigError, assertEmulatorEnvironment, readConfig } from "../../functions/src/config";

describe("config", () => {
  it("refuses a functions emulator without FIRESTORE_EMULATOR_HOST, saying what to set", () => {
    expect(() => assertEmulatorEnvironment({ FUNCTIONS_EMULATOR: "true" })).toThrow(ConfigError);
    expect(() => assertEmulatorEnvironment({ FUNCTIONS_EMULATOR: "true" })).toThrow(
      /FIRESTORE_EMULATOR_HOST is not set.*npm start/,
    );
  });

  it("accepts production (no emulator) and an emulator with Firestore", () => {
    expect(() => assertEmulatorEnvironment({})).not.toThrow();
    expect(() =>
      assertEmulatorEnvironment({ FUNCTIONS_EMULATOR: "true", FIRESTORE_EMULATOR_HOST: "127.0.0.1:8080" }),
    ).not.toThrow();
  });

  it("reads the project id and emulator hosts", () => {
    const c = readConfig({ GCLOUD_PROJECT: "demo-x", VERTEX_AI_EMULATOR_HOST: "127.0.0.1:1" });
    expect(c.projectId).toBe("demo-x");
    expect(c.emulators.vertexAi).toBe("127.0.0.1:1");
    expect(c.emulators.firestore).toBeUndefined();
    expect(c.inEmulator).toBe(false);
  });

  it("fails clearly without a project id", () => {
    expect(() => readConfig({})).toThrow(/GOOGLE_CLOUD_PROJECT/);
  });
});

describe("settings declared once (functions/src/config/)", () => {
  const base = { GOOGLE_CLOUD_PROJECT: "demo-x" };

  it("reads each concern's defaults from its declarations", () => {
    const c = readConfig(base);
    expect(c.warehouse.maxRows).toBe(10_000);
    expect(c.access.cacheMs).toBe(30_000);
    expect(c.runLog).toBe(true);
    expect(c.agent.clarify).toBe(true);
    expect(c.agent.adequacyCheck).toBe(false);
    expect(c.apiUrl).toBe("https://us-central1-demo-x.cloudfunctions.net/api");
  });

  it("derives DuckDB's memory limit from the function's memory unless set; threads and workers bounded", () => {
    expect(readConfig(base).warehouse.duckdb).toMatchObject({ memoryMiB: 256, threads: 1, workers: 2 });
    expect(readConfig({ ...base, QUARRY_MEMORY_MIB: "4096" }).warehouse.duckdb).toMatchObject({
      memoryMiB: 1024,
    });
    expect(
      readConfig({
        ...base,
        QUARRY_DUCKDB_MEMORY_MIB: "512",
        QUARRY_DUCKDB_THREADS: "3",
        QUARRY_DUCKDB_WORKERS: "0",
      }).warehouse.duckdb,
    ).toMatchObject({ memoryMiB: 512, threads: 3, workers: 0 });
    expect(() => readConfig({ ...base, QUARRY_DUCKDB_MEMORY_MIB: "8" })).toThrow(
      /QUARRY_DUCKDB_MEMORY_MIB must be at least 64/,
    );
  });

  it("refuses a value out of its bounds, saying why", () => {
    expect(() => readConfig({ ...base, QUARRY_ACCESS_CACHE_SECONDS: "61" })).toThrow(
      "QUARRY_ACCESS_CACHE_SECONDS must be at most 60 (a removed member must lose access within a minute), got 61.",
    );
    expect(() => readConfig({ ...base, QUARRY_MAX_ROWS: "1.5" })).toThrow(
      /QUARRY_MAX_ROWS must be a whole number/,
    );
    expect(() => readConfig({ ...base, QUARRY_WAREHOUSE: "sqlite" })).toThrow(/one of duckdb, bigquery/);
  });
});

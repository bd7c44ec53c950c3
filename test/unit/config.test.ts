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

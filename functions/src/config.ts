/**
 * The only module that reads the environment (lint forbids `process.env` elsewhere).
 *
 * Deploy-time options (region, memory, timeout, concurrency, CORS) are firebase-functions params so
 * `firebase deploy` asks for them or reads them from `functions/.env.<project>`; runtime settings
 * are read once, validated, and frozen.
 */
import { defineInt, defineString } from "firebase-functions/params";

/** Region of the `api` function. */
export const REGION = defineString("QUARRY_REGION", { default: "us-central1" });
/** Memory of the `api` function in MiB (256, 512, 1024, 2048, 4096, …). */
export const MEMORY_MIB = defineInt("QUARRY_MEMORY_MIB", { default: 1024 });
/** Longest run in seconds (Cloud Functions v2 HTTPS allows up to 3600). */
export const TIMEOUT_SECONDS = defineInt("QUARRY_TIMEOUT_SECONDS", { default: 900 });
/** Concurrent requests per instance: runs mostly wait on the model, so several share one instance. */
export const CONCURRENCY = defineInt("QUARRY_CONCURRENCY", { default: 40 });
/** Comma-separated web origins allowed to call the function URL directly (CORS). */
export const CORS_ORIGINS = defineString("QUARRY_CORS_ORIGINS", {
  default: "http://127.0.0.1:5000,http://localhost:5000",
});

/** Raised when the environment cannot work; the message says what to set. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

export interface EmulatorHosts {
  firestore?: string;
  auth?: string;
  vertexAi?: string;
  bigQuery?: string;
}

export interface RuntimeConfig {
  /** Google Cloud / Firebase project id. */
  projectId: string;
  /** True inside firebase-tools' functions emulator. */
  inEmulator: boolean;
  emulators: EmulatorHosts;
  /** Root collection of thread metadata. */
  threadsCollection: string;
}

type Env = Record<string, string | undefined>;

/**
 * Checks that a function running in the emulator talks to a Firestore emulator. Without
 * FIRESTORE_EMULATOR_HOST the Admin SDK would try production Firestore and hang for minutes
 * looking for credentials, so this fails at load time instead, saying what to set.
 */
export function assertEmulatorEnvironment(env: Env): void {
  // firebase-tools' trigger discovery loads the code with a bare environment; only the runtime counts.
  if (env.FUNCTIONS_CONTROL_API === "true") return;
  if (env.FUNCTIONS_EMULATOR === "true" && !env.FIRESTORE_EMULATOR_HOST) {
    throw new ConfigError(
      "FIRESTORE_EMULATOR_HOST is not set in the functions emulator's environment. " +
        "Start the local stack with `npm start` (it starts the Firestore emulator and sets it), " +
        "or export FIRESTORE_EMULATOR_HOST=127.0.0.1:<port> of a running Firestore emulator.",
    );
  }
}

/** Reads and validates the runtime configuration from an environment (pure, for tests). */
export function readConfig(env: Env): RuntimeConfig {
  assertEmulatorEnvironment(env);
  const projectId = env.GCLOUD_PROJECT ?? env.GOOGLE_CLOUD_PROJECT ?? env.QUARRY_PROJECT_ID;
  if (!projectId) {
    throw new ConfigError(
      "No project id: set GOOGLE_CLOUD_PROJECT (Cloud Functions and the emulator set GCLOUD_PROJECT).",
    );
  }
  return Object.freeze({
    projectId,
    inEmulator: env.FUNCTIONS_EMULATOR === "true",
    emulators: Object.freeze({
      firestore: env.FIRESTORE_EMULATOR_HOST || undefined,
      auth: env.FIREBASE_AUTH_EMULATOR_HOST || undefined,
      vertexAi: env.VERTEX_AI_EMULATOR_HOST || undefined,
      bigQuery: env.BIGQUERY_EMULATOR_HOST || undefined,
    }),
    threadsCollection: env.QUARRY_THREADS_COLLECTION || "threads",
  });
}

let cached: RuntimeConfig | undefined;

/** The process's runtime configuration, read once. */
export function config(): RuntimeConfig {
  cached ??= readConfig(process.env);
  return cached;
}

/** Checked when the function entry loads so a bad local setup is reported at start, not as a hang. */
export function checkEnvironmentAtLoad(): void {
  assertEmulatorEnvironment(process.env);
}

/**
 * The only module that reads the environment (lint forbids `process.env` elsewhere).
 *
 * Deploy-time options (region, memory, timeout, concurrency, CORS) are firebase-functions params so
 * `firebase deploy` asks for them or reads them from `functions/.env.<project>`; runtime settings
 * are read once, validated, and frozen.
 */
import path from "node:path";
import { defineInt, defineSecret, defineString } from "firebase-functions/params";

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

/**
 * The Gemini Developer API key as a Cloud Secret Manager secret (`firebase functions:secrets:set
 * GEMINI_API_KEY`): Cloud Functions puts it in the environment, where `readConfig` finds it.
 */
const GEMINI_API_KEY = defineSecret("GEMINI_API_KEY");

/**
 * Secrets the `api` function mounts. The Gemini key is declared only for a deploy that chose it
 * (QUARRY_MODEL_PROVIDER=gemini in functions/.env.<project>): a declared secret makes every deploy
 * require it, and the functions emulator would try to fetch it from Secret Manager (it reads the
 * key from the shell environment instead).
 */
export function functionSecrets(env: Env = process.env): ReturnType<typeof defineSecret>[] {
  const deploying = env.FUNCTIONS_EMULATOR !== "true";
  return deploying && env.QUARRY_MODEL_PROVIDER === "gemini" ? [GEMINI_API_KEY] : [];
}

/** Raised when the environment cannot work; the message says what to set. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

interface EmulatorHosts {
  firestore?: string;
  auth?: string;
  vertexAi?: string;
  bigQuery?: string;
}

export interface WarehouseConfig {
  /** `duckdb` (embedded, local default) or `bigquery` (production). */
  engine: "duckdb" | "bigquery";
  bigquery: {
    /** Project that runs and pays for query jobs. */
    billingProject: string;
    /** Job location, e.g. `US` or `europe-west1`. */
    location: string;
    /** Allowed datasets as `project.dataset` (or `dataset` in the billing project). */
    datasets: string[];
    /** Largest dry-run estimate one query may have, bytes. */
    maxBytesPerQuery: number;
    /** Bytes one conversation (thread) may bill in total. */
    maxBytesPerThread: number;
    /** A job running longer is cancelled, ms. */
    timeoutMs: number;
    /** `http://host:port` of a BigQuery REST stand-in (from BIGQUERY_EMULATOR_HOST). */
    apiEndpoint?: string;
  };
  duckdb: {
    /** Database file; unset means the generated sample dataset. */
    path?: string;
    /** Extra tables from local CSV/Parquet files: table name → file path. */
    files: Record<string, string>;
    /** DuckDB's `memory_limit` per worker process, MiB (its buffer pool; also bounds the worker's address space). */
    memoryMiB: number;
    /** DuckDB threads per worker process. */
    threads: number;
    /** Worker processes that run DuckDB apart from the function (0: in the function's own process). */
    workers: number;
  };
  /** Rows kept for the client (table, chart, CSV). */
  maxRows: number;
  /** Rows the model sees. */
  previewRows: number;
  /** Characters of the preview the model sees. */
  previewChars: number;
  /** Characters of the full result kept for the client. */
  maxResultChars: number;
}

/** The model services Quarry can use (one module each in `agent/model/`). */
export type ModelProvider = "vertex" | "gemini" | "openai";
const MODEL_PROVIDERS: readonly ModelProvider[] = ["vertex", "gemini", "openai"];

export interface ModelConfig {
  /** QUARRY_MODEL_PROVIDER; unset = chosen from what is configured (see `agent/model/choose.ts`). */
  provider?: ModelProvider;
  /** QUARRY_MODEL; unset = the provider's default (Gemini: gemini-2.5-flash; an OpenAI-compatible server has none). */
  model?: string;
  /** QUARRY_EMBEDDING_MODEL: an embedding model of the same provider for schema linking; unset = lexical only. */
  embeddingModel?: string;
  /** Vertex AI project (defaults to the Firebase project). */
  project: string;
  /** Vertex AI location. */
  location: string;
  /** `host:port` of a local Vertex AI stand-in (VERTEX_AI_EMULATOR_HOST). */
  emulatorHost?: string;
  temperature: number;
  /** Service-account key file for Google APIs (GOOGLE_APPLICATION_CREDENTIALS), if any. */
  credentialsFile?: string;
  /** Running on Google Cloud (Cloud Functions/Run set K_SERVICE), where the metadata server has credentials. */
  onGoogleCloud: boolean;
  /** Gemini Developer API key (GEMINI_API_KEY, or GOOGLE_API_KEY); deployed as a secret. */
  geminiApiKey?: string;
  /** Base URL of the Gemini Developer API (QUARRY_GEMINI_BASE_URL), for a gateway or a local stand-in. */
  geminiBaseUrl?: string;
  /** Base URL of an OpenAI-compatible server, e.g. `http://127.0.0.1:11434/v1` (QUARRY_OPENAI_BASE_URL). */
  openaiBaseUrl?: string;
  /** Key for that server, if it wants one (QUARRY_OPENAI_API_KEY); local servers usually do not. */
  openaiApiKey?: string;
}

export interface AgentConfig {
  /** Re-plans after an error or empty result before the generator explains what failed. */
  maxRetries: number;
  /** Hard cap on model calls in one turn. */
  maxModelCalls: number;
  /** History above this many (estimated) tokens is summarized. */
  contextTokenBudget: number;
  /** Ask the model whether a non-empty result answers the question. */
  adequacyCheck: boolean;
  /** Let the planner ask the user one clarifying question per turn (`ask_user`); on unless false. */
  clarify?: boolean;
}

interface AccessConfig {
  /** Domains whose verified addresses are members (QUARRY_ALLOWED_DOMAINS), lower case. */
  allowedDomains: string[];
  /** Emails that are admins from the start (QUARRY_ADMINS), lower case. */
  admins: string[];
  /** Whom a refused person should ask: an email or a URL (QUARRY_ACCESS_CONTACT). */
  contact?: string;
  /** QUARRY_ACCESS_POLICY=local-open inside the emulator: every account of the Auth emulator may use it. */
  localOpen: boolean;
  /** Why a setting cannot be used (local-open outside the emulator): refused, with these words. */
  problem?: string;
  /** Members and roles are cached this long per instance (QUARRY_ACCESS_CACHE_SECONDS, at most 60). */
  cacheMs: number;
  /** Default quotas (QUARRY_QUOTA_*), per person; an admin can override them per member. */
  quotas: { questionsPerMinute: number; bytesPerDay: number; tokensPerDay: number };
  /** The questions quota's sliding window (QUARRY_QUOTA_WINDOW_SECONDS, 60: "per minute"; tests lengthen it). */
  questionWindowMs: number;
  /** Audit entries are kept this long (QUARRY_AUDIT_TTL_DAYS; a Firestore TTL policy on `expireAt`). */
  auditTtlDays: number;
}

export interface RuntimeConfig {
  /** Folder of authored context files (`*.yaml`), deployed with the function. */
  contextDir: string;
  /** The schema catalog is rebuilt from warehouse metadata when older than this, minutes. */
  catalogMaxAgeMinutes: number;
  /** Firestore collection that shares the catalog across instances. */
  catalogsCollection: string;
  /** Firestore collection of answer feedback (server-side only). */
  feedbackCollection: string;
  /** Google Cloud / Firebase project id. */
  projectId: string;
  /** True inside firebase-tools' functions emulator. */
  inEmulator: boolean;
  emulators: EmulatorHosts;
  /** Root collection of thread metadata. */
  threadsCollection: string;
  /** Root collection of the FirestoreCheckpointer. */
  checkpointsCollection: string;
  /** Days after which checkpoint documents expire (Firestore TTL field); 0 = never. */
  checkpointTtlDays: number;
  /** A run's event log (for rejoining its stream) is kept this long (`expireAt`, a TTL policy). */
  runLogTtlHours: number;
  /** Keep the event log at all (QUARRY_RUN_LOG=off: streams cannot be rejoined; for comparison). */
  runLog: boolean;
  /** A run's lease on its thread; renewed every third of it, so a crashed run frees the thread this fast. */
  runLeaseSeconds: number;
  /** The API's public base URL (the function URL), for the web client. */
  apiUrl: string;
  /** Region of the function (for the default apiUrl). */
  region: string;
  warehouse: WarehouseConfig;
  model: ModelConfig;
  agent: AgentConfig;
  access: AccessConfig;
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
    // functions/src/config.ts and functions/lib/config.js both sit one level below functions/.
    contextDir: env.QUARRY_CONTEXT_DIR || path.resolve(__dirname, "..", "context"),
    catalogMaxAgeMinutes: int(env, "QUARRY_CATALOG_MAX_AGE_MINUTES", 60),
    catalogsCollection: env.QUARRY_CATALOGS_COLLECTION || "catalogs",
    feedbackCollection: env.QUARRY_FEEDBACK_COLLECTION || "feedback",
    projectId,
    inEmulator: env.FUNCTIONS_EMULATOR === "true",
    emulators: Object.freeze({
      firestore: env.FIRESTORE_EMULATOR_HOST || undefined,
      auth: env.FIREBASE_AUTH_EMULATOR_HOST || undefined,
      vertexAi: env.VERTEX_AI_EMULATOR_HOST || undefined,
      bigQuery: env.BIGQUERY_EMULATOR_HOST || undefined,
    }),
    threadsCollection: env.QUARRY_THREADS_COLLECTION || "threads",
    checkpointsCollection: env.QUARRY_CHECKPOINTS_COLLECTION || "checkpoints",
    checkpointTtlDays: int(env, "QUARRY_CHECKPOINT_TTL_DAYS", 0),
    runLogTtlHours: int(env, "QUARRY_RUN_LOG_TTL_HOURS", 24),
    runLog: env.QUARRY_RUN_LOG !== "off",
    runLeaseSeconds: int(env, "QUARRY_RUN_LEASE_SECONDS", 60),
    region: env.QUARRY_REGION || "us-central1",
    apiUrl:
      env.QUARRY_API_URL ||
      `https://${env.QUARRY_REGION || "us-central1"}-${projectId}.cloudfunctions.net/api`,
    warehouse: {
      engine: oneOf(env, "QUARRY_WAREHOUSE", ["duckdb", "bigquery"], "duckdb"),
      bigquery: {
        billingProject: env.QUARRY_BQ_PROJECT || projectId,
        location: env.QUARRY_BQ_LOCATION || "US",
        datasets: list(env.QUARRY_BQ_DATASETS),
        maxBytesPerQuery: int(env, "QUARRY_MAX_BYTES_PER_QUERY", 1_000_000_000),
        maxBytesPerThread: int(env, "QUARRY_MAX_BYTES_PER_THREAD", 10_000_000_000),
        timeoutMs: int(env, "QUARRY_QUERY_TIMEOUT_MS", 60_000),
        apiEndpoint: env.BIGQUERY_EMULATOR_HOST ? `http://${env.BIGQUERY_EMULATOR_HOST}` : undefined,
      },
      duckdb: duckdbConfig(env),
      maxRows: int(env, "QUARRY_MAX_ROWS", 10_000),
      previewRows: int(env, "QUARRY_PREVIEW_ROWS", 50),
      previewChars: int(env, "QUARRY_PREVIEW_CHARS", 8_000),
      maxResultChars: int(env, "QUARRY_MAX_RESULT_CHARS", 2_000_000),
    },
    model: {
      provider: env.QUARRY_MODEL_PROVIDER
        ? oneOf(env, "QUARRY_MODEL_PROVIDER", MODEL_PROVIDERS, "vertex")
        : undefined,
      model: env.QUARRY_MODEL?.trim() || undefined,
      embeddingModel: env.QUARRY_EMBEDDING_MODEL?.trim() || undefined,
      project: env.QUARRY_VERTEX_PROJECT || env.GOOGLE_CLOUD_PROJECT || projectId,
      location: env.QUARRY_VERTEX_LOCATION || "us-central1",
      emulatorHost: env.VERTEX_AI_EMULATOR_HOST || undefined,
      temperature: num(env, "QUARRY_TEMPERATURE", 0),
      credentialsFile: env.GOOGLE_APPLICATION_CREDENTIALS || undefined,
      onGoogleCloud: Boolean(env.K_SERVICE) && env.FUNCTIONS_EMULATOR !== "true",
      geminiApiKey: env.GEMINI_API_KEY?.trim() || env.GOOGLE_API_KEY?.trim() || undefined,
      geminiBaseUrl: env.QUARRY_GEMINI_BASE_URL?.trim() || undefined,
      openaiBaseUrl: env.QUARRY_OPENAI_BASE_URL?.trim() || undefined,
      openaiApiKey: env.QUARRY_OPENAI_API_KEY?.trim() || undefined,
    },
    access: accessConfig(env),
    agent: {
      maxRetries: int(env, "QUARRY_MAX_RETRIES", 2),
      maxModelCalls: int(env, "QUARRY_MAX_MODEL_CALLS", 8),
      contextTokenBudget: int(env, "QUARRY_CONTEXT_TOKEN_BUDGET", 24_000),
      adequacyCheck: env.QUARRY_ADEQUACY_CHECK === "true",
      clarify: env.QUARRY_CLARIFY !== "false",
    },
  });
}

function duckdbConfig(env: Env): WarehouseConfig["duckdb"] {
  return {
    path: env.QUARRY_DUCKDB_PATH || undefined,
    files: pairs(env.QUARRY_DUCKDB_FILES),
    // A quarter of the function's memory by default: the function's own heap and its runs need the rest.
    memoryMiB: bounded(
      env,
      "QUARRY_DUCKDB_MEMORY_MIB",
      Math.floor(int(env, "QUARRY_MEMORY_MIB", 1024) / 4),
      64,
      65_536,
    ),
    threads: bounded(env, "QUARRY_DUCKDB_THREADS", 1, 1, 64),
    workers: bounded(env, "QUARRY_DUCKDB_WORKERS", 2, 0, 16),
  };
}

function accessConfig(env: Env): AccessConfig {
  const inEmulator = env.FUNCTIONS_EMULATOR === "true";
  const policy = env.QUARRY_ACCESS_POLICY?.trim() || undefined;
  if (policy && policy !== "local-open") {
    throw new ConfigError(
      `QUARRY_ACCESS_POLICY can only be "local-open" (the emulator stack's), got "${policy}".`,
    );
  }
  const cacheSeconds = int(env, "QUARRY_ACCESS_CACHE_SECONDS", 30);
  if (cacheSeconds > 60) {
    throw new ConfigError(
      `QUARRY_ACCESS_CACHE_SECONDS must be at most 60 (a removed member must lose access within a minute), got ${cacheSeconds}.`,
    );
  }
  return {
    allowedDomains: list(env.QUARRY_ALLOWED_DOMAINS).map((d) => d.toLowerCase().replace(/^@/, "")),
    admins: list(env.QUARRY_ADMINS).map((e) => e.toLowerCase()),
    contact: env.QUARRY_ACCESS_CONTACT?.trim() || undefined,
    localOpen: policy === "local-open" && inEmulator,
    ...(policy === "local-open" && !inEmulator
      ? {
          problem:
            "QUARRY_ACCESS_POLICY=local-open only works in the local emulator stack; a deployed Quarry needs " +
            "QUARRY_ALLOWED_DOMAINS and/or QUARRY_ADMINS instead.",
        }
      : {}),
    cacheMs: cacheSeconds * 1000,
    quotas: {
      questionsPerMinute: int(env, "QUARRY_QUOTA_QUESTIONS_PER_MINUTE", 10),
      bytesPerDay: int(env, "QUARRY_QUOTA_BYTES_PER_DAY", 100_000_000_000),
      tokensPerDay: int(env, "QUARRY_QUOTA_TOKENS_PER_DAY", 2_000_000),
    },
    questionWindowMs: int(env, "QUARRY_QUOTA_WINDOW_SECONDS", 60) * 1000,
    auditTtlDays: int(env, "QUARRY_AUDIT_TTL_DAYS", 400),
  };
}

function num(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) {
    throw new ConfigError(`${name} must be a non-negative number, got "${raw}".`);
  }
  return n;
}

function int(env: Env, name: string, fallback: number): number {
  const n = num(env, name, fallback);
  if (!Number.isInteger(n)) throw new ConfigError(`${name} must be a whole number, got "${env[name]}".`);
  return n;
}

function bounded(env: Env, name: string, fallback: number, min: number, max: number): number {
  const n = int(env, name, fallback);
  if (n < min || n > max)
    throw new ConfigError(`${name} must be between ${min} and ${max}, got "${env[name]}".`);
  return n;
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(`${name} must be one of ${allowed.join(", ")}, got "${raw}".`);
  }
  return raw as T;
}

function list(raw: string | undefined): string[] {
  return (raw ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

/** `name=path,name2=path2` → { name: path, name2: path2 }. */
function pairs(raw: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of list(raw)) {
    const eq = item.indexOf("=");
    if (eq <= 0) throw new ConfigError(`QUARRY_DUCKDB_FILES entries look like table=path, got "${item}".`);
    out[item.slice(0, eq).trim()] = item.slice(eq + 1).trim();
  }
  return out;
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

/**
 * True while firebase-tools only discovers the functions (deploy, or the emulator before it
 * starts them): the code is loaded with a bare environment and serves nothing, so nothing about
 * the runtime configuration should be reported then.
 */
export function isDiscoveryPass(): boolean {
  return process.env.FUNCTIONS_CONTROL_API === "true";
}

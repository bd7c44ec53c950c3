/**
 * Quarry's settings. The only code that reads the environment (lint forbids `process.env`
 * elsewhere): each setting is declared once, by concern, in this folder — `deploy.ts` (firebase
 * params), `model.ts`, `warehouse.ts`, `access.ts`, `agent.ts`, `runs.ts`, `context.ts`,
 * `platform.ts`, `tooling.ts` (read outside the function) — with its type, default, bounds and
 * description (`define.ts`); `settings.ts` lists them all for the configuration page. Runtime
 * settings are read once, validated, and frozen.
 */
import { readAccessConfig, type AccessConfig } from "./access";
import { readAgentConfig, type AgentConfig } from "./agent";
import { readChatConfig, type ChatConfig } from "./chat";
import { readContextConfig, type ContextConfig } from "./context";
import { readIdentityConfig, type IdentityConfig } from "./identity";
import type { Env } from "./define";
import { readModelConfig, type ModelConfig } from "./model";
import { readOAuthConfig, type OAuthConfig } from "./oauth";
import { assertEmulatorEnvironment, readPlatformConfig, type PlatformConfig } from "./platform";
import { readRunsConfig, watchdogRetryOf, type RunsConfig } from "./runs";
import { DEPLOY_SETTINGS } from "./deploy";
import { readSchedulesConfig, scheduleTickCadence, type SchedulesConfig } from "./schedules";
import { readUploadsConfig, type UploadsConfig } from "./uploads";
import { readWarehouseConfig, type WarehouseConfig } from "./warehouse";

export { ConfigError } from "./define";
export { CONCURRENCY, CORS_ORIGINS, MEMORY_MIB, REGION, TIMEOUT_SECONDS, functionSecrets } from "./deploy";
export type { AgentConfig } from "./agent";
export type { IdentityConfig } from "./identity";
export type { ModelConfig, ModelProvider } from "./model";
export type { UploadsConfig } from "./uploads";
export type { WarehouseConfig } from "./warehouse";
export { assertEmulatorEnvironment };

export interface RuntimeConfig extends ContextConfig, PlatformConfig, RunsConfig {
  warehouse: WarehouseConfig;
  model: ModelConfig;
  agent: AgentConfig;
  access: AccessConfig;
  /** Whose credentials BigQuery calls use, and the OAuth client for the person's own. */
  identity: IdentityConfig;
  /** OAuth 2.1 for hosted MCP clients: the authorization server and its tokens. */
  oauth: OAuthConfig;
  /** Files brought into a conversation as tables. */
  uploads: UploadsConfig;
  /** Scheduled questions, their alerts and delivery. */
  schedules: SchedulesConfig;
  /** The chat channels: the Slack app, connect links. */
  chat: ChatConfig;
}

/** Reads and validates the runtime configuration from an environment (pure, for tests). */
export function readConfig(env: Env): RuntimeConfig {
  assertEmulatorEnvironment(env);
  const platform = readPlatformConfig(env);
  return Object.freeze({
    ...readContextConfig(env),
    ...platform,
    ...readRunsConfig(env),
    warehouse: readWarehouseConfig(env, platform.projectId),
    model: readModelConfig(env, platform.projectId),
    access: readAccessConfig(env),
    agent: readAgentConfig(env),
    identity: readIdentityConfig(env, platform.apiUrl),
    oauth: readOAuthConfig(env, platform.apiUrl, platform.inEmulator),
    uploads: readUploadsConfig(env),
    schedules: readSchedulesConfig(env),
    chat: readChatConfig(env),
  });
}

let cached: RuntimeConfig | undefined;

/** The process's runtime configuration, read once. */
export function config(): RuntimeConfig {
  cached ??= readConfig(process.env);
  return cached;
}

/** The `scheduleTick` function's cadence (`every N minutes`), read when the entry loads. */
export function scheduleTick(): string {
  return scheduleTickCadence(process.env);
}

/** The run watchdog queue's retries (`runWatchdog`), read when the entry loads. */
export function watchdogRetry() {
  return watchdogRetryOf(process.env, DEPLOY_SETTINGS.timeoutSeconds.read(process.env));
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

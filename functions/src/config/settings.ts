/**
 * Every setting Quarry reads, in the order the configuration page lists them. The page
 * (`docs/configuration.md`) is generated from this list (`npm run docs`) and checked against it.
 */
import { ACCESS_DOCS } from "./access";
import { AGENT_DOCS } from "./agent";
import { CHAT_DOCS } from "./chat";
import { CONTEXT_DOCS } from "./context";
import type { SettingDoc } from "./define";
import { DEPLOY_DOCS } from "./deploy";
import { IDENTITY_DOCS } from "./identity";
import { MODEL_DOCS } from "./model";
import { OAUTH_DOCS } from "./oauth";
import { PLATFORM_DOCS } from "./platform";
import { RUNS_DOCS } from "./runs";
import { SCHEDULES_DOCS } from "./schedules";
import { TOOLING_DOCS } from "./tooling";
import { UPLOADS_DOCS } from "./uploads";
import { WAREHOUSE_DOCS } from "./warehouse";

export type { SettingDoc } from "./define";

/** All declared settings, by concern. */
export const SETTINGS: readonly SettingDoc[] = [
  ...DEPLOY_DOCS,
  ...MODEL_DOCS,
  ...WAREHOUSE_DOCS,
  ...UPLOADS_DOCS,
  ...ACCESS_DOCS,
  ...IDENTITY_DOCS,
  ...OAUTH_DOCS,
  ...AGENT_DOCS,
  ...RUNS_DOCS,
  ...SCHEDULES_DOCS,
  ...CHAT_DOCS,
  ...CONTEXT_DOCS,
  ...PLATFORM_DOCS,
  ...TOOLING_DOCS,
];
